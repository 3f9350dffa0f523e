package io.imageworker.processing;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.Billing;
import io.imageworker.ErrorCode;
import io.imageworker.ImageRequest;
import io.imageworker.Operation;
import io.imageworker.TerminalEvent;
import io.imageworker.config.WorkerConfig;
import io.imageworker.gateway.FailureKind;
import io.imageworker.gateway.GatewayAnswer;
import io.imageworker.gateway.GatewayClient;
import io.imageworker.gateway.GatewayFailure;
import io.imageworker.gateway.ImageDownloader;
import io.imageworker.gateway.ImageDownloader.DownloadException;
import io.imageworker.image.ImageInfo;
import io.imageworker.image.ImageInspector;
import io.imageworker.image.ImageSize;
import io.imageworker.image.SizeDecision;
import io.imageworker.image.SizePolicy;
import io.imageworker.reference.LoadedImage;
import io.imageworker.reference.ReferenceLoader;
import io.imageworker.reference.ReferenceRefusedException;
import io.imageworker.reference.ReferenceStoreException;
import io.imageworker.storage.ImageStore;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;

/**
 * The hot path of one request, top to bottom: result already recorded? validate, check the deadline, resolve the
 * size, (edit: load the references), call the gateway within the concurrency limit and the retry policy, take the
 * image from {@code b64_json} or {@code url}, check its bytes, store it, record the result. The returned event is
 * published by the caller, which then commits.
 *
 * <p>The {@code requestId} is an idempotency key: an outcome already recorded is replayed without a gateway call,
 * and copies of one request in flight at once share one execution.
 */
@ApplicationScoped
public class RequestProcessor {

    private final WorkerConfig config;
    private final RequestValidator validator;
    private final GatewayClient gateway;
    private final ImageDownloader downloader;
    private final ImageStore store;
    private final ReferenceLoader references;
    private final ObjectMapper mapper;
    private final ConcurrencyLimiter limiter;
    private final RetryPolicy retryPolicy;
    private final Patience patience;
    private final WorkerMetrics metrics;
    private final GatewayGuard guard;
    private final BudgetGuard budget;
    private final Map<String, Uni<TerminalEvent>> inFlight = new ConcurrentHashMap<>();
    private volatile boolean abandoned;

    RequestProcessor(
            WorkerConfig config,
            RequestValidator validator,
            GatewayClient gateway,
            ImageDownloader downloader,
            ImageStore store,
            ReferenceLoader references,
            ObjectMapper mapper,
            MeterRegistry registry,
            GatewayGuard guard,
            BudgetGuard budget) {
        this.budget = budget;
        this.config = config;
        this.validator = validator;
        this.gateway = gateway;
        this.downloader = downloader;
        this.store = store;
        this.references = references;
        this.mapper = mapper;
        this.guard = guard;
        this.limiter = new ConcurrencyLimiter(1, Math.max(1, config.concurrency()));
        this.retryPolicy = new RetryPolicy(config.retry());
        this.patience = new Patience(config.retry().infrastructurePatience());
        this.metrics = new WorkerMetrics(registry, limiter, config::concurrency);
    }

    /** The limiter of gateway calls, for health and metrics. */
    public ConcurrencyLimiter limiter() {
        return limiter;
    }

    /** The worker's metrics. */
    public WorkerMetrics metrics() {
        return metrics;
    }

    /**
     * Called when the shutdown grace is over, for the requests still running: they start no more gateway calls, and
     * none of them ends as a failure, recorded or returned. A failure now may be the shutdown's own doing (the
     * gateway and storage clients closing under a call), and a recorded one would be replayed to the next worker as
     * the request's outcome. A success is still stored and recorded, which spares the next worker a second billed
     * call. Such requests end with {@link AbandonedException}: their records are left for redelivery.
     */
    public void abandonUnfinished() {
        abandoned = true;
    }

