package io.imageworker.processing;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.Billing;
import io.imageworker.ErrorCode;
import io.imageworker.ImageRequest;
import io.imageworker.TerminalEvent;
import io.imageworker.gateway.GatewayCalls;
import io.imageworker.gateway.GatewayFailure;
import io.imageworker.image.ImageSize;
import io.imageworker.image.SizeDecision;
import io.imageworker.storage.ImageStorage;
import io.imageworker.storage.ReceivedImage;
import java.time.Instant;

/**
 * What one request has come to, stage by stage, and the terminal events it can end with: immutable, each stage
 * returns the next. A failed event carries whatever was spent until then.
 *
 * @param request the valid request
 * @param receivedAt when its record was read
 * @param startedAt when the work began
 * @param size the size decided, once it is
 * @param calls how the gateway calls ended, once they have
 */
record Progress(
        ImageRequest request,
        Instant receivedAt,
        Instant startedAt,
        SizeDecision.Accepted size,
        GatewayCalls.Result calls) {

    /** A request whose work begins now. */
    static Progress begin(ImageRequest request, Instant receivedAt) {
        return new Progress(request, receivedAt, Instant.now(), null, null);
    }

    Progress sized(SizeDecision.Accepted decided) {
        return new Progress(request, receivedAt, startedAt, decided, calls);
    }

    Progress called(GatewayCalls.Result result) {
        return new Progress(request, receivedAt, startedAt, size, result);
    }

    /** Whether the request's deadline passed before the work started. */
    boolean expired() {
        return request.deadline() != null && startedAt.isAfter(request.deadline());
    }

    /** The image is stored. */
    TerminalEvent.Completed completed(ReceivedImage image, ImageStorage.Stored stored) {
        ImageSize actual = image.size();
        return new TerminalEvent.Completed(
                request.requestId(),
                request.operation().wireName(),
                stored.image(),
                sizeReport(actual, actual.equals(size.sent())),
                attempts(),
                billing(),
                timings(stored.storeMs()),
                request.metadata());
    }

    /** The request ended without an image, for a reason a stage gave. */
    TerminalEvent.Failed failed(ErrorCode code, String message) {
        return failed(code, message, null, null);
    }

    /** The gateway calls gave no image. */
    TerminalEvent.Failed failed(GatewayFailure failure) {
        return failed(failure.kind().errorCode(), failure.message(), failure.status(), failure.body());
    }

    private TerminalEvent.Failed failed(ErrorCode code, String message, Integer status, String body) {
        return new TerminalEvent.Failed(
                request.requestId(),
                request.operation().wireName(),
                new TerminalEvent.Error(code, message, code.retryable(), status, body),
                sizeReport(null, null),
                attempts(),
                billing(),
                timings(null),
                request.metadata());
    }

    /**
     * A request refused before it was understood (the contract broken, the result store unreadable): no call, and
     * only what the record itself says (its operation, its metadata when they can be echoed).
     */
    static TerminalEvent.Failed refused(
            String requestId, JsonNode json, Instant receivedAt, ErrorCode code, String message) {
        Instant now = Instant.now();
        return new TerminalEvent.Failed(
                requestId,
                RequestValidator.echoableOperation(json),
                new TerminalEvent.Error(code, message, code.retryable(), null, null),
                null,
                0,
                Billing.NONE,
                new TerminalEvent.Timings(receivedAt, now, now, null, null),
                RequestValidator.echoableMetadata(json));
    }

    private int attempts() {
        return calls == null ? 0 : calls.attempts();
    }

    private Billing billing() {
        return calls == null ? Billing.NONE : calls.billing();
    }

    private TerminalEvent.SizeReport sizeReport(ImageSize actual, Boolean matched) {
        if (size == null) {
            return request.size() == null ? null : new TerminalEvent.SizeReport(request.size(), null, null, null);
        }
        return new TerminalEvent.SizeReport(
                size.requested(), size.sent().toString(), actual == null ? null : actual.toString(), matched);
    }

    private TerminalEvent.Timings timings(Long storeMs) {
        return new TerminalEvent.Timings(
                receivedAt, startedAt, Instant.now(), attempts() == 0 ? null : calls.gatewayMs(), storeMs);
    }
}
