package io.imageworker.gateway;

import java.util.List;

/** What one gateway call sends: a generation (JSON) or an edit (multipart). */
public sealed interface GatewayRequest permits GatewayRequest.Generate, GatewayRequest.Edit {

    /** The explicit {@code WIDTHxHEIGHT} sent. */
    String size();

    /** {@code POST /v1/images/generations} with an explicit, valid size. */
    record Generate(String prompt, String size, String quality) implements GatewayRequest {}

    /**
     * {@code POST /v1/images/edits}.
     *
     * @param images the base image first, then the references; in single mode only the first is sent, as
     *     {@code image}
     * @param mask the mask, or null
     * @param single whether to send the single-image form ({@code IMAGE_WORKER_GATEWAY_EDIT_MODE=single})
     */
    record Edit(String prompt, String size, String quality, List<FilePart> images, FilePart mask, boolean single)
            implements GatewayRequest {}

    /** One file of an edit: its bytes, a filename whose extension matches the real format, and that format's type. */
    record FilePart(byte[] bytes, String filename, String contentType) {}
}
