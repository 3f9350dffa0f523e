package io.imageworker.testing.gateway;

import static io.imageworker.testing.gateway.Envelopes.JSON;
import static java.nio.charset.StandardCharsets.UTF_8;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.imageworker.testing.gateway.GatewayRoutes.Endpoint;
import io.imageworker.testing.gateway.MultipartParser.Part;
import io.imageworker.testing.gateway.SizeRules.Decision;
import io.imageworker.testing.gateway.SizeRules.Size;
import io.vertx.core.Context;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import java.io.IOException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Answers the gateway origin. The order of checks is new-api's (gateway contract §2, §3, §7): route, token, concurrency
 * cap, body, model, request checks, pre-charge; then the simulated upstream (fault, latency, moderation, image checks,
 * size) and the bill.
 */
final class GatewayHandler implements Handler<HttpServerRequest> {

    static final String VERSION = "v0.9.9-simulator";
    private static final String JSON_TYPE = "application/json; charset=utf-8";
    private static final String HTML_TYPE = "text/html; charset=utf-8";
    private static final String NO_MODEL = "Model name not specified, model name cannot be empty";
    private static final Set<String> SUPPORTED_IMAGES = Set.of(ImageProbe.PNG, ImageProbe.JPEG, ImageProbe.WEBP);
    private static final byte[] NOT_AN_IMAGE =
            "upstream answered with text, not an image: {\"status\":\"ok\"}\n".getBytes(UTF_8);
    private static final String BAD_BASE64 = "iVBORw0KGgo*not~base64!data%%==";

    private final Vertx vertx;
    private final SimulatorState state;

    GatewayHandler(Vertx vertx, SimulatorState state) {
        this.vertx = vertx;
        this.state = state;
    }

    /** What the simulated upstream is asked to do. */
    private record Job(
            boolean edit,
            String prompt,
            String size,
            int n,
            boolean nSent,
            boolean moderationSent,
            List<Part> images,
            Part mask,
            List<Part> files) {}

    @Override
    public void handle(HttpServerRequest req) {
        SimulatorSettings settings = state.settings();
        if (state.connections.droppedAsStale(req, settings.staleAfter())) {
            return;
        }
        String method = req.method().name();
        String path = req.path() == null ? "/" : req.path();
        boolean imageRoute =
                "POST".equals(method) && (GatewayRoutes.GENERATIONS.equals(path) || GatewayRoutes.EDITS.equals(path));
        int concurrency = imageRoute ? state.enterImageCall() : 0;
        String requestId = state.newRequestId();
        CallEntry entry = state.record(requestId, method, path, concurrency);
        entry.traceparent(req.getHeader("traceparent"));
        Exchange x = new Exchange(req, entry, settings, imageRoute);
        HttpServerResponse response = req.response();
        response.putHeader("X-Oneapi-Request-Id", requestId);
        if (settings.flavour() == Flavour.OPEN_SOURCE) {
            response.putHeader("X-New-Api-Version", VERSION);
        }
        response.closeHandler(v -> x.connectionClosed());
        req.exceptionHandler(e -> x.connectionClosed());
        dispatch(x, method, path);
    }

    private void dispatch(Exchange x, String method, String path) {
        Flavour flavour = x.settings.flavour();
        Optional<Endpoint> endpoint = GatewayRoutes.find(method, path, flavour);
        if (endpoint.isPresent()) {
            Endpoint ep = endpoint.get();
            switch (ep) {
                case GENERATIONS -> imageCall(x, this::generations);
                case EDITS -> imageCall(x, this::edits);
                case PRICING, MODELS, V1BETA_MODELS -> {
                    if (authenticate(x)) {
                        listing(x, ep);
                    }
                }
                default -> {
                    if (!authenticate(x)) {
                        return;
                    }
                    if ("GET".equals(method)) {
                        x.relayError(501, "API not implemented", "api_not_implemented");
                    } else {
                        readBody(x, body -> otherRoute(x, ep, body));
                    }
                }
            }
            return;
        }
        Optional<String> redirect = GatewayRoutes.trailingSlashTarget(method, path, flavour);
        if (redirect.isPresent() && flavour == Flavour.OPEN_SOURCE) {
            // gin's RedirectTrailingSlash, before any middleware of the route: 301 for GET, 307 otherwise.
            x.redirect("GET".equals(method) ? 301 : 307, redirect.get());
            return;
        }
        if (flavour == Flavour.OPEN_SOURCE && !GatewayRoutes.isApiPrefixed(path)) {
            x.html(200, Envelopes.consolePage(), null);
            return;
        }
        x.json(404, Envelopes.invalidUrl(method, path), "Invalid URL (" + method + " " + path + ")");
    }

