package io.imageworker.processing;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.contract.Billing;
import io.imageworker.contract.ErrorCode;
import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.TerminalEvent;
import io.imageworker.contract.VariantOutcome;
import io.imageworker.gateway.GatewayCalls;
import io.imageworker.gateway.GatewayFailure;
import io.imageworker.gateway.ReceivedImage;
import io.imageworker.image.ImageSize;
import io.imageworker.image.SizeDecision;
import io.imageworker.storage.ImageStorage;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.stream.IntStream;

/**
 * What one request has come to, stage by stage, and the terminal events it can end with: immutable, each stage
 * returns the next. A request makes {@code count} variants (1 without {@code count}); each ends as a
 * {@link VariantOutcome}, and the terminal event sums them: stored when any variant was, failed (with the last
 * variant's error) when none was. A failed event carries whatever was spent until then.
 *
 * @param request the valid request
 * @param receivedAt when its record was read
 * @param startedAt when the work began
 * @param size the size decided, once it is
 * @param ended the variants that ended before this attempt (recorded by an earlier one), by number
 */
record RequestSoFar(
        ImageRequest request,
        Instant receivedAt,
        Instant startedAt,
        SizeDecision.Accepted size,
        List<VariantOutcome> ended) {

    /** A request whose work begins now. */
    static RequestSoFar begin(ImageRequest request, Instant receivedAt) {
        return new RequestSoFar(request, receivedAt, Instant.now(), null, List.of());
    }

    /** The request, with the variants an earlier attempt recorded (those beyond its {@code count} left out). */
    RequestSoFar recalled(List<VariantOutcome> recorded) {
        List<VariantOutcome> known = recorded.stream()
                .filter(variant -> variant.variant() <= request.count())
                .sorted(Comparator.comparingInt(VariantOutcome::variant))
                .toList();
        return new RequestSoFar(request, receivedAt, startedAt, size, known);
    }

    RequestSoFar sized(SizeDecision.Accepted decided) {
        return new RequestSoFar(request, receivedAt, startedAt, decided, ended);
    }

    /**
     * Whether the request's deadline passed before the work started. A request some of whose variants ended in an
     * earlier attempt had started: it carries on.
     */
    boolean expired() {
        return ended.isEmpty() && request.deadline() != null && startedAt.isAfter(request.deadline());
    }

    /** Whether an earlier attempt made gateway calls for the request (its recorded variants): no cancel undoes them. */
    boolean called() {
        return ended.stream().anyMatch(variant -> variant.attempts() > 0);
    }

    /** The numbers of the variants still to make, in call order. */
    List<Integer> pending() {
        return IntStream.rangeClosed(1, request.count())
                .filter(number -> ended.stream().noneMatch(variant -> variant.variant() == number))
                .boxed()
                .toList();
    }

    /** Variant {@code number}'s image is stored. */
    VariantOutcome stored(int number, GatewayCalls.Result calls, ReceivedImage image, ImageStorage.Stored stored) {
        ImageSize actual = image.size();
        return new VariantOutcome(
                number,
                stored.image(),
                sizeReport(actual, actual.equals(size.sent())),
                null,
                calls.attempts(),
                calls.billing(),
                calls.gatewayMs(),
                stored.storeMs());
    }

    /** Variant {@code number}'s gateway calls gave no image. */
    VariantOutcome failed(int number, GatewayCalls.Result calls) {
        GatewayFailure failure = calls.failure();
        return failed(number, calls, failure.kind().errorCode(), failure.message(), failure.status(), failure.body());
    }

    /** Variant {@code number} ended without an image after {@code calls}, for a reason a stage gave. */
    VariantOutcome failed(int number, GatewayCalls.Result calls, ErrorCode code, String message) {
        return failed(number, calls, code, message, null, null);
    }

    private VariantOutcome failed(
            int number, GatewayCalls.Result calls, ErrorCode code, String message, Integer status, String body) {
        int attempts = calls == null ? 0 : calls.attempts();
        return new VariantOutcome(
                number,
                null,
                sizeReport(null, null),
                new TerminalEvent.Error(code, message, code.retryable(), status, body),
                attempts,
                calls == null ? Billing.NONE : calls.billing(),
                attempts == 0 ? null : calls.gatewayMs(),
                null);
    }

    /** The terminal event once the variants of this attempt ended too. */
    TerminalEvent ended(List<VariantOutcome> now) {
        List<VariantOutcome> all = new ArrayList<>(ended);
        all.addAll(now);
        all.sort(Comparator.comparingInt(VariantOutcome::variant));
        List<VariantOutcome> delivered =
                all.stream().filter(VariantOutcome::delivered).toList();
        int attempts = all.stream().mapToInt(VariantOutcome::attempts).sum();
        Billing billing = all.stream().map(VariantOutcome::billing).reduce(Billing.NONE, Billing::plus);
        Long gatewayMs = attempts == 0
                ? null
                : sum(all.stream().map(VariantOutcome::gatewayMs).toList());
        TerminalEvent.VariantTally tally = request.count() > 1
                ? new TerminalEvent.VariantTally(request.count(), delivered.size(), all.size() - delivered.size())
                : null;
        if (delivered.isEmpty()) {
            VariantOutcome last = all.get(all.size() - 1);
            return new TerminalEvent.Failed(
                    request.requestId(),
                    request.operation().wireName(),
                    last.error(),
                    tally,
                    last.size(),
                    attempts,
                    billing,
                    timings(gatewayMs, null),
                    request.metadata(),
                    request.producer());
        }
        VariantOutcome first = delivered.get(0);
        return new TerminalEvent.Completed(
                request.requestId(),
                request.operation().wireName(),
                first.image(),
                request.count() > 1
                        ? delivered.stream().map(VariantOutcome::image).toList()
                        : null,
                tally,
                first.size(),
                attempts,
                billing,
                timings(
                        gatewayMs,
                        sum(delivered.stream().map(VariantOutcome::storeMs).toList())),
                request.metadata(),
                request.producer());
    }

    /**
     * The request stops for a reason a stage gave: every variant not ended fails with it, without a call. The
     * variants an earlier attempt recorded still count.
     */
    TerminalEvent stopped(ErrorCode code, String message) {
        return ended(pending().stream()
                .map(number -> failed(number, null, code, message))
                .toList());
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
                null,
                0,
                Billing.NONE,
                new TerminalEvent.Timings(receivedAt, now, now, null, null),
                RequestValidator.echoableMetadata(json),
                RequestValidator.echoableProducer(json));
    }

    private TerminalEvent.SizeReport sizeReport(ImageSize actual, Boolean matched) {
        if (size == null) {
            return request.size() == null ? null : new TerminalEvent.SizeReport(request.size(), null, null, null);
        }
        return new TerminalEvent.SizeReport(
                size.requested(), size.sent().toString(), actual == null ? null : actual.toString(), matched);
    }

    private TerminalEvent.Timings timings(Long gatewayMs, Long storeMs) {
        return new TerminalEvent.Timings(receivedAt, startedAt, Instant.now(), gatewayMs, storeMs);
    }

    private static Long sum(List<Long> values) {
        return values.stream()
                .filter(value -> value != null)
                .mapToLong(Long::longValue)
                .sum();
    }
}