    /**
     * The terminal event of a request with a usable id. Copies of one {@code requestId} arriving while it runs share
     * this execution, so they make one gateway call between them.
     */
    public Uni<TerminalEvent> process(String requestId, JsonNode json, Instant receivedAt) {
        return inFlight.computeIfAbsent(requestId, id -> Uni.createFrom()
                .deferred(() -> recordedOrFresh(id, json, receivedAt))
                .onItem()
                .transformToUni(event -> abandoned && event instanceof TerminalEvent.Failed
                        ? Uni.createFrom().<TerminalEvent>failure(abandon(id, null))
                        : Uni.createFrom().item(event))
                .onFailure(error -> abandoned)
                .transform(error -> abandon(id, error instanceof AbandonedException ? null : error))
                .onTermination()
                .invoke(() -> inFlight.remove(id))
                .memoize()
                .indefinitely());
    }

    /** The end of a request given up at shutdown, logged once. */
    private AbandonedException abandon(String requestId, Throwable cause) {
        AbandonedException abandonment = new AbandonedException(requestId, cause);
        Log.info(abandonment.getMessage());
        return abandonment;
    }

    private Uni<TerminalEvent> recordedOrFresh(String requestId, JsonNode json, Instant receivedAt) {
        return patience.retry(store.findResult(requestId))
                .onItemOrFailure()
                .transformToUni((recorded, lookupFailure) -> {
                    if (lookupFailure != null) {
                        // Without the record, a call could bill a request that already ended: do not call.
                        Log.errorf("[%s] the result store cannot be read: %s", requestId, lookupFailure.toString());
                        return Uni.createFrom()
                                .item(failed(
                                        requestId,
                                        json,
                                        receivedAt,
                                        ErrorCode.STORAGE_ERROR,
                                        "the result store cannot be read, so the request was not sent to the gateway: "
                                                + lookupFailure.getMessage()));
                    }
                    return recorded.isPresent()
                            ? Uni.createFrom().item(replay(requestId, recorded.get(), json, receivedAt))
                            : fresh(requestId, json, receivedAt);
                })
                .invoke(metrics::ended);
    }

    private TerminalEvent replay(String requestId, byte[] recorded, JsonNode json, Instant receivedAt) {
        try {
            TerminalEvent event = recorded(recorded);
            Log.infof(
                    "[%s] already ended as %s; replaying the recorded result, no gateway call",
                    requestId, event.ceType());
            metrics.replayed();
            return event;
        } catch (java.io.IOException | IllegalArgumentException e) {
            // Neither crash the consumer on it (it would be redelivered forever) nor call again (it may be billed).
            Log.errorf(
                    "[%s] the recorded result is unreadable (%s); not calling the gateway again",
                    requestId, e.toString());
            return failed(
                    requestId,
                    json,
                    receivedAt,
                    ErrorCode.STORAGE_ERROR,
                    "the recorded result of this requestId is unreadable; send a new requestId to try again");
        }
    }

    private TerminalEvent recorded(byte[] json) throws java.io.IOException {
        JsonNode node = mapper.readTree(json);
        return node.has("image")
                ? mapper.treeToValue(node, TerminalEvent.Completed.class)
                : mapper.treeToValue(node, TerminalEvent.Failed.class);
    }

