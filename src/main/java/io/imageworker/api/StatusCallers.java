package io.imageworker.api;

import io.imageworker.config.ProducerTopics;
import io.imageworker.config.StatusTokens;
import io.imageworker.config.WorkerConfig;
import io.quarkus.logging.Log;
import io.quarkus.runtime.StartupEvent;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Who asks the status endpoint, where producers are taken from their topics ({@code
 * IMAGE_WORKER_PRODUCER_IDENTITY=topic}, issue 49): the producer whose bearer token ({@code
 * IMAGE_WORKER_STATUS_TOKENS}) the query carries in {@code Authorization: Bearer <token>}, or, when the operator names
 * one ({@code IMAGE_WORKER_STATUS_PRODUCER_HEADER}), the producer an ingress that authenticated the caller (mTLS) names
 * in that header. Nobody otherwise. With declared producers nobody is asked for anything ({@link #required()} is
 * false).
 *
 * <p>A token is compared by its SHA-256 digest with every producer's, each with {@link MessageDigest#isEqual} and
 * without stopping at the first match, so that the time taken does not tell how much of a guess was right.
 */
@ApplicationScoped
public class StatusCallers {

    private final boolean required;
    private final List<Token> tokens;
    private final Optional<String> header;
    private final Set<String> producers;

    @Inject
    StatusCallers(WorkerConfig config, StatusSettings status) {
        this(
                config.producerIdentity() == WorkerConfig.ProducerIdentity.topic,
                StatusTokens.of(status.tokens()),
                status.producerHeader().map(String::trim).filter(name -> !name.isEmpty()),
                Set.copyOf(config.producers().orElse(List.of()).stream()
                        .map(String::trim)
                        .toList()));
    }

    /** The callers of {@code tokens} and {@code header} (the console's producer access reuses them, issue 52). */
    public StatusCallers(boolean required, StatusTokens tokens, Optional<String> header, Set<String> producers) {
        this.required = required;
        this.tokens = new ArrayList<>();
        for (Map.Entry<String, String> token : tokens.tokens().entrySet()) {
            this.tokens.add(new Token(token.getKey(), digest(token.getValue())));
        }
        this.header = header;
        this.producers = producers;
    }

    /** At start, says so when every status query will be refused: topic mode with no credential to accept. */
    void onStart(@Observes StartupEvent event) {
        if (required && tokens.isEmpty() && header.isEmpty()) {
            Log.warn("Status: IMAGE_WORKER_PRODUCER_IDENTITY=topic and neither IMAGE_WORKER_STATUS_TOKENS nor"
                    + " IMAGE_WORKER_STATUS_PRODUCER_HEADER is set: every status query is refused (401)");
        }
    }

    /** Whether a query must name its producer by a credential (producers taken from their topics). */
    public boolean required() {
        return required;
    }

    /** The header an ingress names the producer in, if the operator named one. */
    public Optional<String> header() {
        return header;
    }

    /**
     * The producer a query authenticates as: by its {@code authorization} header ({@code Bearer <token>}), else by
     * {@code headerValue}, the value of {@link #header()} (null when absent or not named); empty when neither is a
     * producer's.
     */
    public Optional<String> producer(String authorization, String headerValue) {
        if (authorization != null && authorization.regionMatches(true, 0, "Bearer ", 0, 7)) {
            byte[] presented = digest(authorization.substring(7).trim());
            String found = null;
            for (Token token : tokens) {
                // Every token compared, in constant time each: no early exit.
                if (MessageDigest.isEqual(token.digest(), presented) && found == null) {
                    found = token.producer();
                }
            }
            if (found != null) {
                return Optional.of(found);
            }
        }
        if (header.isPresent() && headerValue != null) {
            String producer = headerValue.trim();
            if (ProducerTopics.isName(producer) && producers.contains(producer)) {
                return Optional.of(producer);
            }
        }
        return Optional.empty();
    }

    /** What a refused query is told: how it may authenticate. */
    String how() {
        return "a producer's credential is required here (IMAGE_WORKER_PRODUCER_IDENTITY=topic): Authorization:"
                + " Bearer <its status token>"
                + header.map(name -> ", or the " + name.toLowerCase(Locale.ROOT) + " header of the ingress")
                        .orElse("");
    }

    private static byte[] digest(String token) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(token.getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every Java platform has SHA-256", e);
        }
    }

    private record Token(String producer, byte[] digest) {}
}