    private void imageCall(Exchange x, BiConsumer<Exchange, byte[]> then) {
        if (authenticate(x) && underCap(x)) {
            readBody(x, body -> then.accept(x, body));
        }
    }

    /**
     * The token check, before the body is read. SPEC wants exactly {@code Bearer sk-...}; OPEN_SOURCE parses like
     * new-api ({@code Bearer } optional, {@code sk-} stripped, a {@code -suffix} pins a channel: 403 for non-admins).
     */
    private boolean authenticate(Exchange x) {
        String header = x.req.getHeader("Authorization");
        SimulatorSettings s = x.settings;
        boolean valid;
        boolean channelPin = false;
        if (s.flavour() == Flavour.SPEC) {
            valid = header != null
                    && header.regionMatches(true, 0, "Bearer ", 0, 7)
                    && header.substring(7).trim().equals(s.apiKey());
        } else {
            String key = header == null ? "" : header.trim();
            if (key.startsWith("Bearer ") || key.startsWith("bearer ")) {
                key = key.substring(7).trim();
            }
            if (key.startsWith("sk-")) {
                key = key.substring(3);
            }
            int dash = key.indexOf('-');
            valid = (dash < 0 ? key : key.substring(0, dash)).equals(s.apiKey().substring(3));
            channelPin = valid && dash >= 0;
        }
        if (!valid || state.revoked() || state.ledger.exhausted()) {
            x.gatewayAbort(401, "Invalid token", "");
            return false;
        }
        if (channelPin) {
            x.gatewayAbort(403, "普通用户不支持指定渠道", "");
            return false;
        }
        return true;
    }

    private boolean underCap(Exchange x) {
        int cap = x.settings.concurrencyCap();
        if (cap <= 0 || x.entry.concurrencyAtArrival() <= cap) {
            return true;
        }
        if (x.settings.retryAfterSeconds() > 0) {
            x.req.response().putHeader("Retry-After", String.valueOf(x.settings.retryAfterSeconds()));
        }
        if (x.settings.flavour() == Flavour.SPEC) {
            x.empty(429, "concurrency cap " + cap + " exceeded");
        } else {
            x.gatewayAbort(429, "您已达到请求数限制：1分钟内最多请求" + cap + "次", "");
        }
        return false;
    }

    private void readBody(Exchange x, Consumer<byte[]> then) {
        HttpServerRequest req = x.req;
        long max = x.settings.maxBodyBytes();
        String length = req.getHeader("Content-Length");
        if (length != null && parseLong(length, 0) > max) {
            x.tooLarge();
            return;
        }
        if ("100-continue".equalsIgnoreCase(req.getHeader("Expect"))) {
            req.response().writeContinue();
        }
        Buffer body = Buffer.buffer();
        req.handler(chunk -> {
            if (x.finished()) {
                return;
            }
            if ((long) body.length() + chunk.length() > max) {
                x.tooLarge();
            } else {
                body.appendBuffer(chunk);
            }
        });
        req.endHandler(v -> {
            if (!x.finished()) {
                then.accept(body.getBytes());
            }
        });
    }

