package io.imageworker.net;

import io.vertx.core.net.SocketAddress;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Optional;

/**
 * The address checks of one hop of a {@link GuardedFetcher} download: before connecting, every address the host name
 * resolves to passes the hop's {@link AddressPolicy} (else the URL is refused before any connection is opened); once
 * connected, the address actually reached is the one checked, and passes it too, before any byte is sent.
 */
final class AddressChecks {

    private AddressChecks() {}

    /**
     * The address to connect to, once every address of the host has passed the policy ({@code fetched}: what the rules
     * guard, for the message).
     */
    static InetAddress checked(GuardedFetcher.Target target, InetAddress[] addresses, String via, String fetched) {
        if (addresses == null || addresses.length == 0) {
            throw new FetchException(
                    FetchException.Kind.FAILED, via + "host '" + target.host() + "' could not be resolved");
        }
        for (InetAddress address : addresses) {
            Optional<String> refusal = target.policy().refusal(address);
            if (refusal.isPresent()) {
                throw FetchException.refused(via + "host '" + target.host() + "' has address "
                        + address.getHostAddress() + ", which is " + refusal.get() + ": " + fetched
                        + " are never fetched from such an address");
            }
        }
        return addresses[0];
    }

    /** Why the connection's remote address must not be used, or empty when it is the address checked. */
    static Optional<String> reachedRefusal(SocketAddress remote, InetAddress checked, AddressPolicy policy) {
        if (remote == null || !remote.isInetSocket() || remote.hostAddress() == null) {
            return Optional.of("the connection has no IP address");
        }
        String literal = remote.hostAddress();
        // Netty reports the socket's numeric address. Anything else is refused rather than handed to
        // getByName, which would look a name up, blocking the event loop.
        if (!literal.contains(":") && !literal.matches("[0-9]{1,3}(\\.[0-9]{1,3}){3}")) {
            return Optional.of("the connection's address is not numeric");
        }
        InetAddress reached;
        try {
            reached = InetAddress.getByName(literal);
        } catch (UnknownHostException e) {
            return Optional.of("the connection's address cannot be read");
        }
        if (!reached.equals(checked)) {
            return Optional.of("the connection reached " + reached.getHostAddress() + ", not the address checked");
        }
        return policy.refusal(reached)
                .map(kind -> "the connection reached " + reached.getHostAddress() + ", which is " + kind);
    }
}
