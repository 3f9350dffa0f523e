package io.imageworker.testing;

import io.vertx.core.Vertx;
import io.vertx.core.net.SelfSignedCertificate;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What the tests of the fetchers of URLs the worker did not choose (references, gateway answers) set up alike: one
 * Vert.x for the test class, the self-signed certificate of its host name ({@link TestCertificates}), and for each test
 * a TLS {@link LocalServer} on 127.0.0.1 presenting that certificate. Registered on a static field with {@code
 * @RegisterExtension}; the server of a test is closed after the test's own {@code @AfterEach} methods, so that a test
 * class can close its clients first.
 */
public final class LocalServerExtension
        implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback, AfterEachCallback {

    private final String certificateHost;
    private Vertx vertx;
    private SelfSignedCertificate certificate;
    private LocalServer server;

    /** The certificate names {@code certificateHost}: the host name the tests' URLs give the local server. */
    public LocalServerExtension(String certificateHost) {
        this.certificateHost = certificateHost;
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        vertx = Vertx.vertx();
        certificate = TestCertificates.forHost(certificateHost);
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        server = LocalServer.start(vertx, "127.0.0.1", certificate);
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        try {
            server.close();
        } finally {
            server = null;
        }
    }

    /** The test class's Vert.x. */
    public Vertx vertx() {
        return vertx;
    }

    /** The certificate the local server presents. */
    public SelfSignedCertificate certificate() {
        return certificate;
    }

    /** The current test's local TLS server; there is none outside a test (a closed one would count nothing). */
    public LocalServer server() {
        if (server == null) {
            throw new IllegalStateException("the local server runs only during a test");
        }
        return server;
    }
}
