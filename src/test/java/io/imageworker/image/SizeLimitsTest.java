package io.imageworker.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.imageworker.image.SizeLimits.Rule;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class SizeLimitsTest {

    @ParameterizedTest(name = "{0}x{1} is valid")
    @CsvSource({
        "1024, 1024",
        "3840, 2160", // exactly the maximum pixel count, edge at the cap
        "2160, 3840",
        "1280, 512", // exactly the minimum pixel count
        "1536, 512", // exactly 3:1
        "512, 1536",
        "3840, 1280"
    })
    void acceptsSizesOnTheBorders(int width, int height) {
        ImageSize size = new ImageSize(width, height);
        assertThat(SizeLimits.isValid(size)).isTrue();
        assertThat(SizeLimits.brokenRules(size)).isEmpty();
    }

    @ParameterizedTest(name = "{0}x{1} breaks {2}")
    @CsvSource({
        "1552, 512, RATIO", // just over 3:1
        "512, 1552, RATIO",
        "3856, 1936, LONGEST_EDGE", // 7.47 MP, 2:1, but over the edge cap
        "1025, 1024, MULTIPLE_OF_16",
        "1024, 1000, MULTIPLE_OF_16",
        "1264, 512, TOTAL_PIXELS", // 647,168: just under the minimum
        "3840, 2176, TOTAL_PIXELS" // 8,355,840: just over the maximum
    })
    void namesTheOneRuleBroken(int width, int height, Rule rule) {
        ImageSize size = new ImageSize(width, height);
        assertThat(SizeLimits.isValid(size)).isFalse();
        assertThat(SizeLimits.brokenRules(size)).containsExactly(rule);
    }

    @org.junit.jupiter.api.Test
    void namesEveryRuleBrokenInOrder() {
        assertThat(SizeLimits.brokenRules(new ImageSize(5000, 100))).containsExactly(Rule.values());
        assertThat(Rule.RATIO.description()).isEqualTo("aspect ratio at most 3:1 either way");
    }

    @org.junit.jupiter.api.Test
    void imageSizeWritesTheGatewayPixelStringAndRefusesEmptySides() {
        assertThat(new ImageSize(1536, 864)).hasToString("1536x864");
        assertThat(new ImageSize(1536, 864).swapped()).hasToString("864x1536");
        assertThat(new ImageSize(1_000_000, 1_000_000).pixels()).isEqualTo(1_000_000_000_000L);
        assertThatThrownBy(() -> new ImageSize(0, 10)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new ImageSize(10, -1)).isInstanceOf(IllegalArgumentException.class);
    }
}
