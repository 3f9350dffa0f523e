package io.imageworker.gateway;

import com.fasterxml.jackson.core.Base64Variant;
import com.fasterxml.jackson.core.Base64Variants;
import com.fasterxml.jackson.core.JsonParseException;
import com.fasterxml.jackson.core.JsonParser;
import io.imageworker.support.Base64Text;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Base64;

/**
 * Decodes the base64 string value a streaming parser stands on, straight from the JSON body's bytes: no
 * {@code String}, no regular expression, one array of exactly the decoded size.
 *
 * <p>The parser has read only the opening quote of the value (Jackson reads a string's contents lazily), so the
 * value's bytes are found from the token's offset: the closing quote is searched eight bytes at a time, and the JDK's
 * decoder turns the range into the image, refusing any byte that is not base64 as it goes. Three shapes take another
 * road: a JSON escape inside the value ({@code \/} from some encoders, {@code \n} from line-broken base64), which
 * Jackson's own binary read unescapes as it decodes; white space inside the value, which the JDK's MIME decoder skips;
 * and a {@code data:image/png;base64,} prefix, which is skipped.
 */
final class Base64Field {

    /** Jackson's decoder for the escaped case: standard alphabet, padding optional (the JDK's decoder agrees). */
    private static final Base64Variant LENIENT =
            Base64Variants.MIME_NO_LINEFEEDS.withReadPadding(Base64Variant.PaddingReadBehaviour.PADDING_ALLOWED);

    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final long QUOTES = 0x2222222222222222L;
    private static final long BACKSLASHES = 0x5C5C5C5C5C5C5C5CL;
    private static final long LOW_BITS = 0x0101010101010101L;
    private static final long HIGH_BITS = 0x8080808080808080L;

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
        int end = closingQuoteOrEscape(body, start);
        if (end == body.length) {
            throw new JsonParseException(parser, "the answer ends inside a string");
        }
        if (body[end] == '\\') {
            return viaParser(parser);
        }
        ByteBuffer range = ByteBuffer.wrap(body, start, end - start);
        try {
            return exactly(Base64.getDecoder().decode(range));
        } catch (IllegalArgumentException notPlain) {
            // Line-broken or spaced base64 (rare): the MIME decoder skips white space; anything else is refused.
            if (!onlyBase64AndWhiteSpace(body, start, end)) {
                throw new InvalidBase64();
            }
            try {
                return exactly(Base64.getMimeDecoder().decode(ByteBuffer.wrap(body, start, end - start)));
            } catch (IllegalArgumentException e) {
                throw new InvalidBase64();
            }
        }
    }

    /** Both JDK decoders count their output before they allocate it: the array is exactly the image. */
    private static byte[] exactly(ByteBuffer decoded) {
        byte[] array = decoded.array();
        return decoded.remaining() == array.length
                ? array
                : Arrays.copyOfRange(array, decoded.position(), decoded.limit());
    }

    /**
     * The index of the first {@code "} or {@code \\} at or after {@code from}, or {@code body.length}: eight bytes at a
     * time, a byte equal to one of them found with the usual "has a zero byte" arithmetic.
     */
    private static int closingQuoteOrEscape(byte[] body, int from) {
        int i = from;
        for (; i + Long.BYTES <= body.length; i += Long.BYTES) {
            long word = (long) LONGS.get(body, i);
            long quotes = word ^ QUOTES;
            long backslashes = word ^ BACKSLASHES;
            long found =
                    (quotes - LOW_BITS) & ~quotes & HIGH_BITS | (backslashes - LOW_BITS) & ~backslashes & HIGH_BITS;
            if (found != 0) {
                return i + (Long.numberOfTrailingZeros(found) >>> 3);
            }
        }
        for (; i < body.length; i++) {
            if (body[i] == '"' || body[i] == '\\') {
                return i;
            }
        }
        return body.length;
    }

    private static boolean onlyBase64AndWhiteSpace(byte[] body, int start, int end) {
        for (int i = start; i < end; i++) {
            if (!Base64Text.allowed(body[i])) {
                return false;
            }
        }
        return true;
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
