package io.imageworker.gateway;

import com.fasterxml.jackson.core.Base64Variant;
import com.fasterxml.jackson.core.Base64Variants;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Base64;

/**
 * Decodes the base64 string value a streaming parser stands on, straight from the JSON body's bytes: no
 * {@code String}, no regular expression, one array of exactly the decoded size.
 *
 * <p>The parser has read only the opening quote of the value (Jackson reads a string's contents lazily), so the
 * value's bytes are found from the token's offset: one pass checks every byte is base64 (or white space) and finds the
 * closing quote, then the JDK's decoder turns that range into the image. Two shapes take another road: a JSON escape
 * inside the value ({@code \/} from some encoders, {@code \n} from line-broken base64), which Jackson's own binary read
 * unescapes as it decodes; and a {@code data:image/png;base64,} prefix, which is skipped.
 */
final class Base64Field {

    /** Jackson's decoder for the escaped case: standard alphabet, padding optional (the JDK's decoder agrees). */
    private static final Base64Variant LENIENT =
            Base64Variants.MIME_NO_LINEFEEDS.withReadPadding(Base64Variant.PaddingReadBehaviour.PADDING_ALLOWED);

    private static final boolean[] ALPHABET = new boolean[256];

    static {
        for (char c : "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=".toCharArray()) {
            ALPHABET[c] = true;
        }
    }

    private Base64Field() {}

    /**
     * The bytes the current {@code VALUE_STRING} token encodes.
     *
     * @param parser a parser over {@code body}, created on the whole array, standing on a string value
     * @throws InvalidBase64 when the value is not base64
     * @throws IOException when the JSON is broken
     */
    static byte[] decode(JsonParser parser, byte[] body) throws IOException {
        long offset = parser.currentTokenLocation().getByteOffset();
        if (offset < 0 || offset >= body.length || body[(int) offset] != '"') {
            return viaParser(parser);
        }
        int start = skipDataUriPrefix(body, (int) offset + 1);
        boolean whiteSpace = false;
        int end = start;
        for (; end < body.length; end++) {
            int b = body[end] & 0xff;
            if (b == '"') {
                break;
            }
            if (b == '\\') {
                return viaParser(parser);
            }
            if (b == ' ' || b == '\t' || b == '\r' || b == '\n') {
                whiteSpace = true;
            } else if (!ALPHABET[b]) {
                throw new InvalidBase64();
            }
        }
        if (end == body.length) {
            throw new JsonParseException(parser, "the answer ends inside a string");
        }
        try {
            // Exactly sized: both decoders count the output before they allocate it.
            ByteBuffer decoded = (whiteSpace ? Base64.getMimeDecoder() : Base64.getDecoder())
                    .decode(ByteBuffer.wrap(body, start, end - start));
            byte[] array = decoded.array();
            return decoded.remaining() == array.length
                    ? array
                    : java.util.Arrays.copyOfRange(array, decoded.position(), decoded.limit());
        } catch (IllegalArgumentException e) {
            throw new InvalidBase64();
        }
    }

    private static byte[] viaParser(JsonParser parser) throws IOException {
        try {
            return parser.getBinaryValue(LENIENT);
        } catch (JsonParseException | IllegalArgumentException e) {
            throw new InvalidBase64();
        }
    }

    /** The index after {@code data:<type>;base64,} when the value starts with one, else {@code start}. */
    private static int skipDataUriPrefix(byte[] body, int start) {
        if (body.length - start < 5
                || body[start] != 'd'
                || body[start + 1] != 'a'
                || body[start + 2] != 't'
                || body[start + 3] != 'a'
                || body[start + 4] != ':') {
            return start;
        }
        for (int i = start + 5; i < body.length && body[i] != '"'; i++) {
            if (body[i] == ',') {
                return i + 1;
            }
        }
        return start;
    }

    /** The value is not base64. */
    static final class InvalidBase64 extends IOException {
        InvalidBase64() {
            super("not base64", null);
        }
    }
}
