package io.imageworker.testing;

import io.vertx.core.net.SelfSignedCertificate;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Self-signed certificates for the tests' local TLS servers, one per host name and JVM. Making one draws a 2048-bit
 * RSA key pair, about a second of CPU in a test JVM that compiles with C1 only (no intrinsics for the big-number
 * arithmetic), and the classes that serve TLS asked for a new one each: the same certificate serves them all. Their
 * files are temporary files of the JVM, removed when it exits.
 */
public final class TestCertificates {

    private static final Map<String, SelfSignedCertificate> BY_HOST = new ConcurrentHashMap<>();

    private TestCertificates() {}

    /** The certificate issued for {@code host}; the same object for every caller in this JVM. */
    public static SelfSignedCertificate forHost(String host) {
        return BY_HOST.computeIfAbsent(host, SelfSignedCertificate::create);
    }
}