    private Uni<TerminalEvent> fresh(String requestId, JsonNode json, Instant receivedAt) {
        RequestValidator.Result result = validator.validate(json);
        if (result instanceof RequestValidator.Result.Invalid invalid) {
            Log.infof("[%s] refused: %s", requestId, invalid.message());
            return Uni.createFrom().item(failed(requestId, json, receivedAt, invalid.code(), invalid.message()));
        }
        ImageRequest request = ((RequestValidator.Result.Valid) result).request();
        Run run = new Run(request, receivedAt);
        if (request.deadline() != null && run.startedAt.isAfter(request.deadline())) {
            return Uni.createFrom()
                    .item(run.failed(
                            ErrorCode.EXPIRED,
                            "the deadline " + request.deadline() + " passed before the work started",
                            null));
        }
        Uni<TerminalEvent> outcome = request.operation() == Operation.GENERATE ? generate(run) : edit(run);
        return outcome.onFailure(error -> !abandoned && !(error instanceof AbandonedException))
                .recoverWithItem(error -> {
                    // Every expected failure is already an event; this is a defect, reported as such, not hidden.
                    Log.errorf(error, "[%s] unexpected failure", requestId);
                    ErrorCode code = error instanceof software.amazon.awssdk.core.exception.SdkException
                            ? ErrorCode.STORAGE_ERROR
                            : ErrorCode.UPSTREAM_ERROR;
                    return run.failed(code, "unexpected failure: " + error, null);
                })
                .onItem()
                .transformToUni(event -> record(run, event));
    }

    private Uni<TerminalEvent> generate(Run run) {
        SizeDecision decision = SizePolicy.forGenerate(run.request.size());
        if (decision instanceof SizeDecision.Refused refused) {
            return Uni.createFrom().item(run.invalid(refused.message()));
        }
        run.size = (SizeDecision.Accepted) decision;
        String size = run.size.sent().toString();
        return callGateway(run, () -> gateway.generate(run.request.prompt(), size, run.request.quality()));
    }

    /**
     * Loads every reference and the mask (one at a time, see {@link ReferenceLoader}), decides the size from the base
     * image, then makes the multipart call. An unusable {@code size} is refused first, without reading anything. No call is made before every input is loaded and checked: a refused input
     * ends as {@code INVALID_REFERENCE}, a store that cannot be read as {@code STORAGE_ERROR}.
     */
    private Uni<TerminalEvent> edit(Run run) {
        String requestId = run.request.requestId();
        // A size that no image can make acceptable is refused before any reference is read.
        if (SizePolicy.forGenerate(run.request.size()) instanceof SizeDecision.Refused refused) {
            return Uni.createFrom().item(run.invalid(refused.message()));
        }
        return references
                .load(run.request)
                .onItem()
                .transformToUni(inputs -> {
                    ImageInfo base = inputs.references().get(0).info();
                    SizeDecision decision = SizePolicy.forEdit(run.request.size(), base);
                    if (decision instanceof SizeDecision.Refused refused) {
                        return Uni.createFrom().item(run.invalid(refused.message()));
                    }
                    run.size = (SizeDecision.Accepted) decision;
                    if (base.size().isEmpty()) {
                        Log.warnf(
                                "[%s] the base image is %s but its size cannot be read: sending it with %s",
                                requestId, base.format().mimeType(), run.size.sent());
                    }
                    String size = run.size.sent().toString();
                    boolean single = config.gateway().editMode() == WorkerConfig.EditMode.single;
                    List<GatewayClient.FilePart> parts = new ArrayList<>();
                    for (int i = 0; i < inputs.references().size(); i++) {
                        parts.add(filePart(inputs.references().get(i), i == 0 ? "image" : "reference-" + i));
                    }
                    GatewayClient.FilePart mask = inputs.mask() == null ? null : filePart(inputs.mask(), "mask");
                    return callGateway(
                            run,
                            () -> gateway.edit(run.request.prompt(), size, run.request.quality(), parts, mask, single));
                })
                .onFailure(ReferenceRefusedException.class)
                .recoverWithItem(error -> {
                    Log.infof("[%s] refused: %s", requestId, error.getMessage());
                    return run.failed(ErrorCode.INVALID_REFERENCE, error.getMessage(), null);
                })
                .onFailure(ReferenceStoreException.class)
                .recoverWithItem(error -> {
                    Log.errorf("[%s] not sent to the gateway: %s", requestId, error.getMessage());
                    return run.failed(ErrorCode.STORAGE_ERROR, error.getMessage(), null);
                });
    }