    private void generations(Exchange x, byte[] body) {
        CallEntry e = x.entry;
        String contentType = x.req.getHeader("Content-Type");
        boolean json =
                contentType != null && contentType.toLowerCase(Locale.ROOT).startsWith("application/json");
        JsonNode root = JSON.createObjectNode();
        if (json && !isBlank(body)) {
            Optional<JsonNode> parsed = parseJson(body);
            if (parsed.isEmpty() || !parsed.get().isObject()) {
                x.gatewayAbort(400, "Invalid request: Invalid request: invalid JSON request body", "");
                return;
            }
            root = parsed.get();
            root.fields().forEachRemaining(f -> e.textField(f.getKey(), text(f.getValue())));
        }
        JsonNode model = root.get("model");
        if (model != null && !model.isNull() && !model.isTextual()) {
            x.gatewayAbort(400, "Invalid request: Invalid request: field model must be a string", "");
            return;
        }
        if (!modelAccepted(x, model == null || model.isNull() ? "" : model.asText(), true)) {
            return;
        }
        String size = text(root.get("size"));
        e.requestedSize(size);
        JsonNode nNode = root.get("n");
        int n = 1;
        if (nNode != null && !nNode.isNull()) {
            if (!nNode.isIntegralNumber() || !nNode.canConvertToInt() || nNode.asInt() < 0) {
                x.relayError(
                        500,
                        "json: cannot unmarshal " + nNode.getNodeType().name().toLowerCase(Locale.ROOT)
                                + " into Go struct field ImageRequest.n of type uint",
                        "invalid_request");
                return;
            }
            n = Math.max(1, nNode.asInt());
        }
        if (size != null && size.contains("×")) {
            x.relayError(
                    500,
                    "size an unexpected error occurred in the parameter, please use 'x' instead of the"
                            + " multiplication sign '×'",
                    "invalid_request");
            return;
        }
        String prompt = text(root.get("prompt"));
        proceed(
                x,
                new Job(
                        false,
                        prompt == null ? "" : prompt,
                        size,
                        n,
                        root.has("n"),
                        root.has("moderation"),
                        List.of(),
                        null,
                        List.of()));
    }

    private void edits(Exchange x, byte[] body) {
        CallEntry e = x.entry;
        Optional<List<Part>> parsed = MultipartParser.parse(x.req.getHeader("Content-Type"), body);
        if (parsed.isEmpty()) {
            // Go cannot parse the form, so new-api finds no model (gateway contract §4).
            x.gatewayAbort(400, NO_MODEL, "");
            return;
        }
        Map<String, String> fields = new LinkedHashMap<>();
        List<Part> files = new ArrayList<>();
        for (Part part : parsed.get()) {
            if (part.isFile()) {
                files.add(part);
            } else {
                fields.putIfAbsent(part.name(), part.text());
                e.textField(part.name(), part.text());
            }
        }
        recordFiles(e, files, List.of(), null);
        e.requestedSize(fields.get("size"));
        if (!modelAccepted(x, fields.getOrDefault("model", ""), false)) {
            return;
        }
        int n = Math.max(1, (int) parseLong(fields.getOrDefault("n", ""), 0));

        // new-api's choice of image parts (gateway contract §4): image > image[] > image[*]; first match wins.
        List<Part> image = files.stream().filter(p -> p.name().equals("image")).toList();
        List<Part> imageArray =
                files.stream().filter(p -> p.name().equals("image[]")).toList();
        List<Part> indexed = files.stream()
                .filter(p -> p.name().startsWith("image[") && !p.name().equals("image[]"))
                .toList();
        List<Part> selected;
        if (!image.isEmpty()) {
            selected = image;
            if (!imageArray.isEmpty() || !indexed.isEmpty()) {
                e.silentChange(SilentChange.IMAGE_ARRAY_DROPPED);
            }
        } else if (!imageArray.isEmpty()) {
            selected = imageArray;
        } else {
            // Collected from a Go map, so in no defined order; the simulator reverses it to make that visible.
            List<Part> reversed = new ArrayList<>(indexed);
            java.util.Collections.reverse(reversed);
            selected = List.copyOf(reversed);
            if (selected.size() > 1) {
                e.silentChange(SilentChange.REFERENCE_ORDER_SHUFFLED);
            }
        }
        List<Part> masks = files.stream().filter(p -> p.name().equals("mask")).toList();
        Part mask = masks.isEmpty() ? null : masks.get(0);
        if (masks.size() > 1) {
            e.silentChange(SilentChange.EXTRA_MASKS_DROPPED);
        }
        if (selected.isEmpty()) {
            x.relayError(500, "image is required", "convert_request_failed");
            return;
        }
        recordFiles(e, files, selected, mask);
        String prompt = fields.getOrDefault("prompt", "");
        proceed(
                x,
                new Job(
                        true,
                        prompt,
                        fields.get("size"),
                        n,
                        fields.containsKey("n"),
                        fields.containsKey("moderation"),
                        selected,
                        mask,
                        files));
    }

