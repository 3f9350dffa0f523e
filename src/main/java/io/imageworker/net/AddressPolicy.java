package io.imageworker.net;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.List;
import java.util.Optional;

/**
 * Which IP addresses a URL that the worker did not choose may be fetched from: an {@code https://} reference, or the
 * {@code url} a gateway answered with. The worker runs inside a network the producer of a request (or a misbehaving
 * gateway) does not own: such a URL must never make it reach a service on that network, its own machine, or the cloud
 * metadata endpoint that hands out its credentials: {@code 169.254.169.254} (AWS, Google Cloud, Azure, Oracle Cloud),
 * {@code fd00:ec2::254} (AWS over IPv6), {@code 100.100.100.200} (Alibaba Cloud, inside the carrier-grade NAT range an
 * internal host may use) and {@code 192.0.0.192} (Oracle Cloud's older endpoint).
 *
 * <p>{@link #PUBLIC_ONLY} is the policy of every host by default. The one loosening is {@link #orInternal()}, for a
 * gateway answer host the operator names in {@code IMAGE_WORKER_GATEWAY_URL_INTERNAL_HOSTS} because it runs inside
 * its own network; references have no such setting. The interface also exists so that a test can allow the loopback
 * address of its own local server, through the package-private constructors of the fetchers.
 */
@FunctionalInterface
public interface AddressPolicy {

    /**
     * Why {@code address} must not be connected to, or empty when it may be.
     *
     * @param address a resolved address, or the address a connection actually reached
     * @return the kind of address refused (for the refusal message), or empty
     */
    Optional<String> refusal(InetAddress address);

    /**
     * Refuses every address that is not a public unicast address: loopback, link-local (cloud metadata included),
     * private, unique-local, unspecified, carrier-grade NAT, multicast, broadcast and reserved ranges, and the same
     * IPv4 ranges when carried inside an IPv6 address (IPv4-mapped {@code ::ffff:a.b.c.d}, NAT64 {@code 64:ff9b::/96},
     * 6to4 {@code 2002::/16}). Deprecated IPv4-compatible {@code ::a.b.c.d} addresses are refused whole.
     */
    AddressPolicy PUBLIC_ONLY = Ranges::refusal;

    /**
     * This policy, except that loopback, private ({@code 10/8}, {@code 172.16/12}, {@code 192.168/16}, unique local
     * {@code fc00::/7}) and carrier-grade NAT addresses are allowed: the addresses a service inside the operator's own
     * network has. Link-local (cloud metadata), the cloud metadata addresses inside the allowed ranges (Alibaba
     * Cloud's {@code 100.100.100.200} in carrier-grade NAT, the AWS service range {@code fd00:ec2::/32} with its IPv6
     * endpoint in unique local), unspecified, multicast and reserved addresses stay refused, as do internal addresses
     * carried inside another IPv6 form: no host, however trusted, may lead to the credentials of the machine.
     */
    default AddressPolicy orInternal() {
        return address -> refusal(address).filter(kind -> !Ranges.internal(address));
    }

    /** The forbidden ranges, most specific first so that the message names the narrowest kind. */
    final class Ranges {
        /** Cloud metadata endpoints that lie inside ranges a host of one's own may use: never internal. */
        private static final Range ALIBABA_METADATA = range("100.100.100.200/32", "cloud metadata (Alibaba Cloud)");

        private static final Range ORACLE_METADATA = range("192.0.0.192/32", "cloud metadata (Oracle Cloud)");

        /** Inside {@code fc00::/7}, but never internal: AWS serves its instance metadata at {@code fd00:ec2::254}. */
        private static final Range AWS_SERVICES = range("fd00:ec2::/32", "cloud metadata (AWS fd00:ec2::/32)");

        private static final List<Range> METADATA = List.of(ALIBABA_METADATA, ORACLE_METADATA, AWS_SERVICES);

        private static final List<Range> V4 = List.of(
                ALIBABA_METADATA,
                ORACLE_METADATA,
                range("255.255.255.255/32", "broadcast"),
                range("0.0.0.0/8", "unspecified"),
                range("10.0.0.0/8", "private"),
                range("100.64.0.0/10", "carrier-grade NAT"),
                range("127.0.0.0/8", "loopback"),
                range("169.254.0.0/16", "link-local (cloud metadata)"),
                range("172.16.0.0/12", "private"),
                range("192.0.0.0/24", "reserved"),
                range("192.168.0.0/16", "private"),
                range("198.18.0.0/15", "reserved"),
                range("224.0.0.0/4", "multicast"),
                range("240.0.0.0/4", "reserved"));