    private static GatewayClient.FilePart filePart(LoadedImage image, String name) {
        // The extension and type come from the real bytes: the gateway guesses the format from the extension.
        return new GatewayClient.FilePart(
                image.bytes(),
                name + image.info().format().extension(),
                image.info().format().mimeType());
    }

    /**
     * Calls the gateway until it gives an image or the retry policy gives up. Each call waits for an open gateway
     * guard and a place in the spend budget (holding no permit while it waits), then runs within the limiter.
     */
    private Uni<TerminalEvent> callGateway(Run run, Supplier<Uni<GatewayAnswer>> call) {
        String requestId = run.request.requestId();
        // Once the shutdown grace is over, no new call: a call cut off by the exit would be billed for nothing.
        Supplier<Uni<GatewayAnswer>> unlessAbandoned =
                () -> abandoned ? Uni.createFrom().failure(new AbandonedException(requestId, null)) : call.get();
        return guard.awaitOpen()
                .onItem()
                .transformToUni(open -> abandoned
                        ? Uni.createFrom().<Boolean>failure(new AbandonedException(requestId, null))
                        : budget.reserve())
                .onItem()
                .transformToUni(allowed -> allowed
                        ? limiter.run(unlessAbandoned).onItem().transformToUni(answer -> onAnswer(run, answer, call))
                        : Uni.createFrom()
                                .item(run.failed(
                                        ErrorCode.BUDGET_EXCEEDED,
                                        "the spend guard allows no more gateway calls in this window"
                                                + " (IMAGE_WORKER_BUDGET_MAX_CALLS)",
                                        null)));
    }

    private Uni<TerminalEvent> onAnswer(Run run, GatewayAnswer answer, Supplier<Uni<GatewayAnswer>> call) {
        if (abandoned && answer instanceof GatewayAnswer.Failure) {
            // Most likely the shutdown closing the client under the call; the beans that would account for it may be
            // gone already.
            return Uni.createFrom().failure(new AbandonedException(run.request.requestId(), null));
        }
        run.attempts++;
        run.gatewayMs += answer.latencyMs();
        if (answer instanceof GatewayAnswer.Image image) {
            run.billing = run.billing.plus(Billing.CallCost.BILLED);
            metrics.gatewayCall(Billing.CallCost.BILLED, answer.latencyMs());
            budget.settle(Billing.CallCost.BILLED);
            limiter.onSuccess();
            guard.onHealthyAnswer();
            return takeImage(run, image);
        }
        return onFailure(run, ((GatewayAnswer.Failure) answer).failure(), answer.latencyMs(), call);
    }

    private Uni<TerminalEvent> onFailure(
            Run run, GatewayFailure failure, long latencyMs, Supplier<Uni<GatewayAnswer>> call) {
        FailureKind kind = failure.kind();
        run.billing = run.billing.plus(kind.cost());
        metrics.gatewayCall(kind.cost(), latencyMs);
        budget.settle(kind.cost());
        switch (kind) {
            case NOT_SENT, RATE_LIMITED -> run.freeAttempts++;
            case TIMED_OUT, UPSTREAM -> run.unknownAttempts++;
            default -> {}
        }
        if (kind == FailureKind.RATE_LIMITED) {
            limiter.onRateLimited();
        } else if (kind != FailureKind.NOT_SENT) {
            guard.onAnswer(failure);
        }
        if (guard.holdsBack(failure)) {
            // A dead token or a wrong address fails every request the same way: wait for the gateway instead.
            Duration wait = retryPolicy.backoff(Math.min(run.attempts, 6));
            Log.warnf(
                    "[%s] %s; holding the request back (not failing it), next try in %d ms",
                    run.request.requestId(), failure.message(), wait.toMillis());
            return Patience.after(wait, () -> callGateway(run, call));
        }
        Optional<Duration> delay = retryPolicy.next(
                failure, run.freeAttempts, run.unknownAttempts, Duration.between(run.startedAt, Instant.now()));
        if (delay.isPresent()) {
            Log.infof(
                    "[%s] attempt %d: %s; trying again in %d ms",
                    run.request.requestId(),
                    run.attempts,
                    failure.message(),
                    delay.get().toMillis());
            return Patience.after(delay.get(), () -> callGateway(run, call));
        }
        Log.infof("[%s] failed after %d attempt(s): %s", run.request.requestId(), run.attempts, failure.message());
        return Uni.createFrom().item(run.failed(kind.errorCode(), failure.message(), failure));
    }

