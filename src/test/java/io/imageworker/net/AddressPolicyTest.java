package io.imageworker.net;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Optional;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.Size;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class AddressPolicyTest {

    private static final AddressPolicy POLICY = AddressPolicy.PUBLIC_ONLY;

    @ParameterizedTest(name = "{0} is {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "127.0.0.1       | loopback",
                "127.255.255.254 | loopback",
                "169.254.169.254 | link-local (cloud metadata)",
                "169.254.0.1     | link-local (cloud metadata)",
                "10.0.0.5        | private",
                "10.255.255.255  | private",
                "172.16.0.1      | private",
                "172.31.255.255  | private",
                "192.168.1.1     | private",
                "0.0.0.0         | unspecified",
                "0.1.2.3         | unspecified",
                "100.64.0.1      | carrier-grade NAT",
                "100.100.100.200 | cloud metadata (Alibaba Cloud)",
                "100.100.100.199 | carrier-grade NAT",
                "100.127.255.255 | carrier-grade NAT",
                "224.0.0.1       | multicast",
                "239.255.255.250 | multicast",
                "255.255.255.255 | broadcast",
                "240.0.0.1       | reserved",
                "192.0.0.170     | reserved",
                "192.0.0.192     | cloud metadata (Oracle Cloud)",
                "198.18.0.1      | reserved",
                "::                    | unspecified",
                "::1                   | loopback",
                "fe80::1               | link-local",
                "febf:ffff::1          | link-local",
                "fc00::1               | private (unique local)",
                "fd00:ec2::254         | cloud metadata (AWS fd00:ec2::/32)",
                "fd00:ec3::1           | private (unique local)",
                "fec0::1               | private (site-local)",
                "ff02::1               | multicast",
                "ff05::1:3             | multicast",
                "::7f00:1              | IPv4-compatible (deprecated)",
                "64:ff9b:1::a00:5      | private",
            })
    void refusesEveryForbiddenIpv4AndIpv6Range(String address, String kind) throws UnknownHostException {
        InetAddress parsed = InetAddress.getByName(address);
        assertThat(parsed).isInstanceOf(address.contains(":") ? Inet6Address.class : Inet4Address.class);

        assertThat(POLICY.refusal(parsed)).contains(kind);
    }

    @ParameterizedTest(name = "::ffff:{0} is {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "127.0.0.1       | loopback (in IPv4-mapped IPv6)",
                "169.254.169.254 | link-local (cloud metadata) (in IPv4-mapped IPv6)",
                "10.0.0.5        | private (in IPv4-mapped IPv6)",
                "172.16.0.1      | private (in IPv4-mapped IPv6)",
                "192.168.0.1     | private (in IPv4-mapped IPv6)",
                "0.0.0.0         | unspecified (in IPv4-mapped IPv6)",
                "100.64.0.1      | carrier-grade NAT (in IPv4-mapped IPv6)",
                "100.100.100.200 | cloud metadata (Alibaba Cloud) (in IPv4-mapped IPv6)",
                "224.0.0.1       | multicast (in IPv4-mapped IPv6)",
                "255.255.255.255 | broadcast (in IPv4-mapped IPv6)",
            })
    void refusesIpv4MappedFormsOfForbiddenAddresses(String ipv4, String kind) throws UnknownHostException {
        // The JDK turns a parsed ::ffff:a.b.c.d into an Inet4Address; an Inet6Address built from the bytes stays one.
        Inet6Address mapped = Inet6Address.getByAddress(null, mapped(InetAddress.getByName(ipv4)), null);

        assertThat(POLICY.refusal(mapped)).contains(kind);
        assertThat(POLICY.refusal(InetAddress.getByName("::ffff:" + ipv4))).isPresent();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"64:ff9b::7f00:1", "64:ff9b::a9fe:a9fe", "2002:7f00:1::1", "2002:a9fe:a9fe::1"})
    void refusesNat64And6to4FormsOfForbiddenAddresses(String address) throws UnknownHostException {
        assertThat(POLICY.refusal(InetAddress.getByName(address))).isPresent();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(
            strings = {
                "8.8.8.8",
                "1.1.1.1",
                "93.184.215.14",
                "9.255.255.255",
                "11.0.0.0",
                "100.63.255.255",
                "100.128.0.0",
                "126.255.255.255",
                "128.0.0.0",
                "169.253.255.255",
                "169.255.0.0",
                "172.15.255.255",
                "172.32.0.0",
                "192.167.255.255",
                "192.169.0.0",
                "223.255.255.255",
                "2606:4700:4700::1111",
                "2001:4860:4860::8888",
                "64:ff9b::808:808",
                "2002:808:808::1",
            })
    void allowsPublicAddresses(String address) throws UnknownHostException {
        assertThat(POLICY.refusal(InetAddress.getByName(address))).isEmpty();
    }

    /** For a host named as internal: the addresses of a network of one's own, and nothing more. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(
            strings = {
                "127.0.0.1",
                "127.0.0.2",
                "10.0.0.5",
                "172.16.0.1",
                "192.168.1.20",
                "100.64.0.1",
                "100.100.100.199",
                "100.100.100.201",
                "::1",
                "fd12:3456::1",
                "8.8.8.8",
                "2606:4700:4700::1111"
            })
    void orInternalAllowsLoopbackPrivateAndPublicAddresses(String address) throws UnknownHostException {
        assertThat(POLICY.orInternal().refusal(InetAddress.getByName(address))).isEmpty();
    }

    @ParameterizedTest(name = "{0} is {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "169.254.169.254  | link-local (cloud metadata)",
                "169.254.0.1      | link-local (cloud metadata)",
                "fe80::1          | link-local",
                "fd00:ec2::254    | cloud metadata (AWS fd00:ec2::/32)",
                "100.100.100.200  | cloud metadata (Alibaba Cloud)",
                "192.0.0.192      | cloud metadata (Oracle Cloud)",
                "0.0.0.0          | unspecified",
                "::               | unspecified",
                "224.0.0.1        | multicast",
                "255.255.255.255  | broadcast",
                "240.0.0.1        | reserved",
                "64:ff9b::a9fe:a9fe | link-local (cloud metadata) (in NAT64 IPv6)",
                "::7f00:1         | IPv4-compatible (deprecated)",
            })
    void orInternalStillRefusesMetadataAndEverythingElse(String address, String kind) throws UnknownHostException {
        assertThat(POLICY.orInternal().refusal(InetAddress.getByName(address))).contains(kind);
    }

    @Test
    void orInternalLiftsOnlyTheRefusalsOfInternalAddresses() throws UnknownHostException {
        AddressPolicy nothing = address -> Optional.of("refused by the test");

        assertThat(nothing.orInternal().refusal(InetAddress.getByName("8.8.8.8")))
                .contains("refused by the test");
        assertThat(nothing.orInternal().refusal(InetAddress.getByName("10.0.0.5")))
                .isEmpty();
    }

    @Property
    void judgesIpv4MappedFormAsItsIpv4Address(@ForAll @Size(4) byte[] ipv4) throws UnknownHostException {
        InetAddress plain = InetAddress.getByAddress(ipv4);
        Inet6Address mapped = Inet6Address.getByAddress(null, mapped(plain), null);

        assertThat(POLICY.refusal(mapped).isPresent())
                .isEqualTo(POLICY.refusal(plain).isPresent());
    }

    @Property
    void refusesEveryAddressTheJdkCallsLoopbackLinkLocalSiteLocalAnyOrMulticast(@ForAll @Size(16) byte[] ipv6)
            throws UnknownHostException {
        for (InetAddress address : new InetAddress[] {
            InetAddress.getByAddress(java.util.Arrays.copyOf(ipv6, 4)), Inet6Address.getByAddress(null, ipv6, null)
        }) {
            if (address.isLoopbackAddress()
                    || address.isLinkLocalAddress()
                    || address.isSiteLocalAddress()
                    || address.isAnyLocalAddress()
                    || address.isMulticastAddress()) {
                assertThat(POLICY.refusal(address)).as(address.getHostAddress()).isPresent();
            }
        }
    }

    private static byte[] mapped(InetAddress ipv4) {
        byte[] bytes = new byte[16];
        bytes[10] = (byte) 0xff;
        bytes[11] = (byte) 0xff;
        System.arraycopy(ipv4.getAddress(), 0, bytes, 12, 4);
        return bytes;
    }
}
