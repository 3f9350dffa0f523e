package io.imageworker.testing.gateway;

import java.security.SecureRandom;
import java.time.Duration;
import java.util.Objects;

/**
 * Everything the simulator can be told at start. Immutable; change one value with a {@code with...} method:
 *
 * <pre>{@code
 * GatewaySimulator.start(SimulatorSettings.defaults()
 *         .withLatency(Latency.fixedMillis(200))
 *         .withConcurrencyCap(4, 2)
 *         .withResponseForm(ResponseForm.MIXED, 0.5));
 * }</pre>
 *
 * @param port port of the gateway origin; 0 takes a free port
 * @param filesPort port of the second origin that serves returned {@code url}s; 0 takes a free port
 * @param apiKey the one valid token, {@code sk-} followed by letters and digits (no {@code -})
 * @param quota quota units of that token at start; 500000 units are one dollar; {@link #UNLIMITED_QUOTA} for none
 * @param pricePerCall quota units billed per image call, multiplied by the request's {@code n}
 * @param model the only image model the gateway knows
 * @param latency time the upstream takes for each image call
 * @param concurrencyCap image calls in flight above this number get 429; 0 for no cap
 * @param retryAfterSeconds {@code Retry-After} header value on those 429s; 0 sends no header
 * @param responseForm how a success carries the image
 * @param urlRatio with {@link ResponseForm#MIXED}, the share of successes answered with a {@code url} (0..1)
 * @param urlLifetime how long a returned {@code url} can be downloaded; then it answers 404
 * @param oversizeMode what a size breaking the hard limits gets
 * @param flavour which gateway is played
 * @param moderationTrigger a prompt containing this text gets a moderation refusal (400)
 * @param sensitiveWord a prompt containing this text gets 500 {@code sensitive_words_detected} (new-api default)
 * @param maxBodyBytes larger request bodies get 413 (new-api default 128 MB)
 * @param imageBytes size of every answered PNG file in bytes (padded with a private ancillary chunk of random bytes,
 *     which every decoder skips); 0 answers the smallest PNG of the size
 * @param cpuPerAnswer CPU time the upstream spends on each successful image answer, as a real gateway spends
 *     rendering (burnt on a worker thread); zero for none
 * @param largeImageBytes size of every answered PNG file of more than {@value #LARGE_PIXELS} pixels (4K-class sizes such
 *     as 3840x2160), when not 0: a load that mixes small and large answers
 * @param staleAfter a connection that stays idle longer than this is stale: the next request on it is never read
 *     and the connection closes, as when a server's keep-alive timeout races a client reusing the connection;
 *     zero for never
 */