    private Uni<TerminalEvent> takeImage(Run run, GatewayAnswer.Image image) {
        Uni<byte[]> bytes;
        if (image.b64Json() != null) {
            bytes = Uni.createFrom().item(() -> decodeBase64(image.b64Json()));
        } else {
            bytes = patience.retry(
                    downloader.download(image.url()),
                    // A timeout already took the whole download time: one attempt. Other transient failures are free.
                    error -> error instanceof DownloadException download
                            && download.transientFailure()
                            && !download.timedOut());
        }
        return bytes.onItem()
                .transformToUni(data -> storeImage(run, data))
                .onFailure(DownloadException.class)
                .recoverWithItem(error -> run.failed(
                        ((DownloadException) error).timedOut() ? ErrorCode.TIMEOUT : ErrorCode.INVALID_OUTPUT,
                        error.getMessage(),
                        null))
                .onFailure(IllegalArgumentException.class)
                .recoverWithItem(error ->
                        run.failed(ErrorCode.INVALID_OUTPUT, "the gateway's b64_json is not valid base64", null));
    }

    private static byte[] decodeBase64(String b64) {
        String data = b64;
        if (data.startsWith("data:")) {
            data = data.substring(data.indexOf(',') + 1);
        }
        return Base64.getDecoder().decode(data.replaceAll("\\s", ""));
    }

    private Uni<TerminalEvent> storeImage(Run run, byte[] data) {
        ImageInfo info = ImageInspector.inspect(data);
        if (!info.isUsable() || info.size().isEmpty()) {
            return Uni.createFrom()
                    .item(run.failed(
                            ErrorCode.INVALID_OUTPUT,
                            "the gateway's answer is not a usable png, jpeg or webp image: "
                                    + info.refusal().orElse("size unreadable"),
                            null));
        }
        ImageSize actual = info.size().get();
        boolean matched = actual.equals(run.size.sent());
        if (!matched) {
            metrics.sizeMismatch();
            Log.warnf(
                    "[%s] the gateway returned %s for %s (a silent failure); storing it with matched=false",
                    run.request.requestId(), actual, run.size.sent());
        }
        String sha256 = ImageInspector.sha256Hex(data);
        String key = run.request.keyPrefix()
                + run.request.requestId()
                + info.format().extension();
        Map<String, String> objectMetadata = Map.of("request-id", run.request.requestId(), "sha256", sha256);
        long storeStarted = System.nanoTime();
        return patience.retry(store.putImage(key, data, info.format().mimeType(), objectMetadata))
                .onItem()
                .transform(ignored -> {
                    run.storeMs = (System.nanoTime() - storeStarted) / 1_000_000;
                    metrics.stored(data.length);
                    String bucket = store.bucket();
                    TerminalEvent.StoredImage stored = new TerminalEvent.StoredImage(
                            bucket,
                            key,
                            "s3://" + bucket + "/" + key,
                            store.presignedUrl(key),
                            info.format().mimeType(),
                            actual.width(),
                            actual.height(),
                            data.length,
                            sha256);
                    Log.infof(
                            "[%s] stored %s (%s, %d bytes) after %d attempt(s)",
                            run.request.requestId(), stored.uri(), actual, data.length, run.attempts);
                    return (TerminalEvent) run.completed(stored, actual, matched);
                })
                .onFailure()
                .recoverWithItem(error -> run.failed(
                        ErrorCode.STORAGE_ERROR, "the image could not be stored: " + error.getMessage(), null));
    }

