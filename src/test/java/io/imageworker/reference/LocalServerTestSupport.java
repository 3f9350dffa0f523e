package io.imageworker.reference;

import io.imageworker.config.WorkerConfig;
import io.imageworker.net.AddressPolicy;
import io.imageworker.net.DownloadSettings;
import io.imageworker.testing.LocalServer;
import io.imageworker.testing.LocalServerExtension;
import io.imageworker.testing.TestConfig;
import java.util.HashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.parallel.ResourceLock;

/**
 * What the tests of {@code https://} references share: Vert.x, a self-signed certificate for {@code localhost}, a
 * {@link LocalServer} on 127.0.0.1 for each test, and fetchers configured as the worker would be. The extension is a
 * static field of this class, which all its subclasses share: they run one at a time (the lock), beside other test
 * classes.
 */
@ResourceLock("LocalServerTestSupport")
abstract class LocalServerTestSupport {

    /**
     * The only loosening of the address rule in these tests, and only where a test says so: the loopback address
     * the local servers listen on ({@code ::1} too, where {@code localhost} also resolves to it). Every other
     * address, {@code 127.0.0.2} included, is judged by the production rule.
     */
    static final AddressPolicy LOCAL_TEST_SERVER_ONLY =
            address -> Set.of("127.0.0.1", "0:0:0:0:0:0:0:1").contains(address.getHostAddress())
                    ? Optional.empty()
                    : AddressPolicy.PUBLIC_ONLY.refusal(address);

    /** Vert.x, a certificate for {@code localhost} and, for each test, a local TLS server on 127.0.0.1. */
    @RegisterExtension
    static final LocalServerExtension local = new LocalServerExtension("localhost");

    /**
     * The worker's configuration with these two settings.
     *
     * @param allowedHosts {@code image-worker.reference.allowed-hosts}, or null to leave it unset
     * @param downloadTimeout {@code image-worker.download.timeout}, such as {@code 2s}
     */
    static WorkerConfig config(String allowedHosts, String downloadTimeout) {
        return TestConfig.worker(settings(allowedHosts, downloadTimeout));
    }

    /** The download settings with these two settings (see {@link #config}). */
    static DownloadSettings download(String allowedHosts, String downloadTimeout) {
        return TestConfig.settings(DownloadSettings.class, settings(allowedHosts, downloadTimeout));
    }

    /** The reference settings with these two settings (see {@link #config}). */
    static ReferenceSettings reference(String allowedHosts, String downloadTimeout) {
        return TestConfig.settings(ReferenceSettings.class, settings(allowedHosts, downloadTimeout));
    }

    private static Map<String, String> settings(String allowedHosts, String downloadTimeout) {
        Map<String, String> settings = new HashMap<>(Map.of("image-worker.download.timeout", downloadTimeout));
        if (allowedHosts != null) {
            settings.put("image-worker.reference.allowed-hosts", allowedHosts);
        }
        return settings;
    }

    /** The production rules: {@link AddressPolicy#PUBLIC_ONLY} and the JVM's trusted authorities. */
    static HttpsReferenceFetcher production(String allowedHosts, String timeout) {
        return new HttpsReferenceFetcher(
                local.vertx(), download(allowedHosts, timeout), reference(allowedHosts, timeout));
    }

    /** The test hook: the production rules, except that the local test server's loopback address is allowed. */
    static HttpsReferenceFetcher trustingLocalServer(DownloadSettings download, ReferenceSettings reference) {
        return new HttpsReferenceFetcher(
                local.vertx(),
                download,
                reference,
                LOCAL_TEST_SERVER_ONLY,
                local.certificate().trustOptions());
    }

    /** {@link #trustingLocalServer(DownloadSettings, ReferenceSettings)} with these two settings (see {@link #config}). */
    static HttpsReferenceFetcher trustingLocalServer(String allowedHosts, String timeout) {
        return trustingLocalServer(download(allowedHosts, timeout), reference(allowedHosts, timeout));
    }
}