public record SimulatorSettings(
        int port,
        int filesPort,
        String apiKey,
        long quota,
        long pricePerCall,
        String model,
        Latency latency,
        int concurrencyCap,
        int retryAfterSeconds,
        ResponseForm responseForm,
        double urlRatio,
        Duration urlLifetime,
        OversizeMode oversizeMode,
        Flavour flavour,
        String moderationTrigger,
        String sensitiveWord,
        long maxBodyBytes,
        int imageBytes,
        int largeImageBytes,
        Duration cpuPerAnswer,
        Duration staleAfter) {

    /** Answers of more pixels than this are {@link #largeImageBytes()} long, when that is set. */
    public static final long LARGE_PIXELS = 4L * 1024 * 1024;

    /** Quota units of one dollar. */
    public static final long UNITS_PER_DOLLAR = 500_000L;

    /** {@link #quota()} value of a token without a cap. */
    public static final long UNLIMITED_QUOTA = -1L;

    /** The image model identifier the simulator accepts unless told otherwise. */
    public static final String DEFAULT_MODEL = "gpt-image-2";

    /** The prompt text that triggers a moderation refusal unless told otherwise. */
    public static final String DEFAULT_MODERATION_TRIGGER = "[[moderate]]";

    public SimulatorSettings {
        Objects.requireNonNull(apiKey, "apiKey");
        Objects.requireNonNull(model, "model");
        Objects.requireNonNull(latency, "latency");
        Objects.requireNonNull(responseForm, "responseForm");
        Objects.requireNonNull(urlLifetime, "urlLifetime");
        Objects.requireNonNull(oversizeMode, "oversizeMode");
        Objects.requireNonNull(flavour, "flavour");
        Objects.requireNonNull(moderationTrigger, "moderationTrigger");
        Objects.requireNonNull(sensitiveWord, "sensitiveWord");
        Objects.requireNonNull(cpuPerAnswer, "cpuPerAnswer");
        Objects.requireNonNull(staleAfter, "staleAfter");
        if (!apiKey.startsWith("sk-") || apiKey.length() < 4 || apiKey.indexOf('-', 3) >= 0) {
            throw new IllegalArgumentException("apiKey must be sk- followed by letters and digits");
        }
        if (port < 0 || filesPort < 0 || concurrencyCap < 0 || retryAfterSeconds < 0 || pricePerCall < 0) {
            throw new IllegalArgumentException("ports, cap, Retry-After and price must not be negative");
        }
        if (quota < 0 && quota != UNLIMITED_QUOTA) {
            throw new IllegalArgumentException("quota must be >= 0 or UNLIMITED_QUOTA");
        }
        if (urlRatio < 0 || urlRatio > 1) {
            throw new IllegalArgumentException("urlRatio must be within 0..1, got " + urlRatio);
        }
        if (maxBodyBytes <= 0) {
            throw new IllegalArgumentException("maxBodyBytes must be positive");
        }
        if (imageBytes < 0 || largeImageBytes < 0 || cpuPerAnswer.isNegative() || staleAfter.isNegative()) {
            throw new IllegalArgumentException("imageBytes, cpuPerAnswer and staleAfter must not be negative");
        }
    }

    /**
     * The {@link #defaults()}, answering after {@code latency}, with a token of {@link #UNLIMITED_QUOTA}: the simulator
     * of the local run and of the load runs, which no quota may end.
     */
    public static SimulatorSettings unlimited(Latency latency) {
        return defaults().withLatency(latency).withQuota(UNLIMITED_QUOTA);
    }

    /**
     * Free ports, a fresh random key with $100 of quota, 0.04 dollar (20000 units) per call, model
     * {@value #DEFAULT_MODEL}, no latency, no cap, {@code b64_json} answers, URLs living one hour, oversize rejected,
     * flavour {@link Flavour#SPEC}, the smallest PNGs, no CPU spent per answer, no stale connections.
     */
    public static SimulatorSettings defaults() {
        return new SimulatorSettings(
                0,
                0,
                randomKey(),
                100 * UNITS_PER_DOLLAR,
                20_000L,
                DEFAULT_MODEL,
                Latency.none(),
                0,
                0,
                ResponseForm.B64,
                0.5,
                Duration.ofHours(1),
                OversizeMode.REJECT,
                Flavour.SPEC,
                DEFAULT_MODERATION_TRIGGER,
                "test_sensitive",
                128L * 1024 * 1024,
                0,
                0,
                Duration.ZERO,
                Duration.ZERO);
    }

    /** A key like new-api's: {@code sk-} and 48 random letters and digits. */
    public static String randomKey() {
        String alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
        SecureRandom random = new SecureRandom();
        StringBuilder key = new StringBuilder("sk-");
        for (int i = 0; i < 48; i++) {
            key.append(alphabet.charAt(random.nextInt(alphabet.length())));
        }
        return key.toString();
    }

    /** {@code true} when the token has no quota cap. */
    public boolean unlimitedQuota() {
        return quota == UNLIMITED_QUOTA;
    }

    public SimulatorSettings withPort(int value) {
        return with(b -> b.port = value);
    }

    public SimulatorSettings withFilesPort(int value) {
        return with(b -> b.filesPort = value);
    }

    public SimulatorSettings withApiKey(String value) {
        return with(b -> b.apiKey = value);
    }

    /** Quota units of the token at start (500000 per dollar), or {@link #UNLIMITED_QUOTA}. */
    public SimulatorSettings withQuota(long value) {
        return with(b -> b.quota = value);
    }

    /** Quota units billed per image call (times {@code n}). */
    public SimulatorSettings withPricePerCall(long value) {
        return with(b -> b.pricePerCall = value);
    }

    public SimulatorSettings withModel(String value) {
        return with(b -> b.model = value);
    }

    public SimulatorSettings withLatency(Latency value) {
        return with(b -> b.latency = value);
    }

    /** Image calls above {@code cap} in flight get 429 with {@code Retry-After: retryAfterSeconds} (0: no header). */
    public SimulatorSettings withConcurrencyCap(int cap, int retryAfter) {
        return with(b -> {
            b.concurrencyCap = cap;
            b.retryAfterSeconds = retryAfter;
        });
    }

    public SimulatorSettings withResponseForm(ResponseForm value) {
        return withResponseForm(value, urlRatio);
    }

    /** The form of successes; {@code ratio} is the share of {@code url} answers under {@link ResponseForm#MIXED}. */
    public SimulatorSettings withResponseForm(ResponseForm value, double ratio) {
        return with(b -> {
            b.responseForm = value;
            b.urlRatio = ratio;
        });
    }

    public SimulatorSettings withUrlLifetime(Duration value) {
        return with(b -> b.urlLifetime = value);
    }

    public SimulatorSettings withOversizeMode(OversizeMode value) {
        return with(b -> b.oversizeMode = value);
    }

    public SimulatorSettings withFlavour(Flavour value) {
        return with(b -> b.flavour = value);
    }

    public SimulatorSettings withModerationTrigger(String value) {
        return with(b -> b.moderationTrigger = value);
    }

    public SimulatorSettings withSensitiveWord(String value) {
        return with(b -> b.sensitiveWord = value);
    }

    public SimulatorSettings withMaxBodyBytes(long value) {
        return with(b -> b.maxBodyBytes = value);
    }

    /** Every answered PNG file is {@code bytes} long (a benchmark's large answers); 0 for the smallest PNG. */
    public SimulatorSettings withImageBytes(int bytes) {
        return with(b -> b.imageBytes = bytes);
    }

    /**
     * Answered PNG files of more than {@value #LARGE_PIXELS} pixels are {@code bytes} long (0: as {@link
     * #imageBytes()}): small and 4K-class answers mixed by the sizes asked.
     */
    public SimulatorSettings withLargeImageBytes(int bytes) {
        return with(b -> b.largeImageBytes = bytes);
    }

    /** The length of an answered PNG file of {@code pixels} pixels (0: the smallest PNG of its size). */
    public int imageBytesFor(long pixels) {
        return largeImageBytes > 0 && pixels > LARGE_PIXELS ? largeImageBytes : imageBytes;
    }

    /** The upstream spends this much CPU time on each successful image answer (as a real gateway renders). */
    public SimulatorSettings withCpuPerAnswer(Duration value) {
        return with(b -> b.cpuPerAnswer = value);
    }

    /** Connections idle longer than {@code value} are stale: the next request on one is dropped unread. */
    public SimulatorSettings withStaleAfter(Duration value) {
        return with(b -> b.staleAfter = value);
    }

    private SimulatorSettings with(java.util.function.Consumer<Copy> change) {
        Copy copy = new Copy(this);
        change.accept(copy);
        return copy.build();
    }

    /** A mutable copy, so that each {@code with...} method names only what it changes. */
    private static final class Copy {
        int port;
        int filesPort;
        String apiKey;
        long quota;
        long pricePerCall;
        String model;
        Latency latency;
        int concurrencyCap;
        int retryAfterSeconds;
        ResponseForm responseForm;
        double urlRatio;
        Duration urlLifetime;
        OversizeMode oversizeMode;
        Flavour flavour;
        String moderationTrigger;
        String sensitiveWord;
        long maxBodyBytes;
        int imageBytes;
        int largeImageBytes;
        Duration cpuPerAnswer;
        Duration staleAfter;

        Copy(SimulatorSettings s) {
            port = s.port;
            filesPort = s.filesPort;
            apiKey = s.apiKey;
            quota = s.quota;
            pricePerCall = s.pricePerCall;
            model = s.model;
            latency = s.latency;
            concurrencyCap = s.concurrencyCap;
            retryAfterSeconds = s.retryAfterSeconds;
            responseForm = s.responseForm;
            urlRatio = s.urlRatio;
            urlLifetime = s.urlLifetime;
            oversizeMode = s.oversizeMode;
            flavour = s.flavour;
            moderationTrigger = s.moderationTrigger;
            sensitiveWord = s.sensitiveWord;
            maxBodyBytes = s.maxBodyBytes;
            imageBytes = s.imageBytes;
            largeImageBytes = s.largeImageBytes;
            cpuPerAnswer = s.cpuPerAnswer;
            staleAfter = s.staleAfter;
        }

        SimulatorSettings build() {
            return new SimulatorSettings(
                    port,
                    filesPort,
                    apiKey,
                    quota,
                    pricePerCall,
                    model,
                    latency,
                    concurrencyCap,
                    retryAfterSeconds,
                    responseForm,
                    urlRatio,
                    urlLifetime,
                    oversizeMode,
                    flavour,
                    moderationTrigger,
                    sensitiveWord,
                    maxBodyBytes,
                    imageBytes,
                    largeImageBytes,
                    cpuPerAnswer,
                    staleAfter);
        }
    }
}
