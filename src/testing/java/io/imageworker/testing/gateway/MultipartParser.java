package io.imageworker.testing.gateway;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A strict {@code multipart/form-data} reader, like Go's {@code ParseMultipartForm}: a body whose boundary does not
 * match the {@code Content-Type}, or that ends before its closing delimiter, cannot be parsed at all.
 */
final class MultipartParser {

    /** One part; {@code filename} is {@code null} for a text field. */
    record Part(String name, String filename, String contentType, byte[] data) {
        boolean isFile() {
            return filename != null;
        }

        String text() {
            return new String(data, StandardCharsets.UTF_8);
        }
    }

    private MultipartParser() {}

    /** The parts in order, or empty when the body cannot be parsed with the boundary of {@code contentType}. */
    static Optional<List<Part>> parse(String contentType, byte[] body) {
        Optional<String> boundary = boundary(contentType);
        if (boundary.isEmpty()) {
            return Optional.empty();
        }
        byte[] delimiter = ("--" + boundary.get()).getBytes(StandardCharsets.ISO_8859_1);
        byte[] nextDelimiter = ("\r\n--" + boundary.get()).getBytes(StandardCharsets.ISO_8859_1);
        int start = indexOf(body, delimiter, 0);
        if (start < 0 || (start > 0 && !precededByLineBreak(body, start))) {
            return Optional.empty();
        }
        List<Part> parts = new ArrayList<>();
        int pos = start + delimiter.length;
        while (true) {
            if (startsWith(body, pos, "--")) {
                return Optional.of(parts);
            }
            if (!startsWith(body, pos, "\r\n")) {
                return Optional.empty();
            }
            pos += 2;
            int headersEnd = indexOf(body, "\r\n\r\n".getBytes(StandardCharsets.ISO_8859_1), pos);
            if (headersEnd < 0) {
                return Optional.empty();
            }
            Map<String, String> headers = headers(new String(body, pos, headersEnd - pos, StandardCharsets.UTF_8));
            int dataStart = headersEnd + 4;
            int dataEnd = indexOf(body, nextDelimiter, dataStart);
            if (dataEnd < 0) {
                return Optional.empty();
            }
            Map<String, String> disposition = dispositionParams(headers.getOrDefault("content-disposition", ""));
            String name = disposition.get("name");
            if (name != null) {
                parts.add(new Part(
                        name,
                        disposition.get("filename"),
                        headers.get("content-type"),
                        Arrays.copyOfRange(body, dataStart, dataEnd)));
            }
            pos = dataEnd + nextDelimiter.length;
        }
    }

    /** The {@code boundary} parameter of a {@code multipart/form-data} content type. */
    static Optional<String> boundary(String contentType) {
        if (contentType == null || !contentType.toLowerCase(Locale.ROOT).startsWith("multipart/form-data")) {
            return Optional.empty();
        }
        for (Map.Entry<String, String> param : params(contentType).entrySet()) {
            if (param.getKey().equals("boundary") && !param.getValue().isEmpty()) {
                return Optional.of(param.getValue());
            }
        }
        return Optional.empty();
    }

    private static Map<String, String> headers(String block) {
        Map<String, String> headers = new LinkedHashMap<>();
        for (String line : block.split("\r\n")) {
            int colon = line.indexOf(':');
            if (colon > 0) {
                headers.put(
                        line.substring(0, colon).trim().toLowerCase(Locale.ROOT),
                        line.substring(colon + 1).trim());
            }
        }
        return headers;
    }

    private static Map<String, String> dispositionParams(String value) {
        if (!value.toLowerCase(Locale.ROOT).startsWith("form-data")) {
            return Map.of();
        }
        return params(value);
    }

    /** {@code key=value} and {@code key="quoted \" value"} parameters after the first {@code ;}. */
    private static Map<String, String> params(String header) {
        Map<String, String> params = new LinkedHashMap<>();
        int i = header.indexOf(';');
        while (i >= 0 && i < header.length()) {
            i++;
            while (i < header.length() && header.charAt(i) == ' ') {
                i++;
            }
            int eq = header.indexOf('=', i);
            if (eq < 0) {
                break;
            }
            String key = header.substring(i, eq).trim().toLowerCase(Locale.ROOT);
            StringBuilder value = new StringBuilder();
            int j = eq + 1;
            if (j < header.length() && header.charAt(j) == '"') {
                j++;
                while (j < header.length() && header.charAt(j) != '"') {
                    char c = header.charAt(j);
                    if (c == '\\' && j + 1 < header.length()) {
                        j++;
                        c = header.charAt(j);
                    }
                    value.append(c);
                    j++;
                }
                j = header.indexOf(';', j);
            } else {
                int end = header.indexOf(';', j);
                value.append(header, j, end < 0 ? header.length() : end);
                j = end;
            }
            params.putIfAbsent(key, value.toString().trim());
            i = j;
        }
        return params;
    }

    private static boolean precededByLineBreak(byte[] body, int index) {
        return index >= 2 && body[index - 2] == '\r' && body[index - 1] == '\n';
    }

    private static boolean startsWith(byte[] body, int pos, String text) {
        if (pos + text.length() > body.length) {
            return false;
        }
        for (int i = 0; i < text.length(); i++) {
            if (body[pos + i] != text.charAt(i)) {
                return false;
            }
        }
        return true;
    }

    static int indexOf(byte[] haystack, byte[] needle, int from) {
        byte first = needle[0];
        int last = haystack.length - needle.length;
        for (int i = Math.max(0, from); i <= last; i++) {
            if (haystack[i] != first) {
                continue;
            }
            int k = 1;
            while (k < needle.length && haystack[i + k] == needle[k]) {
                k++;
            }
            if (k == needle.length) {
                return i;
            }
        }
        return -1;
    }
}