    /**
     * The model check of new-api's distributor. An empty model on generations becomes {@code dall-e} in
     * OPEN_SOURCE; elsewhere it is 400 {@value #NO_MODEL}. A model other than the configured one is
     * {@code model_not_found}: 503 in OPEN_SOURCE, 400 in SPEC.
     */
    private boolean modelAccepted(Exchange x, String model, boolean generations) {
        Flavour flavour = x.settings.flavour();
        if (model.isEmpty()) {
            if (generations && flavour == Flavour.OPEN_SOURCE) {
                model = "dall-e";
            } else {
                x.gatewayAbort(400, NO_MODEL, "");
                return false;
            }
        }
        if (model.equals(x.settings.model())) {
            return true;
        }
        x.gatewayAbort(
                flavour == Flavour.OPEN_SOURCE ? 503 : 400,
                "No available channel for model " + model + " under group default (distributor)",
                "model_not_found");
        return false;
    }

    /** Gateway checks that need the whole request, then a fault or the latency, then the upstream. */
    private void proceed(Exchange x, Job job) {
        SimulatorSettings s = x.settings;
        x.entry.n(job.n());
        if (s.flavour() == Flavour.SPEC && job.prompt().isBlank()) {
            x.relayError(500, "prompt is required", "invalid_request");
            return;
        }
        if (!s.sensitiveWord().isEmpty() && job.prompt().contains(s.sensitiveWord())) {
            x.relayError(500, "sensitive_words_detected", "sensitive_words_detected");
            return;
        }
        long cost = s.pricePerCall() * job.n();
        if (s.flavour() == Flavour.OPEN_SOURCE) {
            Optional<String> refusal = state.ledger.preChargeRefusal(cost);
            if (refusal.isPresent()) {
                x.relayError(403, refusal.get(), "pre_consume_token_quota_failed");
                return;
            }
        }
        if (state.holdsNext()) {
            x.hang();
            return;
        }
        Context context = vertx.getOrCreateContext();
        if (state.waitsAtTheGate(() -> context.runOnContext(opened -> {
            if (!x.finished()) {
                pastTheGate(x, job, cost);
            }
        }))) {
            return;
        }
        pastTheGate(x, job, cost);
    }

    /** A fault, or the latency and then the upstream's answer. */
    private void pastTheGate(Exchange x, Job job, long cost) {
        SimulatorSettings s = x.settings;
        Fault fault = state.takeFault();
        x.entry.fault(fault);
        if (fault != null) {
            switch (fault.kind()) {
                case HANG -> {
                    x.bill(fault.billedUnder(s.flavour()), cost);
                    x.hang();
                    return;
                }
                case HTML_CONSOLE_PAGE -> {
                    x.bill(fault.billedUnder(s.flavour()), cost);
                    x.html(200, Envelopes.consolePage(), "console page");
                    return;
                }
                case PROXY_HTML -> {
                    after(fault.delay().toMillis(), () -> {
                        if (!x.finished()) {
                            x.bill(fault.billedUnder(s.flavour()), cost);
                            x.html(fault.status(), Envelopes.proxyPage(fault.status()), "proxy error page");
                        }
                    });
                    return;
                }
                default -> {}
            }
        }
        after(s.latency().sampleMillis(), () -> upstream(x, job, fault, cost));
    }

