package io.imageworker.console;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.api.RequestStates;
import io.imageworker.api.StatusCallers;
import io.imageworker.api.StatusSettings;
import io.imageworker.config.StatusTokens;
import io.imageworker.config.TopicSettings;
import io.imageworker.config.WorkerConfig;
import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.RequestId;
import io.imageworker.gateway.GatewayGuard;
import io.imageworker.spend.BudgetGuard;
import io.imageworker.spend.BudgetSettings;
import io.imageworker.storage.ImageStore;
import io.imageworker.storage.StorageSettings;
import io.imageworker.support.WorkerThreads;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.logging.Log;
import io.smallrye.common.annotation.Identifier;
import io.vertx.core.Context;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.Cookie;
import io.vertx.core.http.CookieSameSite;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;

/**
 * The console (issue 52), served by the worker under {@code /console} when {@code IMAGE_WORKER_CONSOLE_ENABLED} is
 * true: a page, its script and its style, and a small JSON API under {@code /console/api}. Off, it registers no route
 * and starts nothing: its feed, its reader and its Kafka producer are made only when it is on.
 *
 * <p>Every route but the page's style and script and the token form asks {@link ConsoleAccess}. What it serves:
 *
 * <ul>
 *   <li>{@code GET /console/api/requests} the last requests of the whole fleet ({@link ConsoleFeed}, filled by the
 *       console's own {@link ConsoleReader}), filterable by {@code producer} and {@code state};
 *   <li>{@code GET /console/api/events?after=N} the changes after {@code N}, as server-sent events, read from the feed
 *       four times a second for each client (nothing is queued per client: a client that does not keep up skips ticks and
 *       gets the changes it missed at the next);
 *   <li>{@code GET /console/api/requests/{id}} one request, {@code .../images/{n}} its images, streamed from the store
 *       through the worker on the S3 client's threads at the pace the browser reads them (never the store's address
 *       nor a presigned URL), only from the worker's bucket and never a result document;
 *   <li>{@code GET /console/api/queue} the queue as this replica holds it ({@link QueueView});
 *   <li>with {@code IMAGE_WORKER_CONSOLE_ACTIONS}: {@code POST /console/api/requests/{id}/cancel} and {@code POST
 *       /console/api/requests} ({@link ConsoleActions}), which must carry the header {@code X-Console-Action} (a
 *       page of another site cannot send it without asking first), and the cookie is {@code SameSite=Strict}.
 * </ul>
 *
 * <p>Each admitted request is seen as its {@link ConsoleAccess.Viewer}: the operator sees all of the above; a producer
 * (with {@code IMAGE_WORKER_CONSOLE_PRODUCER_ACCESS}) sees only the entries its events name as its own, in the list,
 * the events, the detail and the images, and only its own lines of the queue ({@link QueueView}); it cancels and sends
 * only as itself. Another producer's request or image reads exactly as one the console does not have (the same 404),
 * so that the answer does not tell whether it exists. Where ids are unique within a producer, a request is asked for
 * with its {@code ?producer=} (a producer's own is implied).
 */
@ApplicationScoped
public class ConsoleRoutes {

    /** How often each subscribed page is sent what changed. */
    static final long TICK_MS = 250;
    /** The most entries one event carries: its JSON is written on the event loop, a millisecond or two. */
    static final int MOST_PER_BATCH = 500;
    /**
     * The most events one tick sends, while the response takes them ({@code writeQueueFull}): up to 8,000 entries a
     * second to a page that keeps up, none queued for one that does not.
     */
    static final int BATCHES_PER_TICK = 4;

    private static final Set<String> IMAGE_TYPES = Set.of("image/png", "image/jpeg", "image/webp");
    private static final String JSON_TYPE = "application/json";
    /** Where {@link #admit} leaves the request's {@link ConsoleAccess.Viewer}. */
    private static final String VIEWER = "image-worker-console-viewer";

