package io.imageworker.net;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * Every address a host name stands for. {@link #SYSTEM} is the only resolver used in production; the interface exists
 * so that a test can give a public-looking name (or a cloud metadata name) the addresses it needs, without a DNS
 * server of its own.
 */
@FunctionalInterface
public interface HostResolver {

    /**
     * All the addresses of {@code host}, IPv4 and IPv6: the address rule must see every one of them. Called on a
     * worker thread; it may block.
     *
     * @param host a host name or an address literal (without IPv6 brackets)
     * @return at least one address
     * @throws UnknownHostException when the name has none
     */
    InetAddress[] resolve(String host) throws UnknownHostException;

    /**
     * The JDK resolver: it answers exactly as the system does (hosts file, search domains, nsswitch) and gives every
     * A and AAAA record at once, unlike the Vert.x DNS client.
     */
    HostResolver SYSTEM = InetAddress::getAllByName;
}