    /** The simulated upstream's answer, after the latency. */
    private void upstream(Exchange x, Job job, Fault fault, long cost) {
        if (x.finished()) {
            return;
        }
        SimulatorSettings s = x.settings;
        Flavour flavour = s.flavour();
        if (fault != null && !fault.altersSuccess()) {
            x.bill(fault.billedUnder(flavour), cost);
            switch (fault.kind()) {
                case STATUS -> x.json(fault.status(), fault.body(), "injected status " + fault.status());
                case MODERATION_REFUSAL -> x.json(400, Envelopes.moderationRefusal(), "moderation_blocked");
                case RATE_LIMITED -> {
                    if (fault.retryAfterSeconds() > 0) {
                        x.req.response().putHeader("Retry-After", String.valueOf(fault.retryAfterSeconds()));
                    }
                    x.json(429, Envelopes.upstreamRateLimit(s.model()), "rate_limit_exceeded");
                }
                case SERVER_ERROR -> {
                    if (fault.status() == 500) {
                        x.relayError(500, "upstream error: do request failed", "do_request_failed");
                    } else {
                        x.json(fault.status(), Envelopes.badResponseStatusCode(), "openai_error");
                    }
                }
                default -> throw new IllegalStateException("not an answer fault: " + fault);
            }
            return;
        }
        if (!s.moderationTrigger().isEmpty() && job.prompt().contains(s.moderationTrigger())) {
            // Billed in the specification; the open-source gateway refunds every non-2xx (gateway contract §7).
            x.bill(flavour == Flavour.SPEC, cost);
            x.json(400, Envelopes.moderationRefusal(), "moderation_blocked");
            return;
        }
        if (job.edit()) {
            List<Part> used = job.images();
            if (fault != null && fault.kind() == Fault.Kind.DROP_LATER_REFERENCE_IMAGES && used.size() > 1) {
                used = used.subList(0, 1);
                x.entry.silentChange(SilentChange.LATER_IMAGES_DROPPED);
                recordFiles(x.entry, job.files(), used, job.mask());
            }
            for (int i = 0; i < used.size(); i++) {
                Part part = used.get(i);
                String real = ImageProbe.realType(part.data());
                if (!SUPPORTED_IMAGES.contains(real)) {
                    String message = "Invalid file 'image': unsupported mimetype ('" + real
                            + "'). Supported file formats are 'image/jpeg', 'image/png', and 'image/webp'.";
                    x.json(
                            400,
                            Envelopes.upstreamError(
                                    message, "invalid_request_error", "image", "unsupported_file_mimetype"),
                            message);
                    return;
                }
                if (!real.equals(ImageProbe.extensionType(part.filename()))) {
                    String message =
                            "Invalid image file or mode for image " + (i + 1) + ", please check your image file.";
                    x.json(400, Envelopes.upstreamError(message, "invalid_request_error", "", null), message);
                    return;
                }
            }
        }
        Decision decision = SizeRules.decide(job.size(), s.oversizeMode());
        if (decision.rejected()) {
            x.json(
                    400,
                    Envelopes.upstreamError(
                            decision.rejection(), "image_generation_user_error", "size", "invalid_value"),
                    decision.rejection());
            return;
        }
        success(x, job, decision, fault, cost);
    }

