package io.imageworker.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class ObjectAddressTest {

    @Test
    void readsTheBucketAndTheKeyAsWritten() {
        ObjectAddress address = ObjectAddress.parse("s3://images/products/a-17 (2).jpg");

        assertThat(address.bucket()).isEqualTo("images");
        assertThat(address.key()).isEqualTo("products/a-17 (2).jpg");
        assertThat(address).hasToString("s3://images/products/a-17 (2).jpg");
    }

    @ParameterizedTest
    @ValueSource(
            strings = {"s3://images/...png", "s3://images/a..b/c.png", "s3://images/.hidden/x.png", "s3://b/é/ü.png"})
    void acceptsDotsThatAreNoSegmentOfTheirOwnAndUnicode(String uri) {
        assertThat(ObjectAddress.parse(uri).key()).isNotEmpty();
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                "s3://images/../secret/x.png|'..' segment",
                "s3://images/a/../../x.png|'..' segment",
                "s3://images/..|'..' segment",
                "s3://images/./x.png|'.' segment",
                "s3://images//x.png|empty segment",
                "s3://images/a//x.png|empty segment",
                "s3://images/a/|empty segment",
                "s3://images/%2e%2e/x.png|'%'",
                "s3://images/a\\..\\x.png|'\\'",
                "s3:///x.png|is not s3://bucket/key",
                "s3://images|is not s3://bucket/key",
                "s3://bad!bucket/x.png|names no valid bucket",
                "s3://-bad/x.png|names no valid bucket",
                "https://images/x.png|is not an s3:// address"
            })
    void refusesWhatAStoreOrAProxyMightResolveOrDecodeDifferently(String uri, String reason) {
        assertThatThrownBy(() -> ObjectAddress.parse(uri))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining(reason);
    }

    @Test
    void refusesControlCharactersBrokenUnicodeAndOverlongKeys() {
        assertThat(ObjectAddress.keyRefusal("a\u0000b")).get().asString().contains("control character");
        assertThat(ObjectAddress.keyRefusal("a\nb")).get().asString().contains("control character");
        assertThat(ObjectAddress.keyRefusal("a\u0085b")).get().asString().contains("control character");
        assertThat(ObjectAddress.keyRefusal("a\ud800b")).get().asString().contains("not valid Unicode");
        assertThat(ObjectAddress.keyRefusal("k".repeat(1024))).isEmpty();
        assertThat(ObjectAddress.keyRefusal("k".repeat(1025))).get().asString().contains("longer than 1024 bytes");
        // Bytes of UTF-8 count, not characters.
        assertThat(ObjectAddress.keyRefusal("é".repeat(513))).get().asString().contains("longer than 1024 bytes");
        assertThat(ObjectAddress.keyRefusal("")).get().asString().contains("empty key");
    }
}
