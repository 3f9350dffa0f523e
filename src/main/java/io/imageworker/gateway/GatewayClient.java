package io.imageworker.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.config.WorkerConfig;
import io.imageworker.memory.MemoryBudget;
import io.imageworker.support.BoundedBody;
import io.imageworker.support.CpuWork;
import io.netty.buffer.Unpooled;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.mutiny.core.Vertx;
import io.vertx.mutiny.core.buffer.Buffer;
import io.vertx.mutiny.ext.web.client.HttpRequest;
import io.vertx.mutiny.ext.web.client.HttpResponse;
import io.vertx.mutiny.ext.web.client.WebClient;
import io.vertx.mutiny.ext.web.multipart.MultipartForm;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The only code that talks to the gateway. Non-blocking (Vert.x Web Client), one deadline per call, redirects never
 * followed (a redirect means a wrong base address), and the API key only ever in the {@code Authorization} header:
 * never in a log line, an exception message or an event.
 *
 * <p>The event loop only moves bytes: an answer's body is read into one exactly sized array ({@link BoundedBody}),
 * and reading it (JSON, base64) runs on the CPU pool ({@link CpuWork}). Idle keep-alive connections are closed after
 * {@code gateway.keep-alive-timeout}, before the servers' own idle timeouts; a call that still meets a connection the
 * gateway closed ends as {@link FailureKind#STALE_CONNECTION}, which is sent again at no cost.
 */
@ApplicationScoped
public class GatewayClient {

    /** Most of an answer to an unbillable probe that is read. */
    private static final int PROBE_BODY_BYTES = 64 * 1024;

    private static final int POOL_CLEANER_PERIOD_MS = 250;

    private final WebClient client;
    private final GatewayEndpoint endpoint;
    private final GatewaySettings config;
    private final AnswerClassifier classifier;
    private final CpuWork cpu;
    private final String authorization;
    private final AnswerSizes sizes;
    private final Vertx vertx;
    private final CallStages stages;

    GatewayClient(
            Vertx vertx,
            WorkerConfig config,
            GatewaySettings gateway,
            ObjectMapper mapper,
            CpuWork cpu,
            AnswerSizes sizes,
            CallStages stages) {
        this.vertx = vertx;
        this.stages = stages;
        this.config = gateway;
        this.cpu = cpu;
        this.sizes = sizes;
        this.endpoint = endpointOrPlaceholder(this.config.baseUrl().orElse(""));
        this.authorization = "Bearer " + this.config.apiKey().orElse("");
        this.classifier = new AnswerClassifier(mapper, this.config.keepBodyChars());
        this.client = WebClient.create(
                vertx,
                new WebClientOptions()
                        .setFollowRedirects(false)
                        .setKeepAlive(true)
                        .setKeepAliveTimeout(
                                (int) Math.max(1, this.config.keepAliveTimeout().toSeconds()))
                        // Vert.x closes expired connections on this period (1 s by default): at 4 s + 1 s the
                        // worker would no longer close before a Node.js server does at 5 s.
                        .setPoolCleanerPeriod(POOL_CLEANER_PERIOD_MS)
                        .setMaxPoolSize(Math.max(1, config.concurrency()))
                        // Bounds what the kernel holds of an answer paused for memory (autotuned, up to 6 MB each).
                        .setReceiveBufferSize(Math.max(64 * 1024, this.config.receiveBuffer()))
                        .setConnectTimeout((int) this.config.connectTimeout().toMillis())
                        .setUserAgent("image-worker"));
        BoundedBody.install(client);
    }

    private static GatewayEndpoint endpointOrPlaceholder(String baseUrl) {
        try {
            return GatewayEndpoint.parse(baseUrl);
        } catch (IllegalArgumentException invalid) {
            // StartupCheck has already named the setting and stopped the process; never call out with it.
            return GatewayEndpoint.parse("http://unconfigured.invalid");
        }
    }

    /** The normalized address calls go to. */
    public GatewayEndpoint endpoint() {
        return endpoint;
    }

    /**
     * One call: a generation as JSON or an edit as multipart. {@code memory} holds the call's read window while it
     * waits (reserved before), then, admitted when the answer's headers come in ({@link AnswerSizes#forAnswer}), the
     * answer while it is read and decoded, then the decoded image, or nothing after a failure. A {@code traceparent}
     * (the call's span, or null when traces are off) goes out as the W3C header.
     */
    public Uni<GatewayAnswer> send(GatewayRequest request, MemoryBudget.Lease memory, String traceparent) {
        return exchange(request, memory, traceparent).chain(Exchanged::answer);
    }

    /**
     * {@link #send}'s exchange alone: it ends when the answer is off the connection (or the call failed), before the
     * answer is read as JSON and base64 on the CPU pool ({@link Exchanged#answer}). What a slot of the gateway's
     * concurrency covers: once the answer is off the connection the gateway holds nothing of the call, and a slot held while the
     * answer waits its turn on the CPU pool is a call not made (issue 47: at each wave of 2,000 answers of 30 s calls,
     * half the slots stood empty for seconds behind the decoding of the others).
     */
    public Uni<Exchanged> exchange(GatewayRequest request, MemoryBudget.Lease memory, String traceparent) {
        Context call = new Context(request.size(), memory, traceparent);
        Uni<Exchanged> exchange = request instanceof GatewayRequest.Generate generate
                ? generate(generate, call)
                : edit((GatewayRequest.Edit) request, call);
        return exchange.onFailure().invoke(() -> memory.resize(0));
    }

    /**
     * A call whose exchange is over: its answer, read when asked for, on the CPU pool for an answer that came, and
     * asked for once.
     */
    public static final class Exchanged {
        private final Supplier<Uni<GatewayAnswer>> answer;
        private final MemoryBudget.Lease memory;

        Exchanged(Supplier<Uni<GatewayAnswer>> answer, MemoryBudget.Lease memory) {
            this.answer = answer;
            this.memory = memory;
        }

        /** The answer: an image, or a failure classified; the call's lease holds what {@link #send} says. */
        public Uni<GatewayAnswer> answer() {
            return Uni.createFrom()
                    .<GatewayAnswer>deferred(() -> answer.get())
                    .onFailure()
                    .invoke(() -> memory.resize(0));
        }
    }

    /**
     * {@code POST /v1/images/generations} with exactly the fields the contract allows: {@code model}, {@code prompt},
     * an explicit {@code size}, optional {@code quality} and {@code response_format}. Never {@code n} (billed per
     * unit by the open-source gateway) nor {@code moderation}.
     */
    /** What one call carries besides its request: the size sent, its lease, its trace. */
    private record Context(String size, MemoryBudget.Lease memory, String traceparent) {}

    private Uni<Exchanged> generate(GatewayRequest.Generate request, Context context) {
        JsonObject body = new JsonObject();
        fields(request.prompt(), request.size(), request.quality()).forEach(body::put);
        return call(GatewayEndpoint.GENERATIONS, context, http -> http.putHeader("Content-Type", "application/json")
                .sendBuffer(Buffer.buffer(body.encode())));
    }

    /**
     * The fields of both image calls, in the order they are sent: {@code model}, {@code prompt}, the explicit
     * {@code size}, and {@code quality} and {@code response_format} when set.
     */
    private Map<String, String> fields(String prompt, String size, String quality) {
        Map<String, String> fields = new LinkedHashMap<>();
        fields.put("model", config.model().orElseThrow());
        fields.put("prompt", prompt);
        fields.put("size", size);
        if (quality != null) {
            fields.put("quality", quality);
        }
        config.responseFormat().ifPresent(format -> fields.put("response_format", format));
        return fields;
    }

    /**
     * {@code POST /v1/images/edits} as multipart. The form encoder makes the boundary: the {@code Content-Type}
     * header is never set by hand. Parts are sent in the given order; each part's filename extension and content type
     * come from its real format.
     *
     * <p>Every file is its own {@code form-data} part, repeated {@code image[]} fields included. The encoder's default
     * (Netty's RFC 2388 mode) would nest a second file of the same field name with the first in one {@code
     * multipart/mixed} part, which the gateway reads as no image at all; HTML5 mode ({@code multipartMixed(false)})
     * does not. The images' bytes are wrapped, not copied, so a retry costs no memory.
     */
    private Uni<Exchanged> edit(GatewayRequest.Edit request, Context context) {
        MultipartForm form = MultipartForm.create();
        fields(request.prompt(), request.size(), request.quality()).forEach(form::attribute);
        for (GatewayRequest.FilePart part : request.single() ? request.images().subList(0, 1) : request.images()) {
            form.binaryFileUpload(
                    request.single() ? "image" : "image[]", part.filename(), wrapped(part), part.contentType());
        }
        if (request.mask() != null) {
            GatewayRequest.FilePart mask = request.mask();
            form.binaryFileUpload("mask", mask.filename(), wrapped(mask), mask.contentType());
        }
        return call(GatewayEndpoint.EDITS, context, http -> http.multipartMixed(false)
                .sendMultipartForm(form));
    }

    private static Buffer wrapped(GatewayRequest.FilePart part) {
        return Buffer.newInstance(io.vertx.core.buffer.Buffer.buffer(Unpooled.wrappedBuffer(part.bytes())));
    }

    /**
     * An unbillable probe: {@code POST {path}} with an empty JSON object and the given authorization. Authentication
     * is checked before the body, and an empty body is refused before any upstream work, so the answer's status tells
     * whether the route exists (401 with a wrong key) or the token is alive (not 401 with the real key). An HTML
     * answer comes back as the negative status.
     */
    public Uni<Integer> probe(String path, boolean withRealKey) {
        return client.postAbs(endpoint.resolve(path))
                .putHeader("Authorization", withRealKey ? authorization : "Bearer sk-image-worker-probe")
                .putHeader("Content-Type", "application/json")
                .idleTimeout(config.connectTimeout().toMillis() * 3)
                .as(new BoundedBody(PROBE_BODY_BYTES).codec())
                .sendBuffer(Buffer.buffer("{}"))
                .map(response -> isHtml(response) ? -response.statusCode() : response.statusCode());
    }

    private static boolean isHtml(HttpResponse<?> response) {
        String type = response.getHeader("Content-Type");
        return type != null && type.toLowerCase(Locale.ROOT).contains("text/html");
    }

    /**
     * Sends a call and reads its answer: the body into one array on the event loop, then its classification (JSON,
     * base64) on the CPU pool. While the call waits, {@code memory} holds its read window only; when the answer's
     * headers come in, the response stays paused until {@code memory} is admitted the body and the image it may decode
     * to (7/4 of the body), then only the image. The deadline ({@link CallDeadline}) does not run while the answer waits
     * for memory.
     */
    private Uni<Exchanged> call(
            String path, Context context, Function<HttpRequest<byte[]>, Uni<HttpResponse<byte[]>>> send) {
        MemoryBudget.Lease memory = context.memory();
        return Uni.createFrom().deferred(() -> {
            Admission admission = new Admission(memory, context.size());
            BoundedBody body =
                    new BoundedBody(config.maxResponseBytes(), admission, bytes -> memory.hold(bytes + bytes * 3 / 4));
            HttpRequest<byte[]> request = client.postAbs(endpoint.resolve(path))
                    .putHeader("Authorization", authorization)
                    // Closes a connection that gives no answer; once headers are in, the deadline below bounds it.
                    .idleTimeout(config.timeout().toMillis())
                    .as(body.codec());
            if (context.traceparent() != null) {
                request.putHeader("traceparent", context.traceparent());
            }
            long started = System.nanoTime();
            stages.move(CallStages.Stage.ENDED, CallStages.Stage.AWAITING_ANSWER);
            return CallDeadline.bound(vertx, send.apply(request), body, config.timeout())
                    .onTermination()
                    .invoke(admission::ended)
                    .onItemOrFailure()
                    .transform((response, failure) -> {
                        long latencyMs = elapsedMs(started);
                        Supplier<Uni<GatewayAnswer>> answer = failure != null
                                ? () -> Uni.createFrom()
                                        .item(classifier.classify(failure, body.failedOnReusedConnection(), latencyMs))
                                : () -> cpu.run(() -> classifier.classify(
                                                response.statusCode(),
                                                response.getHeader("Content-Type"),
                                                response.getHeader("Retry-After"),
                                                response.body(),
                                                latencyMs))
                                        .invoke(read -> learn(context.size(), response.body(), read));
                        return new Exchanged(() -> answer.get().invoke(read -> keep(memory, read)), memory);
                    });
        });
    }

    /**
     * The admission of one call's answer into the memory budget: asked when its headers come in, with its declared
     * length. It moves the call through its {@link CallStages}; its wait for memory ends when the call does.
     */
    private final class Admission implements BoundedBody.Admission {
        private final MemoryBudget.Lease memory;
        private final String size;
        // Guarded by this.
        private CallStages.Stage stage = CallStages.Stage.AWAITING_ANSWER;
        private Cancellable wait;

        Admission(MemoryBudget.Lease memory, String size) {
            this.memory = memory;
            this.size = size;
        }

        @Override
        public Future<Void> admit(long declaredLength) {
            long bytes = sizes.forAnswer(size, Math.min(declaredLength, config.maxResponseBytes()));
            synchronized (this) {
                if (stage != CallStages.Stage.AWAITING_ANSWER) {
                    return Future.failedFuture("the call has ended");
                }
                move(CallStages.Stage.ANSWER_WAITING_FOR_MEMORY);
            }
            Promise<Void> admitted = Promise.promise();
            Cancellable waiting = memory.admit(bytes)
                    .subscribe()
                    .with(
                            ignored -> {
                                synchronized (this) {
                                    if (stage == CallStages.Stage.ANSWER_WAITING_FOR_MEMORY) {
                                        move(CallStages.Stage.READING);
                                    }
                                }
                                admitted.tryComplete();
                            },
                            admitted::tryFail);
            synchronized (this) {
                if (stage == CallStages.Stage.ENDED) {
                    waiting.cancel();
                } else {
                    wait = waiting;
                }
            }
            return admitted.future();
        }

        /** The call has ended, answered or not: it leaves its stage, and its wait for memory if any. */
        void ended() {
            Cancellable waiting;
            synchronized (this) {
                if (stage == CallStages.Stage.ENDED) {
                    return;
                }
                move(CallStages.Stage.ENDED);
                waiting = wait;
                wait = null;
            }
            if (waiting != null) {
                waiting.cancel();
            }
        }

        private void move(CallStages.Stage next) {
            stages.move(stage, next);
            stage = next;
        }
    }

    /** What a call read teaches the reservations of the next: its body and the image decoded from it. */
    private void learn(String size, byte[] body, GatewayAnswer answer) {
        if (answer instanceof GatewayAnswer.Image image && image.bytes() != null && body != null) {
            sizes.observe(size, (long) body.length + image.bytes().length);
        }
    }

    /** What the lease of a call holds once its answer is read: the image, its reservation for a download, or nothing. */
    private static void keep(MemoryBudget.Lease memory, GatewayAnswer answer) {
        if (answer instanceof GatewayAnswer.Image image) {
            if (image.bytes() != null) {
                memory.resize(image.bytes().length);
            }
        } else {
            memory.resize(0);
        }
    }

    private static long elapsedMs(long startedNanos) {
        return (System.nanoTime() - startedNanos) / 1_000_000;
    }

    @PreDestroy
    void close() {
        client.close();
    }
}