    private void success(Exchange x, Job job, Decision decision, Fault fault, long cost) {
        SimulatorSettings s = x.settings;
        CallEntry e = x.entry;
        Fault.Kind kind = fault == null ? null : fault.kind();
        if (decision.change() != null) {
            e.silentChange(decision.change());
        }
        if (job.nSent()) {
            e.silentChange(SilentChange.N_IGNORED);
        }
        if (job.moderationSent()) {
            e.silentChange(SilentChange.MODERATION_IGNORED);
        }
        Size size = decision.output();
        if (kind == Fault.Kind.WRONG_OUTPUT_SIZE) {
            size = fault.width() > 0 && fault.height() > 0
                    ? new Size(fault.width(), fault.height())
                    : size.width() != size.height() ? new Size(size.height(), size.width()) : new Size(1536, 1024);
            e.silentChange(SilentChange.OUTPUT_SIZE_WRONG);
        }
        ResponseForm form =
                switch (kind == null ? Fault.Kind.STATUS : kind) {
                    case BAD_BASE64 -> ResponseForm.B64;
                    case EXPIRED_URL, HANGING_URL, FOREIGN_URL -> ResponseForm.URL;
                    default -> state.nextForm(s);
                };
        Size output = size;
        vertx.executeBlocking(
                        () -> {
                            CpuBurn.spend(s.cpuPerAnswer());
                            return kind == Fault.Kind.NON_IMAGE_BYTES
                                    ? AnswerImage.of(NOT_AN_IMAGE)
                                    : AnswerImage.cached(
                                            output.width(),
                                            output.height(),
                                            s.imageBytesFor((long) output.width() * output.height()));
                        },
                        false)
                .onComplete(ar -> {
                    if (x.finished()) {
                        return;
                    }
                    if (ar.failed()) {
                        x.relayError(500, "upstream error: do request failed", "do_request_failed");
                        return;
                    }
                    AnswerImage image = ar.result();
                    byte[] bytes = image.png();
                    if (form == ResponseForm.B64
                            && kind != Fault.Kind.BAD_BASE64
                            && kind != Fault.Kind.TRUNCATED_BODY) {
                        // The common answer, written from the cached base64 without copying it: a stand-in that
                        // spends CPU only where it is told to (cpuPerAnswer), however large its images.
                        x.bill(fault == null || fault.billedUnder(s.flavour()), cost);
                        e.image(form, output.text(), null);
                        x.json(200, image.b64Answer(Instant.now().getEpochSecond()), null);
                        return;
                    }
                    ObjectNode item = JSON.createObjectNode();
                    String url = null;
                    if (form == ResponseForm.B64) {
                        item.put(
                                "b64_json",
                                kind == Fault.Kind.BAD_BASE64
                                        ? BAD_BASE64
                                        : Base64.getEncoder().encodeToString(bytes));
                    } else if (kind == Fault.Kind.FOREIGN_URL) {
                        url = fault.body();
                        item.put("url", url);
                    } else {
                        FileOrigin.Mode mode = kind == Fault.Kind.EXPIRED_URL
                                ? FileOrigin.Mode.EXPIRED
                                : kind == Fault.Kind.HANGING_URL ? FileOrigin.Mode.HANG : FileOrigin.Mode.SERVE;
                        url = state.files.put(
                                bytes, "image/png", s.urlLifetime(), mode, fault == null ? 404 : fault.status());
                        item.put("url", url);
                    }
                    ObjectNode root = JSON.createObjectNode();
                    root.put("created", Instant.now().getEpochSecond());
                    ArrayNode data = root.putArray("data");
                    data.add(item);
                    x.bill(fault == null || fault.billedUnder(s.flavour()), cost);
                    e.image(form, output.text(), url);
                    if (kind == Fault.Kind.TRUNCATED_BODY) {
                        x.truncated(Envelopes.write(root));
                    } else {
                        x.json(200, Envelopes.write(root), null);
                    }
                });
    }