        private static final List<Range> V6 = List.of(
                range("::/128", "unspecified"),
                range("::1/128", "loopback"),
                range("::/96", "IPv4-compatible (deprecated)"),
                range("64:ff9b:1::/48", "private"),
                AWS_SERVICES,
                range("fc00::/7", "private (unique local)"),
                range("fe80::/10", "link-local"),
                range("fec0::/10", "private (site-local)"),
                range("ff00::/8", "multicast"));

        /** What {@link AddressPolicy#orInternal()} allows: the addresses of a network of one's own. */
        private static final List<Range> INTERNAL = List.of(
                range("10.0.0.0/8", "private"),
                range("100.64.0.0/10", "carrier-grade NAT"),
                range("127.0.0.0/8", "loopback"),
                range("172.16.0.0/12", "private"),
                range("192.168.0.0/16", "private"),
                range("::1/128", "loopback"),
                range("fc00::/7", "private (unique local)"));

        private static final Range MAPPED = range("::ffff:0:0/96", "IPv4-mapped");
        private static final Range NAT64 = range("64:ff9b::/96", "NAT64");
        private static final Range SIX_TO_FOUR = range("2002::/16", "6to4");

        private Ranges() {}

        static Optional<String> refusal(InetAddress address) {
            byte[] bytes = address.getAddress();
            if (address instanceof Inet4Address) {
                return first(V4, bytes);
            }
            if (!(address instanceof Inet6Address)) {
                return Optional.of("unknown address family");
            }
            // An IPv6 address that carries an IPv4 address reaches that IPv4 address: judge it by the IPv4 rules.
            if (MAPPED.contains(bytes) || NAT64.contains(bytes)) {
                return first(V4, slice(bytes, 12)).map(kind -> kind + " (in " + kindOf(bytes) + " IPv6)");
            }
            if (SIX_TO_FOUR.contains(bytes)) {
                return first(V4, slice(bytes, 2)).map(kind -> kind + " (in 6to4 IPv6)");
            }
            return first(V6, bytes);
        }

        static boolean internal(InetAddress address) {
            byte[] bytes = address.getAddress();
            return first(METADATA, bytes).isEmpty() && first(INTERNAL, bytes).isPresent();
        }

        private static String kindOf(byte[] bytes) {
            return MAPPED.contains(bytes) ? MAPPED.kind() : NAT64.kind();
        }

        private static Optional<String> first(List<Range> ranges, byte[] bytes) {
            return ranges.stream()
                    .filter(range -> range.contains(bytes))
                    .map(Range::kind)
                    .findFirst();
        }

        private static byte[] slice(byte[] bytes, int from) {
            byte[] v4 = new byte[4];
            System.arraycopy(bytes, from, v4, 0, 4);
            return v4;
        }

        private static Range range(String cidr, String kind) {
            int slash = cidr.indexOf('/');
            try {
                // Literals only: getByName does no lookup for them. getAddress() keeps the 16-byte form of "::".
                byte[] prefix = InetAddress.getByName(cidr.substring(0, slash)).getAddress();
                if (cidr.startsWith("::ffff:")) {
                    prefix = new byte[16];
                    prefix[10] = (byte) 0xff;
                    prefix[11] = (byte) 0xff;
                }
                return new Range(prefix, Integer.parseInt(cidr.substring(slash + 1)), kind);
            } catch (UnknownHostException e) {
                throw new IllegalArgumentException(cidr, e);
            }
        }
    }

    /** An address block: {@code bits} leading bits of {@code prefix}. */
    record Range(byte[] prefix, int bits, String kind) {
        boolean contains(byte[] address) {
            if (address.length != prefix.length) {
                return false;
            }
            int whole = bits / 8;
            for (int i = 0; i < whole; i++) {
                if (address[i] != prefix[i]) {
                    return false;
                }
            }
            int rest = bits % 8;
            if (rest == 0) {
                return true;
            }
            int mask = (0xff << (8 - rest)) & 0xff;
            return (address[whole] & mask) == (prefix[whole] & mask);
        }
    }
}
