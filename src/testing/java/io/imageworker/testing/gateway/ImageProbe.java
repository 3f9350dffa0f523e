package io.imageworker.testing.gateway;

import java.util.Locale;

/** Real image type from magic bytes, pixel size from the headers, and the type new-api derives from a filename. */
final class ImageProbe {

    static final String PNG = "image/png";
    static final String JPEG = "image/jpeg";
    static final String WEBP = "image/webp";
    static final String GIF = "image/gif";
    static final String UNKNOWN = "application/octet-stream";

    private ImageProbe() {}

    /** The type the bytes really are. */
    static String realType(byte[] b) {
        if (startsWith(b, 0, 0x89, 'P', 'N', 'G')) {
            return PNG;
        }
        if (startsWith(b, 0, 0xFF, 0xD8, 0xFF)) {
            return JPEG;
        }
        if (startsWith(b, 0, 'R', 'I', 'F', 'F') && startsWith(b, 8, 'W', 'E', 'B', 'P')) {
            return WEBP;
        }
        if (startsWith(b, 0, 'G', 'I', 'F', '8')) {
            return GIF;
        }
        return UNKNOWN;
    }

    /**
     * The type new-api's {@code detectImageMimeType} tells upstream, from the filename extension only: {@code .jp*}
     * is JPEG, {@code .webp} WebP, anything else (or none) PNG (gateway contract §4).
     */
    static String extensionType(String filename) {
        String name = filename == null ? "" : filename.toLowerCase(Locale.ROOT);
        int dot = name.lastIndexOf('.');
        String ext = dot < 0 ? "" : name.substring(dot + 1);
        if (ext.startsWith("jp")) {
            return JPEG;
        }
        if (ext.equals("webp")) {
            return WEBP;
        }
        return PNG;
    }

    /** {@code {width, height}} when the header is readable, else {@code null}. */
    static int[] dimensions(byte[] b) {
        try {
            return switch (realType(b)) {
                case PNG ->
                    b.length >= 24 && startsWith(b, 12, 'I', 'H', 'D', 'R')
                            ? new int[] {(int) be32(b, 16), (int) be32(b, 20)}
                            : null;
                case GIF -> b.length >= 10 ? new int[] {le16(b, 6), le16(b, 8)} : null;
                case JPEG -> jpeg(b);
                case WEBP -> webp(b);
                default -> null;
            };
        } catch (ArrayIndexOutOfBoundsException truncated) {
            return null;
        }
    }

    private static int[] jpeg(byte[] b) {
        int i = 2;
        while (i + 9 < b.length) {
            if ((b[i] & 0xFF) != 0xFF) {
                return null;
            }
            int marker = b[i + 1] & 0xFF;
            if (marker == 0xFF) {
                i++;
                continue;
            }
            if (marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8)) {
                i += 2;
                continue;
            }
            int length = be16(b, i + 2);
            boolean startOfFrame =
                    marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC;
            if (startOfFrame) {
                return new int[] {be16(b, i + 7), be16(b, i + 5)};
            }
            i += 2 + length;
        }
        return null;
    }

    private static int[] webp(byte[] b) {
        if (startsWith(b, 12, 'V', 'P', '8', ' ') && b.length >= 30) {
            return new int[] {le16(b, 26) & 0x3FFF, le16(b, 28) & 0x3FFF};
        }
        if (startsWith(b, 12, 'V', 'P', '8', 'L') && b.length >= 25 && (b[20] & 0xFF) == 0x2F) {
            long bits = (b[21] & 0xFFL) | (b[22] & 0xFFL) << 8 | (b[23] & 0xFFL) << 16 | (b[24] & 0xFFL) << 24;
            return new int[] {(int) (bits & 0x3FFF) + 1, (int) ((bits >> 14) & 0x3FFF) + 1};
        }
        if (startsWith(b, 12, 'V', 'P', '8', 'X') && b.length >= 30) {
            return new int[] {le24(b, 24) + 1, le24(b, 27) + 1};
        }
        return null;
    }

    private static boolean startsWith(byte[] b, int offset, int... expected) {
        if (b.length < offset + expected.length) {
            return false;
        }
        for (int i = 0; i < expected.length; i++) {
            if ((b[offset + i] & 0xFF) != expected[i]) {
                return false;
            }
        }
        return true;
    }

    private static long be32(byte[] b, int i) {
        return (b[i] & 0xFFL) << 24 | (b[i + 1] & 0xFFL) << 16 | (b[i + 2] & 0xFFL) << 8 | (b[i + 3] & 0xFFL);
    }

    private static int be16(byte[] b, int i) {
        return (b[i] & 0xFF) << 8 | (b[i + 1] & 0xFF);
    }

    private static int le16(byte[] b, int i) {
        return (b[i] & 0xFF) | (b[i + 1] & 0xFF) << 8;
    }

    private static int le24(byte[] b, int i) {
        return (b[i] & 0xFF) | (b[i + 1] & 0xFF) << 8 | (b[i + 2] & 0xFF) << 16;
    }
}
