package io.imageworker.api;

import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** Why {@code GET /requests/{requestId}} could not answer with a status. */
@Schema(name = "Problem", description = "Why no status could be given")
public record Problem(
        @Schema(
                        required = true,
                        enumeration = {"INVALID_REQUEST_ID", "STORE_UNAVAILABLE", "RECORD_UNREADABLE"})
                String error,
        @Schema(required = true, description = "What happened, for a person") String message) {}
