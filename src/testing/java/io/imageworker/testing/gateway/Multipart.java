package io.imageworker.testing.gateway;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;

/** Builds a {@code multipart/form-data} body by hand, so tests control every byte (order, names, boundary). */
final class Multipart {

    private final String boundary;
    private final ByteArrayOutputStream body = new ByteArrayOutputStream();
    private String contentTypeOverride;

    Multipart() {
        this("----simulator-boundary-7MA4YWxkTrZu0gW");
    }

    Multipart(String boundary) {
        this.boundary = boundary;
    }

    Multipart text(String name, String value) {
        write("--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\n");
        write(value);
        write("\r\n");
        return this;
    }

    Multipart file(String name, String filename, String contentType, byte[] data) {
        write("--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"; filename=\"" + filename
                + "\"\r\nContent-Type: " + contentType + "\r\n\r\n");
        body.writeBytes(data);
        write("\r\n");
        return this;
    }

    /** Sends this {@code Content-Type} instead of the right one (a hand-set header). */
    Multipart contentType(String value) {
        contentTypeOverride = value;
        return this;
    }

    String contentType() {
        return contentTypeOverride != null ? contentTypeOverride : "multipart/form-data; boundary=" + boundary;
    }

    byte[] body() {
        ByteArrayOutputStream copy = new ByteArrayOutputStream();
        copy.writeBytes(body.toByteArray());
        copy.writeBytes(("--" + boundary + "--\r\n").getBytes(StandardCharsets.UTF_8));
        return copy.toByteArray();
    }

    private void write(String text) {
        body.writeBytes(text.getBytes(StandardCharsets.UTF_8));
    }
}