    /**
     * Writes the result document, so a redelivery or a duplicate replays this event without a call. Once the
     * shutdown grace is over, a failure is not recorded (see {@link #abandonUnfinished()}).
     */
    private Uni<TerminalEvent> record(Run run, TerminalEvent event) {
        if (abandoned && event instanceof TerminalEvent.Failed) {
            return Uni.createFrom().failure(new AbandonedException(event.requestId(), null));
        }
        if (run.billing.calls() == 0 && event instanceof TerminalEvent.Failed) {
            // Refused locally: deterministic and free to decide again; nothing worth recording.
            return Uni.createFrom().item(event);
        }
        byte[] json;
        try {
            json = mapper.writeValueAsBytes(event);
        } catch (Exception e) {
            return Uni.createFrom().failure(e);
        }
        return patience.retry(store.putResult(event.requestId(), json))
                .replaceWith(event)
                .onFailure()
                .recoverWithItem(error -> {
                    Log.warnf(
                            "[%s] the result could not be recorded (%s): a redelivery would call the gateway"
                                    + " again",
                            event.requestId(), error.toString());
                    return event;
                });
    }

    private TerminalEvent failed(String requestId, JsonNode json, Instant receivedAt, ErrorCode code, String message) {
        Instant now = Instant.now();
        return new TerminalEvent.Failed(
                requestId,
                RequestValidator.echoableOperation(json),
                new TerminalEvent.Error(code, message, code.retryable(), null, null),
                null,
                0,
                Billing.NONE,
                new TerminalEvent.Timings(receivedAt, now, now, null, null),
                echoableMetadata(json));
    }

    private Map<String, String> echoableMetadata(JsonNode json) {
        // Only metadata that follows the contract: echoing an oversized one could make an event Kafka refuses.
        return RequestValidator.echoableMetadata(json);
    }

    /** The running state of one request: what it has cost and how long it took so far. */
    private static final class Run {
        final ImageRequest request;
        final Instant receivedAt;
        final Instant startedAt = Instant.now();
        SizeDecision.Accepted size;
        Billing billing = Billing.NONE;
        int attempts;
        int freeAttempts;
        int unknownAttempts;
        long gatewayMs;
        long storeMs;

        Run(ImageRequest request, Instant receivedAt) {
            this.request = request;
            this.receivedAt = receivedAt;
        }

        TerminalEvent.SizeReport sizeReport(ImageSize actual, Boolean matched) {
            if (size == null) {
                return request.size() == null ? null : new TerminalEvent.SizeReport(request.size(), null, null, null);
            }
            return new TerminalEvent.SizeReport(
                    size.requested(), size.sent().toString(), actual == null ? null : actual.toString(), matched);
        }

        TerminalEvent.Timings timings(boolean stored) {
            return new TerminalEvent.Timings(
                    receivedAt, startedAt, Instant.now(), attempts == 0 ? null : gatewayMs, stored ? storeMs : null);
        }

        TerminalEvent completed(TerminalEvent.StoredImage image, ImageSize actual, boolean matched) {
            return new TerminalEvent.Completed(
                    request.requestId(),
                    request.operation().wireName(),
                    image,
                    sizeReport(actual, matched),
                    attempts,
                    billing,
                    timings(true),
                    request.metadata());
        }

        TerminalEvent invalid(String message) {
            return failed(ErrorCode.INVALID_REQUEST, message, null);
        }

        TerminalEvent failed(ErrorCode code, String message, GatewayFailure failure) {
            return new TerminalEvent.Failed(
                    request.requestId(),
                    request.operation().wireName(),
                    new TerminalEvent.Error(
                            code,
                            message,
                            code.retryable(),
                            failure == null ? null : failure.status(),
                            failure == null ? null : failure.body()),
                    sizeReport(null, null),
                    attempts,
                    billing,
                    timings(false),
                    request.metadata());
        }
    }
}