    private void otherRoute(Exchange x, Endpoint ep, byte[] body) {
        JsonNode root = JSON.createObjectNode();
        if (!isBlank(body)) {
            Optional<JsonNode> parsed = parseJson(body);
            if (parsed.isEmpty() || !parsed.get().isObject()) {
                x.gatewayAbort(400, "Invalid request: Invalid request: invalid JSON request body", "");
                return;
            }
            root = parsed.get();
            root.fields().forEachRemaining(f -> x.entry.textField(f.getKey(), text(f.getValue())));
        }
        String model = root.path("model").isTextual() ? root.get("model").asText() : "";
        if (model.isBlank()) {
            // The worker's unbillable "is my token alive" probe ends here: authenticated, refused, not billed.
            x.gatewayAbort(400, NO_MODEL, "");
            return;
        }
        long created = Instant.now().getEpochSecond();
        switch (ep) {
            case CHAT -> {
                if (root.path("stream").asBoolean(false)) {
                    String chunk = "{\"id\":\"chatcmpl-sim\",\"object\":\"chat.completion.chunk\",\"created\":"
                            + created + ",\"model\":" + quote(model)
                            + ",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":null}]}";
                    x.stream("data: " + chunk + "\n\ndata: [DONE]\n\n");
                } else {
                    x.json(
                            200,
                            "{\"id\":\"chatcmpl-sim\",\"object\":\"chat.completion\",\"created\":" + created
                                    + ",\"model\":" + quote(model)
                                    + ",\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":"
                                    + "\"ok\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":1,"
                                    + "\"completion_tokens\":1,\"total_tokens\":2}}",
                            null);
                }
            }
            case EMBEDDINGS ->
                x.json(
                        200,
                        "{\"object\":\"list\",\"data\":[{\"object\":\"embedding\",\"index\":0,\"embedding\":[0.0,0.1]}],"
                                + "\"model\":" + quote(model) + ",\"usage\":{\"prompt_tokens\":1,\"total_tokens\":1}}",
                        null);
            case MESSAGES ->
                x.json(
                        200,
                        "{\"id\":\"msg_sim\",\"type\":\"message\",\"role\":\"assistant\",\"model\":" + quote(model)
                                + ",\"content\":[{\"type\":\"text\",\"text\":\"ok\"}],\"stop_reason\":\"end_turn\","
                                + "\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}",
                        null);
            default -> x.relayError(501, "API not implemented", "api_not_implemented");
        }
    }

    private void listing(Exchange x, Endpoint ep) {
        String model = x.settings.model();
        ObjectNode root = JSON.createObjectNode();
        switch (ep) {
            case PRICING -> {
                root.put("success", true);
                ObjectNode entry = root.putArray("data").addObject();
                entry.put("model_name", model);
                entry.put("quota_type", 1);
                entry.put("model_price", (double) x.settings.pricePerCall() / SimulatorSettings.UNITS_PER_DOLLAR);
                entry.put("model_ratio", 0);
                entry.put("completion_ratio", 1);
                entry.putArray("enable_groups").add("default");
                entry.putArray("supported_endpoint_types").add("image-generation");
                root.putObject("group_ratio").put("default", 1);
                root.putObject("usable_group").put("default", "默认分组");
                root.put("pricing_version", "simulator");
            }
            case MODELS -> {
                ObjectNode entry = root.putArray("data").addObject();
                entry.put("id", model);
                entry.put("object", "model");
                entry.put("created", 1_626_777_600);
                entry.put("owned_by", "openai");
                root.put("object", "list");
                root.put("success", true);
            }
            default -> {
                ObjectNode entry = root.putArray("models").addObject();
                entry.put("name", "models/" + model);
                entry.put("displayName", model);
            }
        }
        x.json(200, Envelopes.write(root), null);
    }

    private void recordFiles(CallEntry entry, List<Part> files, List<Part> used, Part mask) {
        List<RecordedCall.FilePart> records = new ArrayList<>(files.size());
        for (Part part : files) {
            int position = indexOfSame(used, part) + 1;
            int[] dims = ImageProbe.dimensions(part.data());
            records.add(new RecordedCall.FilePart(
                    part.name(),
                    part.filename(),
                    part.contentType(),
                    ImageProbe.extensionType(part.filename()),
                    ImageProbe.realType(part.data()),
                    part.data().length,
                    dims == null ? null : dims[0],
                    dims == null ? null : dims[1],
                    position > 0 || part == mask,
                    position));
        }
        entry.fileParts(records);
    }

    private static int indexOfSame(List<Part> list, Part part) {
        for (int i = 0; i < list.size(); i++) {
            if (list.get(i) == part) {
                return i;
            }
        }
        return -1;
    }

    private void after(long millis, Runnable action) {
        if (millis <= 0) {
            action.run();
        } else {
            vertx.setTimer(millis, id -> action.run());
        }
    }

    private static Optional<JsonNode> parseJson(byte[] body) {
        try {
            return Optional.ofNullable(JSON.readTree(body));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    private static String text(JsonNode node) {
        if (node == null || node.isNull()) {
            return null;
        }
        return node.isTextual() ? node.asText() : node.toString();
    }

    private static String quote(String value) {
        return JSON.getNodeFactory().textNode(value).toString();
    }

    private static boolean isBlank(byte[] body) {
        for (byte b : body) {
            if (!Character.isWhitespace(b)) {
                return false;
            }
        }
        return true;
    }

    private static long parseLong(String value, long fallback) {
        try {
            return Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            return fallback;
        }
    }

    /** One call in progress: answers it exactly once, and keeps the record and the in-flight count right. */
    final class Exchange {
        final HttpServerRequest req;
        final CallEntry entry;
        final SimulatorSettings settings;
        private final boolean imageRoute;
        private final long epoch;
        private final AtomicBoolean done = new AtomicBoolean();

        Exchange(HttpServerRequest req, CallEntry entry, SimulatorSettings settings, boolean imageRoute) {
            this.req = req;
            this.entry = entry;
            this.settings = settings;
            this.imageRoute = imageRoute;
            this.epoch = state.epoch();
        }

        boolean finished() {
            return done.get();
        }

        /** Records the end of the call before any byte of the answer leaves, so a client never sees it unfinished. */
        private boolean finish(int status, String message) {
            if (!done.compareAndSet(false, true)) {
                return false;
            }
            entry.finish(status, message, Instant.now());
            state.hanging(this, false);
            if (imageRoute) {
                state.leaveImageCall();
            }
            return true;
        }

        void bill(boolean billed, long units) {
            if (billed) {
                if (epoch == state.epoch()) {
                    state.ledger.charge(units);
                }
                entry.billed(units);
            }
        }

        void json(int status, String body, String message) {
            json(status, Buffer.buffer(body), message);
        }

        void json(int status, Buffer body, String message) {
            answer(status, JSON_TYPE, body, message);
        }

        void gatewayAbort(int status, String message, String code) {
            json(status, Envelopes.gatewayAbort(message, code, entry.requestId()), message);
        }

        void relayError(int status, String message, String code) {
            json(status, Envelopes.relayError(message, code, entry.requestId()), message);
        }

        void html(int status, String body, String message) {
            answer(status, HTML_TYPE, Buffer.buffer(body), message);
        }

        void stream(String events) {
            if (finish(200, null)) {
                req.response()
                        .setStatusCode(200)
                        .putHeader("Content-Type", "text/event-stream")
                        .putHeader("Cache-Control", "no-cache")
                        .end(events);
            }
        }

        /** Answers {@code status} with {@code body} of {@code contentType}, unless the call is already answered. */
        private void answer(int status, String contentType, Buffer body, String message) {
            if (finish(status, message)) {
                req.response()
                        .setStatusCode(status)
                        .putHeader("Content-Type", contentType)
                        .end(body);
            }
        }

        void empty(int status, String message) {
            if (finish(status, message)) {
                req.response().setStatusCode(status).end();
            }
        }

        void redirect(int status, String location) {
            if (finish(status, null)) {
                req.response()
                        .setStatusCode(status)
                        .putHeader("Location", location)
                        .end();
            }
        }

        void tooLarge() {
            String message = "read request body failed: http: request body too large";
            if (finish(413, message)) {
                req.response()
                        .setStatusCode(413)
                        .putHeader("Content-Type", JSON_TYPE)
                        .end(Envelopes.relayError(message, "read_request_body_failed", entry.requestId()))
                        .onComplete(v -> req.connection().close());
            }
        }

        /** 200 with the full {@code Content-Length}, half the bytes, then the connection closes. */
        void truncated(String body) {
            byte[] bytes = body.getBytes(UTF_8);
            if (finish(200, "truncated body")) {
                HttpServerResponse response = req.response();
                response.setStatusCode(200)
                        .putHeader("Content-Type", JSON_TYPE)
                        .putHeader("Content-Length", String.valueOf(bytes.length));
                response.write(Buffer.buffer(Arrays.copyOf(bytes, bytes.length / 2)))
                        .onComplete(v -> req.connection().close());
            }
        }

        void hang() {
            state.hanging(this, true);
        }

        void connectionClosed() {
            finish(0, "connection closed before an answer");
        }

        /** Ends a hanging call from the simulator's side (reset, close). */
        void abandon() {
            finish(0, "abandoned by the simulator (reset or close)");
            req.connection().close();
        }
    }
}