    private final WorkerConfig config;
    private final TopicSettings topics;
    private final ConsoleSettings console;
    private final StorageSettings storage;
    private final BudgetSettings spend;
    private final StatusSettings status;
    private final RequestStates states;
    private final GatewayGuard gateway;
    private final BudgetGuard budget;
    private final ImageStore store;
    private final ObjectMapper json;
    private final Map<String, Object> kafka;
    private final MeterRegistry registry;
    private final StatusCallers callers;

    private volatile ConsoleFeed feed;
    private final WorkerThreads threads;
    private volatile ConsoleReader reader;
    private volatile ConsoleActions actions;
    private volatile ConsoleAccess access;
    private volatile QueueView queue;
    private final Map<String, Buffer> assets = new LinkedHashMap<>();

    @Inject
    ConsoleRoutes(
            WorkerConfig config,
            TopicSettings topics,
            ConsoleSettings console,
            StorageSettings storage,
            BudgetSettings spend,
            StatusSettings status,
            RequestStates states,
            GatewayGuard gateway,
            BudgetGuard budget,
            ImageStore store,
            ObjectMapper json,
            MeterRegistry registry,
            StatusCallers callers,
            @Identifier("default-kafka-broker") Map<String, Object> kafka,
            WorkerThreads threads) {
        this.config = config;
        this.topics = topics;
        this.console = console;
        this.storage = storage;
        this.spend = spend;
        this.status = status;
        this.states = states;
        this.gateway = gateway;
        this.budget = budget;
        this.store = store;
        this.json = json;
        this.kafka = kafka;
        this.registry = registry;
        this.callers = callers;
        this.threads = threads;
    }

    /** Registers the console's routes and starts its reader, when the console is on; nothing otherwise. */
    void routes(@Observes Router router) {
        if (!console.enabled()) {
            return;
        }
        boolean perProducer = config.producerIdentity() == WorkerConfig.ProducerIdentity.topic;
        if (console.producerAccess() && !perProducer) {
            Log.warn("Console: IMAGE_WORKER_CONSOLE_PRODUCER_ACCESS is ignored: producers are declared"
                    + " (IMAGE_WORKER_PRODUCER_IDENTITY=declared), not authenticated, so none is admitted as itself");
        }
        access = new ConsoleAccess(
                console.token(), console.producerAccess() ? callers : null, StatusTokens.of(status.tokens()));
        feed = new ConsoleFeed(console.maxEntries(), ConsoleFeed.MAX_BYTES, perProducer);
        actions = new ConsoleActions(config, topics, console, kafka, json);
        queue = new QueueView(states, gateway, budget, spend);
        assets.put("index.html", asset("index.html"));
        assets.put("login.html", asset("login.html"));
        assets.put("console.js", asset("console.js"));
        assets.put("console.css", asset("console.css"));

        router.get("/console/console.css").handler(ctx -> asset(ctx, "console.css", "text/css; charset=utf-8"));
        router.get("/console/console.js").handler(ctx -> asset(ctx, "console.js", "text/javascript; charset=utf-8"));
        router.post("/console/login").handler(BodyHandler.create().setBodyLimit(4096));
        router.post("/console/login").handler(this::login);
        router.post("/console/logout").handler(this::logout);
        router.route("/console*").handler(this::admit);
        router.get("/console").handler(ctx -> page(ctx, "index.html", 200));
        router.get("/console/").handler(ctx -> page(ctx, "index.html", 200));
        router.get("/console/api/info").handler(this::info);
        router.get("/console/api/requests").blockingHandler(this::list, false);
        router.get("/console/api/requests/:id").handler(this::one);
        router.get("/console/api/requests/:id/images/:n").handler(this::image);
        router.get("/console/api/events").handler(this::events);
        router.get("/console/api/queue").handler(ctx -> send(ctx, 200, queue.now(viewer(ctx))));
        router.post("/console/api/*").handler(BodyHandler.create().setBodyLimit(16 * 1024));
        router.post("/console/api/*").handler(this::mayAct);
        router.post("/console/api/requests/:id/cancel").blockingHandler(this::cancel, false);
        router.post("/console/api/requests").blockingHandler(this::submit, false);

        reader = new ConsoleReader(
                ConsoleReader.topics(topics.completed(), topics.failed(), topics.status()),
                kafka,
                feed,
                json,
                registry,
                threads);
        reader.start();
        Log.infof(
                "Console: on at /console (%s, actions: %s)",
                !access.guarded()
                        ? "no token: anyone who reaches the port is admitted"
                        : access.producersAdmitted()
                                ? "behind the operator's token, and each producer's status credential for its own"
                                        + " requests"
                                : "behind a token",
                actions.allowed().isEmpty() ? "none, read-only" : String.join(", ", actions.allowed()));
    }

