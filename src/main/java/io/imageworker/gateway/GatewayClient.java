package io.imageworker.gateway;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.config.WorkerConfig;
import io.netty.buffer.Unpooled;
import io.smallrye.mutiny.Uni;
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
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The only code that talks to the gateway. Non-blocking (Vert.x Web Client), one deadline per call, redirects never
 * followed (a redirect means a wrong base address), and the API key only ever in the {@code Authorization} header:
 * never in a log line, an exception message or an event.
 */
@ApplicationScoped
public class GatewayClient {

    private final WebClient client;
    private final GatewayEndpoint endpoint;
    private final WorkerConfig.Gateway config;
    private final AnswerClassifier classifier;
    private final String authorization;

    GatewayClient(Vertx vertx, WorkerConfig config, ObjectMapper mapper) {
        this.config = config.gateway();
        this.endpoint = endpointOrPlaceholder(this.config.baseUrl().orElse(""));
        this.authorization = "Bearer " + this.config.apiKey().orElse("");
        this.classifier = new AnswerClassifier(mapper, this.config.keepBodyChars());
        this.client = WebClient.create(
                vertx,
                new WebClientOptions()
                        .setFollowRedirects(false)
                        .setKeepAlive(true)
                        .setMaxPoolSize(Math.max(1, config.concurrency()))
                        .setConnectTimeout((int) this.config.connectTimeout().toMillis())
                        .setUserAgent("image-worker"));
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
     * {@code POST /v1/images/generations} with exactly the fields the spec allows: {@code model}, {@code prompt},
     * an explicit {@code size}, optional {@code quality} and {@code response_format}. Never {@code n} (billed per
     * unit by the open-source gateway) nor {@code moderation}.
     */
    public Uni<GatewayAnswer> generate(String prompt, String size, String quality) {
        JsonObject body = new JsonObject()
                .put("model", config.model().orElseThrow())
                .put("prompt", prompt)
                .put("size", size);
        if (quality != null) {
            body.put("quality", quality);
        }
        config.responseFormat().ifPresent(format -> body.put("response_format", format));
        HttpRequest<io.vertx.core.buffer.Buffer> request =
                post(GatewayEndpoint.GENERATIONS).putHeader("Content-Type", "application/json");
        return call(() -> request.sendBuffer(Buffer.buffer(body.encode())));
    }

    /**
     * {@code POST /v1/images/edits} as multipart. The form encoder makes the boundary: the {@code Content-Type}
     * header is never set by hand (spec 4.3). Parts are sent in the given order; each part's filename extension and
     * content type come from its real format.
     *
     * <p>Every file is its own {@code form-data} part, repeated {@code image[]} fields included. The encoder's default
     * (Netty's RFC 2388 mode) would nest a second file of the same field name with the first in one {@code
     * multipart/mixed} part, which the gateway reads as no image at all; HTML5 mode ({@code multipartMixed(false)})
     * does not. The images' bytes are wrapped, not copied, so a retry costs no memory.
     *
     * @param images the base image first, then the references; in single mode only the first is sent, as {@code image}
     * @param mask the mask, or null
     * @param single whether to send the single-image form ({@code IMAGE_WORKER_GATEWAY_EDIT_MODE=single})
     */
    public Uni<GatewayAnswer> edit(
            String prompt, String size, String quality, List<FilePart> images, FilePart mask, boolean single) {
        MultipartForm form = MultipartForm.create()
                .attribute("model", config.model().orElseThrow())
                .attribute("prompt", prompt)
                .attribute("size", size);
        if (quality != null) {
            form.attribute("quality", quality);
        }
        config.responseFormat().ifPresent(format -> form.attribute("response_format", format));
        for (FilePart part : single ? images.subList(0, 1) : images) {
            form.binaryFileUpload(single ? "image" : "image[]", part.filename(), wrapped(part), part.contentType());
        }
        if (mask != null) {
            form.binaryFileUpload("mask", mask.filename(), wrapped(mask), mask.contentType());
        }
        HttpRequest<io.vertx.core.buffer.Buffer> request =
                post(GatewayEndpoint.EDITS).multipartMixed(false);
        return call(() -> request.sendMultipartForm(form));
    }

    private static Buffer wrapped(FilePart part) {
        return Buffer.newInstance(io.vertx.core.buffer.Buffer.buffer(Unpooled.wrappedBuffer(part.bytes())));
    }

    /**
     * An unbillable probe: {@code POST {path}} with an empty JSON object and the given authorization. Authentication
     * is checked before the body (spec 5.3), and an empty body is refused before any upstream work, so the answer's
     * status tells whether the route exists (401 with a wrong key) or the token is alive (not 401 with the real key).
     */
    public Uni<Integer> probe(String path, boolean withRealKey) {
        HttpRequest<io.vertx.core.buffer.Buffer> request = client.postAbs(endpoint.resolve(path))
                .putHeader("Authorization", withRealKey ? authorization : "Bearer sk-image-worker-probe")
                .putHeader("Content-Type", "application/json")
                .idleTimeout(config.connectTimeout().toMillis() * 3)
                .as(BoundedBodyCodec.mutiny((64 * 1024)));
        return request.sendBuffer(Buffer.buffer("{}"))
                .map(response -> isHtml(response) ? -response.statusCode() : response.statusCode());
    }

    private static boolean isHtml(HttpResponse<?> response) {
        String type = response.getHeader("Content-Type");
        return type != null && type.toLowerCase(java.util.Locale.ROOT).contains("text/html");
    }

    private HttpRequest<io.vertx.core.buffer.Buffer> post(String path) {
        return client.postAbs(endpoint.resolve(path))
                .putHeader("Authorization", authorization)
                // The socket-level idle timeout closes a hung connection; the Uni deadline below bounds the total.
                .idleTimeout(config.timeout().toMillis())
                .as(BoundedBodyCodec.mutiny((config.maxResponseBytes())));
    }

    private Uni<GatewayAnswer> call(java.util.function.Supplier<Uni<HttpResponse<io.vertx.core.buffer.Buffer>>> send) {
        return Uni.createFrom().deferred(() -> {
            long started = System.nanoTime();
            return send.get()
                    .ifNoItem()
                    .after(config.timeout())
                    .fail()
                    .map(response -> classifier.classify(
                            response.statusCode(),
                            response.getHeader("Content-Type"),
                            response.getHeader("Retry-After"),
                            response.body() == null ? "" : response.body().toString(StandardCharsets.UTF_8),
                            elapsedMs(started)))
                    .onFailure()
                    .recoverWithItem(error -> classifier.classify(error, elapsedMs(started)));
        });
    }

    private static long elapsedMs(long startedNanos) {
        return (System.nanoTime() - startedNanos) / 1_000_000;
    }

    @PreDestroy
    void close() {
        client.close();
    }

    /** One file of an edit: its bytes, a filename whose extension matches the real format, and that format's type. */
    public record FilePart(byte[] bytes, String filename, String contentType) {}
}
