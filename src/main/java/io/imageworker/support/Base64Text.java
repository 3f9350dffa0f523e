package io.imageworker.support;

/**
 * The characters of base64 text as the worker takes it, in a gateway's answer or a request's reference: the standard
 * alphabet, its padding, and the white space a MIME decoder skips.
 */
public final class Base64Text {

    private Base64Text() {}

    /** Whether {@code c} may stand in base64 text: A-Z, a-z, 0-9, '+', '/', '=', space, tab, CR or LF. */
    public static boolean allowed(int c) {
        return c >= 'A' && c <= 'Z'
                || c >= 'a' && c <= 'z'
                || c >= '0' && c <= '9'
                || c == '+'
                || c == '/'
                || c == '='
                || c == ' '
                || c == '\t'
                || c == '\r'
                || c == '\n';
    }
}
