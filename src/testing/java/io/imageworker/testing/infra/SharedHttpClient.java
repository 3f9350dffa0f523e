package io.imageworker.testing.infra;

import software.amazon.awssdk.http.async.SdkAsyncHttpClient;
import software.amazon.awssdk.http.nio.netty.NettyNioAsyncHttpClient;

/**
 * The Netty HTTP client shared by every S3 client of {@link ManagedStore#newAsyncClient()}. A client closes only
 * the HTTP client it built itself, and closing one costs 2 s of event-loop quiet period; this one lives as long as
 * the JVM (its threads are daemons).
 */
final class SharedHttpClient {

    private static final SdkAsyncHttpClient INSTANCE = NettyNioAsyncHttpClient.create();

    private SharedHttpClient() {}

    static SdkAsyncHttpClient get() {
        return INSTANCE;
    }
}
