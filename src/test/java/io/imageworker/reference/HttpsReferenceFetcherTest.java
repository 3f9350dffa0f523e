package io.imageworker.reference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.image.ImageFormat;
import io.imageworker.image.ImageInspector;
import io.imageworker.net.AddressPolicy;
import io.imageworker.net.GuardedFetcher;
import io.imageworker.testing.LocalServer;
import io.imageworker.testing.TestCertificates;
import io.imageworker.testing.images.TestImages;
import io.smallrye.mutiny.helpers.test.UniAssertSubscriber;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.core.net.SelfSignedCertificate;
import java.net.InetAddress;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class HttpsReferenceFetcherTest extends LocalServerTestSupport {

    private static final String NAME = "references[2]";
    private static final long MB = 1024 * 1024;

    // --- refusals by the URL rules -----------------------------------------------------------------------------

    @Test
    void refusesHostNotOnAllowList() {
        HttpsReferenceFetcher fetcher = trustingLocalServer("images.example.com", "5s");

        assertThat(refusalBeforeConnecting(fetcher, local.server().url("localhost", "/a.png")))
                .startsWith("references[2]: ")
                .contains("host 'localhost' is not in IMAGE_WORKER_REFERENCE_ALLOWED_HOSTS");
    }

    @Test
    void refusesEveryHostWhenAllowListIsEmpty() {
        HttpsReferenceFetcher fetcher = production(null, "5s");

        assertThat(refusal(fetcher, "https://images.example.com/a.png"))
                .isEqualTo("references[2]: host 'images.example.com' is not in IMAGE_WORKER_REFERENCE_ALLOWED_HOSTS");
    }

    @Test
    void comparesHostNamesCaseInsensitively() throws Exception {
        byte[] png = png();
        local.server().answering(request -> request.response().end(Buffer.buffer(png)));
        HttpsReferenceFetcher fetcher = trustingLocalServer("LocalHost", "5s");

        assertThat(fetch(fetcher, local.server().url("LOCALHOST", "/a.png"))).isEqualTo(png);
    }

    @Test
    void refusesPlainHttp() throws Exception {
        try (LocalServer plain = LocalServer.start(local.vertx(), "127.0.0.1", null)) {
            HttpsReferenceFetcher fetcher = trustingLocalServer("localhost", "5s");

            String refusal = refusal(fetcher, plain.url("localhost", "/a.png"));

            assertThat(refusal).isEqualTo("references[2]: only https:// references are fetched, not http://");
            assertThat(plain.connections).hasValue(0);
        }
    }

    @Test
    void refusesInvalidUrlWithoutRepeatingIt() {
        HttpsReferenceFetcher fetcher = trustingLocalServer("localhost", "5s");

        assertThat(refusal(fetcher, "https://localhost/a b.png?signature=secret"))
                .isEqualTo("references[2]: not a valid URL");
    }

    @Test
    void refusesUserInformationInUrl() {
        HttpsReferenceFetcher fetcher = trustingLocalServer("localhost", "5s");

        assertThat(refusal(
                        fetcher,
                        "https://user:secret@localhost:" + local.server().port() + "/a.png"))
                .isEqualTo("references[2]: a reference URL must not carry user information");
        assertThat(local.server().connections).hasValue(0);
    }

    // --- refusals by the address rule (the production policy) --------------------------------------------------

    @Test
    void refusesLoopbackLiteral() {
        HttpsReferenceFetcher fetcher = production("127.0.0.1", "5s");

        assertThat(refusalBeforeConnecting(fetcher, local.server().url("127.0.0.1", "/a.png")))
                .startsWith("references[2]: ")
                .contains("127.0.0.1, which is loopback");
    }

    @Test
    void refusesCloudMetadataAddress() {
        HttpsReferenceFetcher fetcher = production("169.254.169.254", "30s");

        // Refused before any connection: a connection attempt would take until the 30 s timeout or fail otherwise.
        String refusal = refusal(fetcher, "https://169.254.169.254/latest/meta-data", Duration.ofSeconds(5));

        assertThat(refusal)
                .isEqualTo("references[2]: host '169.254.169.254' has address 169.254.169.254, which is link-local"
                        + " (cloud metadata): references are never fetched from such an address");
    }

    @Test
    void refusesPrivateAddress() {
        HttpsReferenceFetcher fetcher = production("10.0.0.5", "30s");

        String refusal = refusal(fetcher, "https://10.0.0.5/x", Duration.ofSeconds(5));

        assertThat(refusal).startsWith("references[2]: ").contains("10.0.0.5, which is private");
    }

    @Test
    void refusesIpv4MappedIpv6LoopbackLiteral() {
        HttpsReferenceFetcher fetcher = production("::ffff:127.0.0.1", "5s");

        assertThat(refusalBeforeConnecting(
                        fetcher, "https://[::ffff:127.0.0.1]:" + local.server().port() + "/a.png"))
                .startsWith("references[2]: ")
                .contains("which is loopback");
    }

    @Test
    void refusesNameResolvingToLoopback() throws Exception {
        assertThat(InetAddress.getAllByName("localhost")).allMatch(InetAddress::isLoopbackAddress);
        HttpsReferenceFetcher fetcher = production("localhost", "5s");

        assertThat(refusalBeforeConnecting(fetcher, local.server().url("localhost", "/a.png")))
                .startsWith("references[2]: host 'localhost' has address ")
                .contains("which is loopback");
    }

    @Test
    void checksAddressActuallyConnectedBeforeSendingAnything() throws Exception {
        // Allows every address of localhost while the name is resolved, refuses from then on: only the check of
        // the connection's remote address can refuse this download.
        int resolved = InetAddress.getAllByName("localhost").length;
        AtomicInteger asked = new AtomicInteger();
        AddressPolicy changesItsMind = address ->
                asked.incrementAndGet() <= resolved ? Optional.empty() : Optional.of("refused on the connection");
        HttpsReferenceFetcher fetcher = new HttpsReferenceFetcher(
                local.vertx(),
                download("localhost", "5s"),
                reference("localhost", "5s"),
                changesItsMind,
                local.certificate().trustOptions());

        String refusal = refusal(fetcher, local.server().url("localhost", "/a.png"));

        assertThat(refusal)
                .isEqualTo("references[2]: host 'localhost': the connection reached 127.0.0.1, which is refused on"
                        + " the connection");
        // The server sees the connection after its side of the handshake, which may come after the refusal.
        await().atMost(LocalServer.patience()).untilAsserted(() -> assertThat(local.server().closedConnections)
                .hasValue(1));
        assertThat(local.server().connections).hasValue(1);
        assertThat(local.server().requests).hasValue(0);
    }

    // --- redirects --------------------------------------------------------------------------------------------

    @Test
    void refusesRedirectToLoopbackAddress() throws Exception {
        try (LocalServer elsewhere = LocalServer.start(local.vertx(), "127.0.0.2", local.certificate())) {
            local.server().answering(request -> LocalServer.redirect(request, elsewhere.url("127.0.0.2", "/a.png")));
            // 127.0.0.2 is on the host list: only the address rule can refuse it.
            HttpsReferenceFetcher fetcher = trustingLocalServer("localhost,127.0.0.2", "5s");

            String refusal = refusal(fetcher, local.server().url("localhost", "/start"));

            assertThat(refusal)
                    .startsWith("references[2]: redirect 1 leads to a refused location: ")
                    .contains("127.0.0.2, which is loopback");
            assertThat(local.server().requests).hasValue(1);
            assertThat(elsewhere.connections).hasValue(0);
        }
    }

    @Test
    void refusesRedirectToCloudMetadata() {
        local.server().answering(request -> LocalServer.redirect(request, "https://169.254.169.254/latest/meta-data"));
        HttpsReferenceFetcher fetcher = trustingLocalServer("localhost,169.254.169.254", "30s");

        String refusal = refusal(fetcher, local.server().url("localhost", "/start"), Duration.ofSeconds(5));

        assertThat(refusal)
                .startsWith("references[2]: redirect 1 leads to a refused location: ")
                .contains("link-local (cloud metadata)");
    }

    @Test
    void refusesRedirectToHostNotOnAllowList() {
        local.server().answering(request -> LocalServer.redirect(request, "https://attacker.example/a.png"));
        HttpsReferenceFetcher fetcher = trustingLocalServer("localhost", "5s");

        assertThat(refusal(fetcher, local.server().url("localhost", "/start")))
                .isEqualTo("references[2]: redirect 1 leads to a refused location: host 'attacker.example' is not in"
                        + " IMAGE_WORKER_REFERENCE_ALLOWED_HOSTS");
    }

    @Test
    void refusesRedirectToPlainHttp() throws Exception {
        try (LocalServer plain = LocalServer.start(local.vertx(), "127.0.0.1", null)) {
            local.server().answering(request -> LocalServer.redirect(request, plain.url("localhost", "/a.png")));
            HttpsReferenceFetcher fetcher = trustingLocalServer("localhost", "5s");

            assertThat(refusal(fetcher, local.server().url("localhost", "/start")))
                    .isEqualTo("references[2]: redirect 1 leads to a refused location: only https:// references are"
                            + " fetched, not http://");
            assertThat(plain.connections).hasValue(0);
        }
    }

    /** From a path to a path, and from the bare origin (no path: "/") to a name relative to it. */
    @ParameterizedTest(name = "from \"{0}\" to {2}")
    @CsvSource({"/start, /start, /images/a.png", "'', /, a.png"})
    void followsRelativeRedirectToAllowedLocation(String path, String requestedPath, String location) {
        byte[] png = png();
        local.server().answering(request -> {
            if (request.path().equals(requestedPath)) {
                LocalServer.redirect(request, location);
            } else {
                request.response().end(Buffer.buffer(png));
            }
        });
        HttpsReferenceFetcher fetcher = trustingLocalServer("localhost", "5s");

        assertThat(fetch(fetcher, local.server().url("localhost", path))).isEqualTo(png);
        assertThat(local.server().requests).hasValue(2);
    }

    @Test
    void refusesMoreThanThreeRedirects() {
        local.server()
                .answering(request -> LocalServer.redirect(
                        request, "/again" + local.server().requests.get()));
        HttpsReferenceFetcher fetcher = trustingLocalServer("localhost", "5s");

        assertThat(refusal(fetcher, local.server().url("localhost", "/start")))
                .isEqualTo("references[2]: more than 3 redirects");
        assertThat(local.server().requests).hasValue(1 + GuardedFetcher.MAX_REDIRECTS);
    }

    // --- the positive path ------------------------------------------------------------------------------------

    @Test
    void fetchesPngFromAllowedHostOverVerifiedTls() throws Exception {
        byte[] png = png();
        local.server().answering(request -> request.response()
                .putHeader("Content-Type", "image/png")
                .end(Buffer.buffer(png)));
        HttpsReferenceFetcher fetcher = trustingLocalServer("localhost", "5s");

        byte[] fetched = fetch(fetcher, local.server().url("localhost", "/images/a.png?sig=abc"));

        assertThat(fetched).isEqualTo(png);
        assertThat(ImageInspector.inspect(fetched).format()).isEqualTo(ImageFormat.PNG);
        // Connected to the checked address, but TLS and HTTP still name the host.
        assertThat(local.server().serverNames).containsExactly("localhost");
        assertThat(local.server().hostHeaders)
                .containsExactly("localhost:" + local.server().port());
        assertThat(local.server().connections).hasValue(1);
    }

    @Test
    void refusesCertificateNotIssuedForTheHost() throws Exception {
        SelfSignedCertificate other = TestCertificates.forHost("images.example.com");
        try (LocalServer impostor = LocalServer.start(local.vertx(), "127.0.0.1", other)) {
            impostor.answering(request -> request.response().end("not for you"));
            // Trusts both certificates: only host name verification can refuse this one.
            HttpsReferenceFetcher fetcher = new HttpsReferenceFetcher(
                    local.vertx(),
                    download("localhost", "5s"),
                    reference("localhost", "5s"),
                    LOCAL_TEST_SERVER_ONLY,
                    new PemTrustOptions()
                            .addCertPath(local.certificate().certificatePath())
                            .addCertPath(other.certificatePath()));

            String refusal = refusal(fetcher, impostor.url("localhost", "/a.png"));

            assertThat(refusal).startsWith("references[2]: could not connect to host 'localhost'");
            assertThat(impostor.requests).hasValue(0);
        }
    }

    @Test
    void refusesAnswerOtherThan200() {
        local.server()
                .answering(request -> request.response().setStatusCode(403).end("expired"));
        HttpsReferenceFetcher fetcher = trustingLocalServer("localhost", "5s");

        assertThat(refusal(fetcher, local.server().url("localhost", "/a.png")))
                .isEqualTo("references[2]: host 'localhost' answered 403");
    }

    // --- size and time limits ---------------------------------------------------------------------------------

    @Test
    void cutsOffOversizedChunkedBodyWhileReading() {
        long total = 26 * MB;
        // No Content-Length: the cap can only be enforced while reading. The server holds just past the cap.
        local.server()
                .answering(request -> local.server().stream(
                        request.response().setChunked(true), total, ReferenceLoader.MAX_BYTES + 64 * 1024));
        HttpsReferenceFetcher fetcher = trustingLocalServer("localhost", "20s");

        String refusal = refusal(fetcher, local.server().url("localhost", "/big.png"));

        assertThat(refusal)
                .isEqualTo("references[2]: the body from host 'localhost' is over the 26214400 bytes limit; cut off"
                        + " while reading");
        assertCutOffBeforeTheEnd();
        assertThat(local.server().bodyBytesWritten.get()).isLessThan(total);
    }

    @Test
    void refusesContentLengthOverCapWithoutReadingBody() {
        long total = 26 * MB;
        // Headers and the first 64 KiB, then the server holds: the client has all it needs to refuse.
        local.server()
                .answering(request -> local.server().stream(
                        request.response().putHeader("Content-Length", Long.toString(total)), total, 64 * 1024));
        HttpsReferenceFetcher fetcher = trustingLocalServer("localhost", "20s");

        String refusal = refusal(fetcher, local.server().url("localhost", "/big.png"));

        assertThat(refusal)
                .isEqualTo("references[2]: host 'localhost' announced 27262976 bytes (Content-Length), over the"
                        + " 26214400 bytes limit; not downloaded");
        assertCutOffBeforeTheEnd();
        assertThat(local.server().bodyBytesWritten.get()).isLessThanOrEqualTo(64 * 1024);
    }

    @Test
    void refusesHangingServerWhenDownloadTimeoutExpires() {
        local.server().answering(request -> {
            // Never answers.
        });
        HttpsReferenceFetcher fetcher = trustingLocalServer("localhost", "500ms");
        long started = System.nanoTime();

        String refusal = refusal(fetcher, local.server().url("localhost", "/slow.png"));

        assertThat(Duration.ofNanos(System.nanoTime() - started))
                .isBetween(Duration.ofMillis(500), Duration.ofSeconds(5));
        assertThat(refusal).isEqualTo("references[2]: the download from host 'localhost' did not finish within 500 ms");
        await().atMost(LocalServer.patience()).untilAsserted(() -> assertThat(local.server().closedConnections)
                .hasValue(1));
    }

    @Test
    void closesConnectionWhenCancelled() {
        local.server().answering(request -> {
            // Never answers.
        });
        HttpsReferenceFetcher fetcher = trustingLocalServer("localhost", "60s");
        UniAssertSubscriber<byte[]> subscriber = fetcher.fetch(local.server().url("localhost", "/slow.png"), NAME)
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create());
        await().atMost(LocalServer.patience())
                .untilAsserted(() -> assertThat(local.server().requests).hasValue(1));

        // As when another reference of the same request is refused first.
        subscriber.cancel();

        await().atMost(LocalServer.patience()).untilAsserted(() -> assertThat(local.server().closedConnections)
                .hasValue(1));
    }

    // --- helpers ----------------------------------------------------------------------------------------------

    private static byte[] fetch(HttpsReferenceFetcher fetcher, String url) {
        return fetcher.fetch(url, NAME)
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create())
                .awaitItem(LocalServer.patience())
                .getItem();
    }

    /** The local server's connection was closed soon, before it had written the whole body. */
    private void assertCutOffBeforeTheEnd() {
        await().atMost(LocalServer.HOLD.dividedBy(2)).untilAsserted(() -> assertThat(local.server().closedConnections)
                .hasValue(1));
        assertThat(local.server().finishedWriting).isFalse();
    }

    /** The refusal of {@code url}, which never reached the local server. */
    private String refusalBeforeConnecting(HttpsReferenceFetcher fetcher, String url) {
        String refusal = refusal(fetcher, url);
        assertThat(local.server().connections)
                .as("connections to the local server")
                .hasValue(0);
        return refusal;
    }

    private static String refusal(HttpsReferenceFetcher fetcher, String url) {
        return refusal(fetcher, url, LocalServer.patience());
    }

    private static String refusal(HttpsReferenceFetcher fetcher, String url, Duration within) {
        Throwable failure = fetcher.fetch(url, NAME)
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create())
                .awaitFailure(within)
                .getFailure();
        assertThat(failure).isInstanceOf(ReferenceRefusedException.class);
        return failure.getMessage();
    }

    static byte[] png() {
        return TestImages.png(64, 48);
    }
}
