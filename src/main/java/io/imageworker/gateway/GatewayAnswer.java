package io.imageworker.gateway;

/**
 * The outcome of one gateway call: an {@link Image} in one of the two forms a success may take (gateway contract §5), or a
 * {@link Failure}.
 */
public sealed interface GatewayAnswer permits GatewayAnswer.Image, GatewayAnswer.Failure {

    /** Milliseconds from sending to the end of the answer. */
    long latencyMs();

    /**
     * A 200 answer carrying an image: {@code data[0].b64_json} already decoded into {@code bytes}, or the temporary
     * {@code url} to download it from at once.
     */
    record Image(byte[] bytes, String url, long latencyMs) implements GatewayAnswer {}

    /** Any other outcome. */
    record Failure(GatewayFailure failure, long latencyMs) implements GatewayAnswer {}
}