    @PreDestroy
    void stop() {
        if (reader != null) {
            reader.stop();
        }
        if (actions != null) {
            actions.close();
        }
    }

    /** The feed, for tests; null while the console is off. */
    ConsoleFeed feed() {
        return feed;
    }

    private static Buffer asset(String name) {
        try (InputStream in = ConsoleRoutes.class.getResourceAsStream("/console/" + name)) {
            if (in == null) {
                throw new IllegalStateException("the console's " + name + " is missing from the package");
            }
            return Buffer.buffer(in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private void asset(RoutingContext ctx, String name, String type) {
        ctx.response()
                .putHeader("Content-Type", type)
                .putHeader("Cache-Control", "no-cache")
                .putHeader("X-Content-Type-Options", "nosniff")
                .end(assets.get(name));
    }

    private void page(RoutingContext ctx, String name, int status) {
        ctx.response()
                .setStatusCode(status)
                .putHeader("Content-Type", "text/html; charset=utf-8")
                .putHeader("Cache-Control", "no-store")
                .putHeader("X-Content-Type-Options", "nosniff")
                .putHeader("Referrer-Policy", "no-referrer")
                .putHeader(
                        "Content-Security-Policy",
                        "default-src 'self'; img-src 'self'; style-src 'self'; script-src 'self';"
                                + " frame-ancestors 'none'; form-action 'self'")
                .end(assets.get(name));
    }

    /**
     * Lets an admitted request on, as its viewer; answers another 401: the token form for the page, JSON for the API.
     */
    private void admit(RoutingContext ctx) {
        Cookie cookie = ctx.request().getCookie(ConsoleAccess.COOKIE);
        Optional<ConsoleAccess.Viewer> viewer = access.viewer(
                ctx.request().getHeader("Authorization"),
                cookie == null ? null : cookie.getValue(),
                access.producerHeader().map(ctx.request()::getHeader).orElse(null));
        if (viewer.isPresent()) {
            ctx.put(VIEWER, viewer.get());
            ctx.next();
            return;
        }
        if (ctx.request().path().startsWith("/console/api")) {
            ctx.response().putHeader("WWW-Authenticate", "Bearer realm=\"image-worker console\"");
            send(
                    ctx,
                    401,
                    problem(
                            "UNAUTHORIZED",
                            access.producersAdmitted()
                                    ? "the console needs its token (IMAGE_WORKER_CONSOLE_TOKEN) or a producer's status"
                                            + " token (IMAGE_WORKER_STATUS_TOKENS)"
                                    : "the console needs its token (IMAGE_WORKER_CONSOLE_TOKEN)"));
        } else {
            page(ctx, "login.html", 401);
        }
    }

    private void login(RoutingContext ctx) {
        if (!access.guarded()) {
            redirect(ctx);
            return;
        }
        Optional<String> cookie = access.cookieFor(ctx.request().getFormAttribute("token"));
        if (cookie.isEmpty()) {
            page(ctx, "login.html", 401);
            return;
        }
        ctx.response()
                .addCookie(Cookie.cookie(ConsoleAccess.COOKIE, cookie.get())
                        .setPath("/console")
                        .setHttpOnly(true)
                        .setSecure(ctx.request().isSSL())
                        .setSameSite(CookieSameSite.STRICT));
        redirect(ctx);
    }

    private void logout(RoutingContext ctx) {
        ctx.response()
                .addCookie(Cookie.cookie(ConsoleAccess.COOKIE, "")
                        .setPath("/console")
                        .setMaxAge(0)
                        .setHttpOnly(true)
                        .setSameSite(CookieSameSite.STRICT));
        redirect(ctx);
    }

    private static void redirect(RoutingContext ctx) {
        ctx.response().setStatusCode(303).putHeader("Location", "/console").end();
    }

    /** What the page needs to know; for a producer, nothing of the whole feed's (its size tells of the others). */
    private void info(RoutingContext ctx) {
        ConsoleAccess.Viewer viewer = viewer(ctx);
        Map<String, Object> info = new LinkedHashMap<>();
        info.put("actions", actions.allowed());
        info.put("cancelTopic", actions.cancelTopic().isPresent());
        info.put("producersByTopic", config.producerIdentity() == WorkerConfig.ProducerIdentity.topic);
        info.put("producers", viewer.operator() ? config.producers().orElse(List.of()) : List.of(viewer.producer()));
        if (!viewer.operator()) {
            info.put("producer", viewer.producer());
        }
        info.put("guarded", access.guarded());
        info.put("maxEntries", feed.maxEntries());
        if (viewer.operator()) {
            info.put("entries", feed.size());
            info.put("bytes", feed.bytes());
            info.put("forgotten", feed.forgotten());
            info.put("recordsRead", reader.recordsRead());
        }
        info.put("seq", feed.seq());
        send(ctx, 200, info);
    }

    private static ConsoleAccess.Viewer viewer(RoutingContext ctx) {
        ConsoleAccess.Viewer viewer = ctx.get(VIEWER);
        if (viewer == null) {
            throw new IllegalStateException("a console route was reached without being admitted");
        }
        return viewer;
    }

    /** The last entries, the latest first, by {@code producer} and {@code state} when given; {@code seq} to follow. */
    private void list(RoutingContext ctx) {
        ConsoleAccess.Viewer viewer = viewer(ctx);
        String producer = ctx.request().getParam("producer");
        String state = ctx.request().getParam("state");
        int limit = intParam(ctx, "limit", feed.maxEntries(), 1, feed.maxEntries());
        Predicate<ConsoleEntry> filter = entry -> viewer.sees(entry)
                && (producer == null
                        || producer.isEmpty()
                        || producer.equals(entry.producer() == null ? ImageRequest.DEFAULT_PRODUCER : entry.producer()))
                && (state == null || state.isEmpty() || state.equals(entry.state()));
        long seq = feed.seq();
        Map<String, Object> page = new LinkedHashMap<>();
        page.put("seq", seq);
        Map<String, Integer> producers = feed.producers();
        page.put(
                "producers",
                viewer.operator()
                        ? producers
                        : producers.containsKey(viewer.producer())
                                ? Map.of(viewer.producer(), producers.get(viewer.producer()))
                                : Map.of());
        page.put("entries", feed.latest(filter, limit));
        send(ctx, 200, page);
    }

    private void one(RoutingContext ctx) {
        Optional<ConsoleEntry> entry = entry(ctx);
        if (entry.isEmpty()) {
            send(
                    ctx,
                    404,
                    problem("UNKNOWN", "the console has no such request (it may be older than the entries kept)"));
            return;
        }
        send(ctx, 200, entry.get());
    }

    /**
     * The request the route names, if the console has it and its viewer may see it: the viewer's own for a producer,
     * else the one of {@code ?producer=} (where ids are unique within a producer). Another producer's reads as none.
     */
    private Optional<ConsoleEntry> entry(RoutingContext ctx) {
        ConsoleAccess.Viewer viewer = viewer(ctx);
        String id = ctx.pathParam("id");
        if (id == null || !RequestId.isValid(id)) {
            return Optional.empty();
        }
        String producer = viewer.operator() ? ctx.request().getParam("producer") : viewer.producer();
        if (producer != null && !ImageRequest.PRODUCER.matcher(producer).matches()) {
            return Optional.empty();
        }
        return feed.find(producer, id).filter(viewer::sees);
    }

    /** Streams image {@code n} of a request the console knows, from the worker's bucket, off the event loop. */
    private void image(RoutingContext ctx) {
        Optional<ConsoleEntry.Image> image = entry(ctx)
                .map(ConsoleEntry::images)
                .flatMap(images -> {
                    int n = intParam(ctx.pathParam("n"), -1);
                    return n >= 0 && n < images.size() ? Optional.of(images.get(n)) : Optional.empty();
                });
        if (image.isEmpty()
                || image.get().key() == null
                || !store.bucket().equals(image.get().bucket())
                || image.get().key().startsWith(storage.resultPrefix())) {
            send(ctx, 404, problem("UNKNOWN", "no such image of a request the console knows"));
            return;
        }
        Context context = ctx.vertx().getOrCreateContext();
        store.stream(image.get().bucket(), image.get().key())
                .subscribe()
                .with(
                        found -> context.runOnContext(ignored -> stream(ctx, context, found)),
                        failure -> context.runOnContext(ignored -> {
                            Log.debugf("Console: reading an image failed: %s", failure);
                            send(ctx, 502, problem("STORE_UNAVAILABLE", "the store could not be read; try again"));
                        }));
    }

    private void stream(RoutingContext ctx, Context context, Optional<ImageStore.ObjectStream> found) {
        if (found.isEmpty()) {
            send(ctx, 404, problem("UNKNOWN", "the image is not in the store"));
            return;
        }
        ImageStore.ObjectStream object = found.get();
        if (object.contentType() == null || !IMAGE_TYPES.contains(object.contentType())) {
            // Only images: not whatever an event forged by a writer of the result topics names.
            object.body().subscribe(new Cancelled());
            send(ctx, 404, problem("UNKNOWN", "that object is not an image"));
            return;
        }
        HttpServerResponse response = ctx.response()
                .putHeader("Content-Type", object.contentType())
                .putHeader("Cache-Control", "private, max-age=86400, immutable")
                .putHeader("X-Content-Type-Options", "nosniff");
        if (object.length() != null) {
            response.putHeader("Content-Length", Long.toString(object.length()));
        } else {
            response.setChunked(true);
        }
        object.body().subscribe(new ToResponse(response, context));
    }

    /** Writes the store's chunks to the response one at a time, asking for the next once the response can take it. */
    private static final class ToResponse implements Subscriber<ByteBuffer> {
        private final HttpServerResponse response;
        private final Context context;
        private volatile Subscription subscription;

        ToResponse(HttpServerResponse response, Context context) {
            this.response = response;
            this.context = context;
        }

        @Override
        public void onSubscribe(Subscription subscription) {
            this.subscription = subscription;
            context.runOnContext(ignored -> {
                response.closeHandler(closed -> subscription.cancel());
                subscription.request(1);
            });
        }

        @Override
        public void onNext(ByteBuffer chunk) {
            byte[] bytes = new byte[chunk.remaining()];
            chunk.get(bytes);
            context.runOnContext(ignored -> {
                if (response.closed()) {
                    subscription.cancel();
                    return;
                }
                response.write(Buffer.buffer(bytes));
                if (response.writeQueueFull()) {
                    response.drainHandler(drained -> subscription.request(1));
                } else {
                    subscription.request(1);
                }
            });
        }

        @Override
        public void onError(Throwable failure) {
            context.runOnContext(ignored -> response.reset());
        }

        @Override
        public void onComplete() {
            context.runOnContext(ignored -> {
                if (!response.ended()) {
                    response.end();
                }
            });
        }
    }

    /** Takes an object's body only to cancel it. */
    private static final class Cancelled implements Subscriber<ByteBuffer> {
        @Override
        public void onSubscribe(Subscription subscription) {
            subscription.cancel();
        }

        @Override
        public void onNext(ByteBuffer chunk) {}

        @Override
        public void onError(Throwable failure) {}

        @Override
        public void onComplete() {}
    }

    /**
     * The changes after {@code after} as server-sent events ({@code event: entries}, a JSON array), read from the feed
     * every {@link #TICK_MS}; a comment every 15 s keeps a quiet stream open through proxies.
     */
    private void events(RoutingContext ctx) {
        ConsoleAccess.Viewer viewer = viewer(ctx);
        long after = Math.max(0, longParam(ctx.request().getParam("after"), feed.seq()));
        HttpServerResponse response = ctx.response()
                .setChunked(true)
                .putHeader("Content-Type", "text/event-stream")
                .putHeader("Cache-Control", "no-store")
                .putHeader("X-Accel-Buffering", "no");
        response.write(": image-worker console\n\n");
        long[] last = {after};
        int[] quiet = {0};
        long timer = ctx.vertx().setPeriodic(TICK_MS, id -> {
            if (response.closed() || response.ended()) {
                ctx.vertx().cancelTimer(id);
                return;
            }
            if (response.writeQueueFull()) {
                return;
            }
            boolean wrote = false;
            for (int batch = 0; batch < BATCHES_PER_TICK && !response.writeQueueFull(); batch++) {
                // A producer's stream passes over the others' changes: looked at, never sent.
                ConsoleFeed.Batch changed = feed.since(last[0], MOST_PER_BATCH, viewer::sees);
                if (changed.last() == last[0]) {
                    break;
                }
                last[0] = changed.last();
                if (!changed.entries().isEmpty()) {
                    wrote = true;
                    response.write("event: entries\ndata: " + text(changed.entries()) + "\n\n");
                }
            }
            if (wrote) {
                quiet[0] = 0;
            } else if (++quiet[0] * TICK_MS >= TimeUnit.SECONDS.toMillis(15)) {
                quiet[0] = 0;
                response.write(": keep-alive\n\n");
            }
        });
        response.closeHandler(closed -> ctx.vertx().cancelTimer(timer));
    }

    /** Refuses an action the console does not allow, and a request without the header a page of this site sends. */
    private void mayAct(RoutingContext ctx) {
        if (ctx.request().getHeader("X-Console-Action") == null) {
            send(ctx, 403, problem("FORBIDDEN", "an action needs the header X-Console-Action"));
            return;
        }
        ctx.next();
    }

    private void cancel(RoutingContext ctx) {
        if (!actions.mayCancel()) {
            send(ctx, 403, problem("ACTION_OFF", "cancelling is not allowed here (IMAGE_WORKER_CONSOLE_ACTIONS)"));
            return;
        }
        if (actions.cancelTopic().isEmpty()) {
            send(ctx, 409, problem("NO_CANCEL_TOPIC", "cancellation is off (IMAGE_WORKER_TOPIC_CANCEL)"));
            return;
        }
        String id = ctx.pathParam("id");
        if (id == null || !RequestId.isValid(id)) {
            send(ctx, 400, problem("INVALID_REQUEST_ID", "a requestId is " + RequestId.RULE));
            return;
        }
        JsonNode body = body(ctx);
        String producer =
                body.path("producer").isTextual() ? body.path("producer").asText() : null;
        if (producer != null && !ImageRequest.PRODUCER.matcher(producer).matches()) {
            producer = null;
        }
        // A producer cancels its own requests only: on its own cancel topic, whose cancels stop only its requests.
        if (refusedAsAnother(ctx, producer, "a producer's console cancels that producer's requests only")) {
            return;
        }
        producer = actor(ctx, producer);
        try {
            actions.cancel(id, producer).get(15, TimeUnit.SECONDS);
            Log.infof("[%s] Console: cancel published to %s", id, actions.cancelTopicOf(producer));
            send(ctx, 202, Map.of("requestId", id, "cancel", "published"));
        } catch (Exception e) {
            Log.warnf("[%s] Console: the cancel could not be published: %s", id, e.toString());
            send(ctx, 503, problem("KAFKA_UNAVAILABLE", "the cancel could not be published; try again"));
        }
    }

    /**
     * Whether the viewer of {@code ctx} is a producer naming another producer ({@code claimed}) for an action: then
     * 403 {@code refusal} is answered.
     */
    private boolean refusedAsAnother(RoutingContext ctx, String claimed, String refusal) {
        ConsoleAccess.Viewer viewer = viewer(ctx);
        if (viewer.operator() || claimed == null || claimed.equals(viewer.producer())) {
            return false;
        }
        send(ctx, 403, problem("FORBIDDEN", refusal));
        return true;
    }

    /** The producer an action is made as: an operator's as {@code claimed} (null: none named), a producer's as itself. */
    private String actor(RoutingContext ctx, String claimed) {
        ConsoleAccess.Viewer viewer = viewer(ctx);
        return viewer.operator() ? claimed : viewer.producer();
    }

    private void submit(RoutingContext ctx) {
        if (!actions.maySubmit()) {
            send(
                    ctx,
                    403,
                    problem("ACTION_OFF", "sending requests is not allowed here (IMAGE_WORKER_CONSOLE_ACTIONS)"));
            return;
        }
        JsonNode body = body(ctx);
        String size =
                body.path("size").isTextual() && !body.path("size").asText().isBlank()
                        ? body.path("size").asText().trim()
                        : null;
        String producer = body.path("producer").isTextual()
                        && !body.path("producer").asText().isBlank()
                ? body.path("producer").asText().trim()
                : null;
        // A producer sends as itself only.
        if (refusedAsAnother(ctx, producer, "a producer's console sends requests as that producer only")) {
            return;
        }
        producer = actor(ctx, producer);
        ConsoleActions.Submission submission = new ConsoleActions.Submission(
                body.path("prompt").isTextual() ? body.path("prompt").asText() : null,
                producer,
                size,
                body.path("count").canConvertToInt() ? body.path("count").asInt() : 1);
        Optional<String> refusal = submission.refusal().or(() -> actions.topicRefusal(submission));
        if (refusal.isPresent()) {
            send(ctx, 400, problem("INVALID_REQUEST", refusal.get()));
            return;
        }
        try {
            String id = actions.submit(submission).get(15, TimeUnit.SECONDS);
            feed.apply(new ConsoleEntry(
                    0,
                    id,
                    producer,
                    "submitted",
                    "generate",
                    null,
                    null,
                    null,
                    null,
                    new ConsoleEntry.Size(size == null ? "auto" : size, null, null, null),
                    null,
                    submission.count() > 1 ? new ConsoleEntry.Variants(submission.count(), 0, 0) : null,
                    System.currentTimeMillis()));
            Log.infof("[%s] Console: request published", id);
            send(ctx, 202, Map.of("requestId", id));
        } catch (Exception e) {
            Log.warnf("Console: a request could not be published: %s", e.toString());
            send(ctx, 503, problem("KAFKA_UNAVAILABLE", "the request could not be published; try again"));
        }
    }

    private JsonNode body(RoutingContext ctx) {
        try {
            Buffer body = ctx.body().buffer();
            JsonNode node = body == null || body.length() == 0 ? null : json.readTree(body.getBytes());
            return node == null ? json.createObjectNode() : node;
        } catch (IOException e) {
            return json.createObjectNode();
        }
    }

    private static Map<String, String> problem(String error, String message) {
        return Map.of("error", error, "message", message);
    }

    private void send(RoutingContext ctx, int status, Object body) {
        ctx.response()
                .setStatusCode(status)
                .putHeader("Content-Type", JSON_TYPE)
                .putHeader("Cache-Control", "no-store")
                .putHeader("X-Content-Type-Options", "nosniff")
                .end(text(body));
    }

    private String text(Object body) {
        try {
            return json.writeValueAsString(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static int intParam(RoutingContext ctx, String name, int otherwise, int least, int most) {
        int value = intParam(ctx.request().getParam(name), otherwise);
        return Math.max(least, Math.min(most, value));
    }

    private static int intParam(String text, int otherwise) {
        try {
            return text == null ? otherwise : Integer.parseInt(text);
        } catch (NumberFormatException e) {
            return otherwise;
        }
    }

    private static long longParam(String text, long otherwise) {
        try {
            return text == null ? otherwise : Long.parseLong(text);
        } catch (NumberFormatException e) {
            return otherwise;
        }
    }
}
