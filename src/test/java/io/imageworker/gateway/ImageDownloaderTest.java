package io.imageworker.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.config.WorkerConfig;
import io.imageworker.gateway.ImageDownloader.DownloadException;
import io.imageworker.net.AddressPolicy;
import io.imageworker.net.DownloadSettings;
import io.imageworker.net.HostResolver;
import io.imageworker.testing.LocalServer;
import io.imageworker.testing.LocalServerExtension;
import io.imageworker.testing.TestConfig;
import io.imageworker.testing.images.TestImages;
import io.smallrye.mutiny.helpers.test.UniAssertSubscriber;
import io.vertx.core.buffer.Buffer;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The download of a gateway's {@code url} answer under the address rules of references: a gateway that points the
 * worker at its own machine, a private address or the cloud metadata endpoint, directly or through a redirect, gets
 * a refusal and not one connection.
 *
 * <p>The "public" gateway file host of these tests is {@value #PUBLIC_NAME}: the test resolver gives it the loopback
 * address of a local TLS server, and the test policy allows that one address (127.0.0.1) as if it were public. Every
 * other address is judged by the production rule. A forbidden target the tests can host (127.0.0.1 under a name the
 * production rule judges, 127.0.0.2) is an {@link AcceptCounter}: a bare socket that counts the connections it
 * accepts, whatever the protocol.
 */
class ImageDownloaderTest {

    private static final String PUBLIC_NAME = "images.gateway.example";
    private static final long NOTHING = -1;

    /** The test's stand-in for a public address: only 127.0.0.1, and only where a test says so. */
    private static final AddressPolicy LOCAL_SERVER_AS_PUBLIC =
            address -> address.getHostAddress().equals("127.0.0.1")
                    ? Optional.empty()
                    : AddressPolicy.PUBLIC_ONLY.refusal(address);

    /**
     * The names of these tests. A name with several addresses lists the allowed 127.0.0.1 first: a download that did
     * not check every address would connect there, to the counter the test listens with.
     */
    private static final Map<String, String[]> NAMES = Map.of(
            PUBLIC_NAME,
            new String[] {"127.0.0.1"},
            "metadata.google.internal",
            new String[] {"169.254.169.254"},
            "files.internal",
            new String[] {"127.0.0.1"},
            "metadata.goog",
            new String[] {"127.0.0.1"},
            "metadata.goog.",
            new String[] {"127.0.0.1"},
            "instance-data.ec2.internal",
            new String[] {"127.0.0.1"},
            "mixed-loopback.example",
            new String[] {"127.0.0.1", "127.0.0.2"},
            "mixed-private.example",
            new String[] {"127.0.0.1", "10.0.0.5"},
            "mixed-home.example",
            new String[] {"127.0.0.1", "192.168.1.20"},
            "mixed-metadata.example",
            new String[] {"127.0.0.1", "169.254.169.254"});

    /** The names above, and address literals; no other name resolves (no DNS in these tests). */
    private static final HostResolver RESOLVER = host -> {
        String[] literals = NAMES.get(host);
        if (literals == null) {
            if (!host.contains(":") && !host.matches("[0-9.]+")) {
                throw new UnknownHostException(host);
            }
            literals = new String[] {host};
        }
        InetAddress[] addresses = new InetAddress[literals.length];
        for (int i = 0; i < literals.length; i++) {
            addresses[i] = InetAddress.getByName(literals[i]);
        }
        return addresses;
    };

    /** Vert.x, a certificate for {@value #PUBLIC_NAME} and a local TLS server, closed after the downloaders. */
    @RegisterExtension
    static final LocalServerExtension local = new LocalServerExtension(PUBLIC_NAME);

    private static final List<ImageDownloader> downloaders = new ArrayList<>();

    @AfterEach
    void closeDownloaders() {
        downloaders.forEach(ImageDownloader::close);
        downloaders.clear();
    }

    // --- refused answer URLs: nothing is connected ------------------------------------------------------------

    @Test
    void refusesLoopbackAnswerUrlWithoutConnecting() throws Exception {
        try (AcceptCounter loopback = AcceptCounter.on("127.0.0.1")) {
            ImageDownloader downloader = production(Map.of());

            DownloadException failure = failure(downloader, "https://127.0.0.1:" + loopback.port() + "/a.png");

            assertRefused(
                    failure,
                    "host '127.0.0.1' has address 127.0.0.1, which is"
                            + " loopback: answer URLs are never fetched from such an address");
            assertThat(loopback.accepted).hasValue(0);
        }
    }

    @Test
    void refusesCloudMetadataAddressBeforeAnyConnectionAttempt() {
        // A connection attempt would last until the 30 s timeout or fail otherwise: the refusal comes first.
        ImageDownloader downloader = production(Map.of("image-worker.download.timeout", "30s"));

        DownloadException failure = failure(
                downloader,
                "https://169.254.169.254/latest/meta-data/iam/security-credentials/",
                Duration.ofSeconds(5));

        assertRefused(
                failure,
                "host '169.254.169.254' has address 169.254.169.254,"
                        + " which is link-local (cloud metadata): answer URLs are never fetched from such an address");
    }

    /** A name with one forbidden address among allowed ones is refused whole: not even 127.0.0.1 is connected. */
    @ParameterizedTest(name = "{0} ({1})")
    @CsvSource(
            delimiter = '|',
            value = {
                "mixed-loopback.example   | 127.0.0.2       | loopback",
                "mixed-private.example    | 10.0.0.5        | private",
                "mixed-home.example       | 192.168.1.20    | private",
                "mixed-metadata.example   | 169.254.169.254 | link-local (cloud metadata)",
            })
    void refusesNameWithForbiddenAddressWithoutConnecting(String name, String forbidden, String kind) throws Exception {
        try (AcceptCounter first = AcceptCounter.on("127.0.0.1")) {
            ImageDownloader downloader = trustingLocalServer(Map.of());

            DownloadException failure = failure(downloader, "https://" + name + ":" + first.port() + "/a.png");

            assertRefused(
                    failure,
                    "host '" + name + "' has address " + forbidden + ", which is " + kind
                            + ": answer URLs are never fetched from such an address");
            assertThat(first.accepted).hasValue(0);
        }
    }

    @Test
    void refusesPlainHttpOnHostNotListedAsInternal() throws Exception {
        try (AcceptCounter plain = AcceptCounter.on("127.0.0.1")) {
            ImageDownloader downloader = trustingLocalServer(Map.of());

            DownloadException failure = failure(downloader, "http://" + PUBLIC_NAME + ":" + plain.port() + "/a.png");

            assertRefused(
                    failure,
                    "only https:// answer URLs are fetched, not"
                            + " http:// (host 'images.gateway.example' is not in"
                            + " IMAGE_WORKER_GATEWAY_URL_INTERNAL_HOSTS)");
            assertThat(plain.accepted).hasValue(0);
        }
    }

    @Test
    void refusesUserInformationInAnswerUrl() {
        ImageDownloader downloader = trustingLocalServer(Map.of());

        DownloadException failure = failure(
                downloader,
                "https://user:secret@" + PUBLIC_NAME + ":" + local.server().port() + "/a.png");

        assertThat(failure.getMessage())
                .isEqualTo("the gateway's image url was refused: a gateway's image URL must not carry user"
                        + " information");
        assertThat(local.server().connections).hasValue(0);
    }

    @Test
    void refusesAnAnswerUrlThatIsNotAUrlWithoutRepeatingIt() {
        ImageDownloader downloader = trustingLocalServer(Map.of());

        assertRefused(failure(downloader, "https://" + PUBLIC_NAME + "/a b.png?signature=secret"), "not a valid URL");
        assertThat(local.server().connections).hasValue(0);
    }

    // --- redirects: every hop is checked again ----------------------------------------------------------------

    @Test
    void refusesRedirectFromPublicNameToLoopbackWithoutConnecting() throws Exception {
        try (AcceptCounter elsewhere = AcceptCounter.on("127.0.0.2")) {
            local.server()
                    .answering(request ->
                            LocalServer.redirect(request, "https://127.0.0.2:" + elsewhere.port() + "/a.png"));
            ImageDownloader downloader = trustingLocalServer(Map.of());

            DownloadException failure = failure(downloader, local.server().url(PUBLIC_NAME, "/start"));

            assertRefused(
                    failure,
                    "redirect 1 leads to a refused location: host"
                            + " '127.0.0.2' has address 127.0.0.2, which is loopback: answer URLs are never fetched"
                            + " from such an address");
            assertThat(local.server().requests).hasValue(1);
            assertThat(elsewhere.accepted).hasValue(0);
        }
    }

    @ParameterizedTest(name = "to {0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "https://metadata.google.internal/computeMetadata/v1/ | host 'metadata.google.internal' is a cloud"
                        + " metadata endpoint's name: it is never fetched from",
                "https://169.254.169.254/latest/meta-data/ | host '169.254.169.254' has address 169.254.169.254, which"
                        + " is link-local (cloud metadata)",
                "https://10.0.0.5/a.png | host '10.0.0.5' has address 10.0.0.5, which is private",
                "https://192.168.1.20/a.png | host '192.168.1.20' has address 192.168.1.20, which is private",
                "http://images.gateway.example/a.png | only https:// answer URLs are fetched, not http://",
            })
    void refusesRedirectFromPublicNameToForbiddenLocation(String location, String reason) {
        local.server().answering(request -> LocalServer.redirect(request, location));
        // A connection attempt to an outside address would last until the 30 s timeout: the refusal comes first.
        ImageDownloader downloader = trustingLocalServer(Map.of("image-worker.download.timeout", "30s"));

        DownloadException failure =
                failure(downloader, local.server().url(PUBLIC_NAME, "/start"), Duration.ofSeconds(5));

        assertThat(failure.getMessage())
                .startsWith("the gateway's image url was refused: redirect 1 leads to a refused location: " + reason);
        assertRefusedForGood(failure);
        assertThat(local.server().requests).hasValue(1);
    }

    // --- what is allowed -------------------------------------------------------------------------------------

    @Test
    void downloadsAnswerFromPublicNameOverVerifiedTls() {
        byte[] png = TestImages.png(64, 48);
        local.server().answering(request -> request.response()
                .putHeader("Content-Type", "image/png")
                .end(Buffer.buffer(png)));
        ImageDownloader downloader = trustingLocalServer(Map.of());
        AtomicLong held = new AtomicLong(NOTHING);

        byte[] downloaded = download(downloader, local.server().url(PUBLIC_NAME, "/files/a.png?sig=abc"), held);

        assertThat(downloaded).isEqualTo(png);
        // Connected to the checked address, but TLS and HTTP still name the host.
        assertThat(local.server().serverNames).containsExactly(PUBLIC_NAME);
        assertThat(local.server().hostHeaders)
                .containsExactly(PUBLIC_NAME + ":" + local.server().port());
        // The memory budget learnt the size from the Content-Length, before the body.
        assertThat(held).hasValue(png.length);
    }

    /** The gateway simulator's case: its files are plain http on 127.0.0.1, named as an internal host. */
    @Test
    void downloadsPlainHttpFromLoopbackHostListedAsInternal() throws Exception {
        byte[] png = TestImages.png(32, 32);
        try (LocalServer plain = LocalServer.start(local.vertx(), "127.0.0.1", null)) {
            plain.answering(request -> request.response().end(Buffer.buffer(png)));
            ImageDownloader downloader = production(Map.of("image-worker.gateway.url-internal-hosts", "127.0.0.1"));

            assertThat(download(downloader, plain.url("127.0.0.1", "/files/a.png"), new AtomicLong()))
                    .isEqualTo(png);
            assertThat(plain.requests).hasValue(1);
        }
    }

    /**
     * Listing a cloud metadata endpoint as internal does not make it reachable: by its name, by its link-local
     * address, or by the addresses that lie inside ranges an internal host may use (Alibaba Cloud's in carrier-grade
     * NAT). A connection attempt would last until the 30 s timeout: the refusal comes first.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "metadata.google.internal | host 'metadata.google.internal' is a cloud metadata endpoint's name: it is"
                        + " never fetched from",
                "169.254.169.254 | host '169.254.169.254' has address 169.254.169.254, which is link-local (cloud"
                        + " metadata): answer URLs are never fetched from such an address",
                "100.100.100.200 | host '100.100.100.200' has address 100.100.100.200, which is cloud metadata"
                        + " (Alibaba Cloud): answer URLs are never fetched from such an address",
                "192.0.0.192 | host '192.0.0.192' has address 192.0.0.192, which is cloud metadata (Oracle Cloud):"
                        + " answer URLs are never fetched from such an address",
            })
    void refusesCloudMetadataEvenForHostListedAsInternal(String host, String reason) {
        ImageDownloader downloader = production(
                Map.of("image-worker.gateway.url-internal-hosts", host, "image-worker.download.timeout", "30s"));

        assertRefused(failure(downloader, "http://" + host + "/latest/meta-data/", Duration.ofSeconds(5)), reason);
    }

    /** By its name, whatever a resolver answers for it (here the local server's address, which these tests allow). */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"metadata.google.internal", "metadata.goog", "metadata.goog.", "instance-data.ec2.internal"})
    void refusesCloudMetadataNamesWhateverTheyResolveTo(String name) {
        ImageDownloader downloader = trustingLocalServer(Map.of());

        DownloadException failure =
                failure(downloader, "https://" + name + ":" + local.server().port() + "/v1/");

        assertRefused(failure, "host '" + name + "' is a cloud metadata endpoint's name: it is never fetched from");
        assertThat(local.server().connections).hasValue(0);
    }

    /**
     * A host listed in {@code IMAGE_WORKER_GATEWAY_URL_INTERNAL_HOSTS} is trusted only when the answer URL itself names
     * it: an outside host that redirects there, over plain http or https, is refused before any connection to it.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"http", "https"})
    void refusesRedirectFromPublicHostToListedInternalHostWithoutConnecting(String scheme) throws Exception {
        try (AcceptCounter internal = AcceptCounter.on("127.0.0.1")) {
            local.server()
                    .answering(request -> LocalServer.redirect(
                            request, scheme + "://files.internal:" + internal.port() + "/secret.png"));
            ImageDownloader downloader =
                    trustingLocalServer(Map.of("image-worker.gateway.url-internal-hosts", "files.internal"));

            DownloadException failure = failure(downloader, local.server().url(PUBLIC_NAME, "/start"));

            assertRefused(
                    failure,
                    "redirect 1 leads to a refused location: host '" + PUBLIC_NAME + "' is not an internal host and"
                            + " may not lead to internal host 'files.internal': an internal host is fetched from only"
                            + " when the URL itself names it");
            assertThat(local.server().requests).hasValue(1);
            assertThat(internal.accepted).hasValue(0);
        }
    }

    @Test
    void refusesRedirectFromInternalHostToUnlistedLoopbackWithoutConnecting() throws Exception {
        try (LocalServer plain = LocalServer.start(local.vertx(), "127.0.0.1", null);
                AcceptCounter elsewhere = AcceptCounter.on("127.0.0.2")) {
            plain.answering(
                    request -> LocalServer.redirect(request, "https://127.0.0.2:" + elsewhere.port() + "/a.png"));
            ImageDownloader downloader =
                    production(Map.of("image-worker.gateway.url-internal-hosts", "files.internal"));

            DownloadException failure = failure(downloader, plain.url("files.internal", "/start"));

            assertThat(failure.getMessage())
                    .isEqualTo("the gateway's image url was refused: redirect 1 leads to a refused location: host"
                            + " '127.0.0.2' has address 127.0.0.2, which is loopback: answer URLs are never fetched"
                            + " from such an address");
            assertThat(plain.requests).hasValue(1);
            assertThat(elsewhere.accepted).hasValue(0);
        }
    }

    // --- the download's other failures, as before ------------------------------------------------------------

    @Test
    void anExpiredUrlFailsForGood() {
        local.server()
                .answering(request -> request.response().setStatusCode(404).end("404 page not found"));
        ImageDownloader downloader = trustingLocalServer(Map.of());

        DownloadException failure = failure(downloader, local.server().url(PUBLIC_NAME, "/files/gone.png"));

        assertThat(failure.getMessage())
                .startsWith("the image download answered 404 (the temporary URL has expired or is wrong)");
        assertRefusedForGood(failure);
    }

    @Test
    void aServerErrorMayBeTriedAgain() {
        local.server()
                .answering(request -> request.response().setStatusCode(503).end());
        ImageDownloader downloader = trustingLocalServer(Map.of());

        DownloadException failure = failure(downloader, local.server().url(PUBLIC_NAME, "/files/a.png"));

        assertThat(failure.getMessage()).startsWith("the image download answered 503");
        assertThat(failure.transientFailure()).isTrue();
        assertThat(failure.timedOut()).isFalse();
    }

    @Test
    void aHangingDownloadTimesOut() {
        local.server().answering(request -> {
            // Never answers.
        });
        ImageDownloader downloader = trustingLocalServer(Map.of("image-worker.download.timeout", "500ms"));

        DownloadException failure = failure(downloader, local.server().url(PUBLIC_NAME, "/files/slow.png"));

        assertThat(failure.timedOut()).isTrue();
        assertThat(failure.getMessage()).startsWith("the image download did not finish in time");
    }

    // --- helpers ----------------------------------------------------------------------------------------------

    /** The production address rule, with the test resolver and the local server's certificate. */
    private static ImageDownloader production(Map<String, String> settings) {
        return kept(new ImageDownloader(
                local.vertx(),
                config(settings),
                TestConfig.settings(GatewaySettings.class, all(settings)),
                TestConfig.settings(DownloadSettings.class, all(settings)),
                AddressPolicy.PUBLIC_ONLY,
                RESOLVER,
                local.certificate().trustOptions()));
    }

    /** As {@link #production}, except that 127.0.0.1 passes for a public address. */
    private static ImageDownloader trustingLocalServer(Map<String, String> settings) {
        return kept(new ImageDownloader(
                local.vertx(),
                config(settings),
                TestConfig.settings(GatewaySettings.class, all(settings)),
                TestConfig.settings(DownloadSettings.class, all(settings)),
                LOCAL_SERVER_AS_PUBLIC,
                RESOLVER,
                local.certificate().trustOptions()));
    }

    private static ImageDownloader kept(ImageDownloader downloader) {
        downloaders.add(downloader);
        return downloader;
    }

    private static WorkerConfig config(Map<String, String> settings) {
        return TestConfig.worker(all(settings));
    }

    /** The settings of these tests: a download timeout of 5 s, and {@code settings}. */
    private static Map<String, String> all(Map<String, String> settings) {
        Map<String, String> all = new HashMap<>(Map.of("image-worker.download.timeout", "5s"));
        all.putAll(settings);
        return all;
    }

    private static byte[] download(ImageDownloader downloader, String url, AtomicLong held) {
        return downloader
                .download(url, held::set)
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create())
                .awaitItem(LocalServer.patience())
                .getItem();
    }

    private static DownloadException failure(ImageDownloader downloader, String url) {
        return failure(downloader, url, LocalServer.patience());
    }

    private static DownloadException failure(ImageDownloader downloader, String url, Duration within) {
        Throwable failure = downloader
                .download(url, bytes -> {})
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create())
                .awaitFailure(within)
                .getFailure();
        assertThat(failure).isInstanceOf(DownloadException.class);
        return (DownloadException) failure;
    }

    /** Refused for good ({@link #assertRefusedForGood}), the message saying why after the refusal's common start. */
    private static void assertRefused(DownloadException failure, String reason) {
        assertThat(failure.getMessage()).isEqualTo("the gateway's image url was refused: " + reason);
        assertRefusedForGood(failure);
    }

    /** Not a timeout, and not worth trying again: the request ends {@code INVALID_OUTPUT} ({@link ImageReceiver}). */
    private static void assertRefusedForGood(DownloadException failure) {
        assertThat(failure.timedOut()).isFalse();
        assertThat(failure.transientFailure()).isFalse();
    }

    /**
     * A bare listening socket on one loopback address that counts the connections it accepts and closes each at
     * once: below TLS and HTTP, so that any connection counts, even one whose handshake would fail.
     */
    private static final class AcceptCounter implements AutoCloseable {
        final AtomicInteger accepted = new AtomicInteger();
        private final ServerSocket socket;

        private AcceptCounter(ServerSocket socket) {
            this.socket = socket;
            Thread acceptor = new Thread(this::acceptAll, "accept-counter-" + socket.getLocalPort());
            acceptor.setDaemon(true);
            acceptor.start();
        }

        static AcceptCounter on(String address) throws IOException {
            return new AcceptCounter(new ServerSocket(0, 50, InetAddress.getByName(address)));
        }

        int port() {
            return socket.getLocalPort();
        }

        private void acceptAll() {
            while (!socket.isClosed()) {
                try (Socket accepted = socket.accept()) {
                    // Counted before it is closed: a client sees the close only after the count.
                    this.accepted.incrementAndGet();
                } catch (IOException closed) {
                    return;
                }
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
