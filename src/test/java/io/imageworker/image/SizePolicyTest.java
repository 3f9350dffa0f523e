package io.imageworker.image;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.imageworker.image.SizeDecision.Accepted;
import io.imageworker.image.SizeDecision.Basis;
import io.imageworker.image.SizeDecision.Refused;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.NullSource;
import org.junit.jupiter.params.provider.ValueSource;

class SizePolicyTest {

    @ParameterizedTest(name = "{0} sends {1}")
    @CsvSource({
        "1:1, 1024x1024",
        "2:3, 1024x1536",
        "3:2, 1536x1024",
        "16:9, 1536x864",
        "9:16, 864x1536",
        "4:3, 1536x1152",
        "3:4, 1152x1536",
        "4:5, 1232x1536",
        "5:4, 1536x1232"
    })
    void sendsThePreparedValueOfEveryTableRatio(String ratio, String expected) {
        assertThat(accepted(ratio)).isEqualTo(new Accepted(ratio, parse(expected), Basis.PREPARED_VALUE));
    }

    @ParameterizedTest(name = "{0} is {1}")
    @CsvSource({"32:18, 1536x864", "2:2, 1024x1024", "18:24, 1152x1536", "1000:1500, 1024x1536", "8:10, 1232x1536"})
    void reducesARatioBeforeLookingItUp(String ratio, String expected) {
        assertThat(accepted(ratio).sent()).hasToString(expected);
        assertThat(accepted(ratio).basis()).isEqualTo(Basis.PREPARED_VALUE);
    }

    @Test
    void theTableIsWhatTheRatioRuleGivesAtTheNormalCapExceptTheSquare() {
        // The table's values are the largest sizes of their ratio with a 1536 edge, except 1:1, pinned to 1024x1024.
        assertThat(SizePolicy.forRatio(16, 9, 1536)).hasToString("1536x864");
        assertThat(SizePolicy.forRatio(9, 16, 1536)).hasToString("864x1536");
        assertThat(SizePolicy.forRatio(2, 3, 1536)).hasToString("1024x1536");
        assertThat(SizePolicy.forRatio(3, 2, 1536)).hasToString("1536x1024");
        assertThat(SizePolicy.forRatio(4, 3, 1536)).hasToString("1536x1152");
        assertThat(SizePolicy.forRatio(3, 4, 1536)).hasToString("1152x1536");
        assertThat(SizePolicy.forRatio(4, 5, 1536)).hasToString("1232x1536");
        assertThat(SizePolicy.forRatio(5, 4, 1536)).hasToString("1536x1232");
        assertThat(SizePolicy.forRatio(1, 1, 1536)).hasToString("1536x1536");
    }

    @ParameterizedTest(name = "{0} sends {1}")
    @CsvSource({"21:9, 1536x656", "7:5, 1536x1104", "1:2, 768x1536", "3:1, 1536x512", "1:3, 512x1536"})
    void sendsARatioWithoutPreparedValueAtTheNormalCap(String ratio, String expected) {
        assertThat(accepted(ratio)).isEqualTo(new Accepted(ratio, parse(expected), Basis.RATIO_NORMALIZED));
    }

    @ParameterizedTest(name = "{0} is clamped to 3:1")
    @ValueSource(strings = {"4:1", "10:1", "10000:1", "1000000:1"})
    void clampsAWideRatioToThreeToOne(String ratio) {
        assertThat(accepted(ratio).sent()).hasToString("1536x512");
    }

    @ParameterizedTest(name = "{0} is clamped to 1:3")
    @ValueSource(strings = {"1:4", "1:10000", "2:999999"})
    void clampsATallRatioToOneToThree(String ratio) {
        assertThat(accepted(ratio).sent()).hasToString("512x1536");
    }

    @ParameterizedTest(name = "{0} is sent as is")
    @ValueSource(
            strings = {
                "1024x1024",
                "1536x864",
                "2048x2048",
                "2048x1152",
                "1152x2048",
                "3840x2160",
                "2160x3840",
                "3840x1280", // 3:1 exactly, edge at the cap
                "1280x512", // exactly the minimum pixel count
                "2880x2880", // exactly the maximum pixel count
                "816x816"
            })
    void sendsAValidPixelSizeUnchanged(String size) {
        assertThat(accepted(size)).isEqualTo(new Accepted(size, parse(size), Basis.AS_REQUESTED));
    }

    @ParameterizedTest(name = "{0} sends {1}")
    @CsvSource({
        // Clamped to 1000x3000; 1000 and 3000 are halfway between multiples and both round up: 1008x3008 keeps 3:1.
        "1000x3500, 1008x3008",
        // Clamped to 1011x3033, rounded to 1008x3040, which is over 3:1: the repair shrinks the longer side to 3024.
        "1011x3500, 1008x3024",
        // Capped to 3840x3840 (14.7 MP), then scaled to exactly 8,294,400 pixels.
        "4000x4000, 2880x2880",
        // Scaled up to 809.5 square, rounded to 816.
        "100x100, 816x816",
        // Clamped to 300x100, scaled up to 1402x467, rounded to 1408x464: over 3:1 and too few pixels; the repair
        // grows the shorter side.
        "5000x100, 1408x480",
        // The same the other way round.
        "100x5000, 480x1408",
        // Only the multiple of 16 is wrong.
        "1025x1025, 1024x1024",
        "1x1, 816x816",
        "1000000x1000000, 2880x2880",
        "3856x2160, 3840x2144"
    })
    void normalizesAPixelSizeThatBreaksTheLimits(String size, String expected) {
        assertThat(accepted(size)).isEqualTo(new Accepted(size, parse(expected), Basis.NORMALIZED));
        assertThat(SizeLimits.isValid(accepted(size).sent())).isTrue();
    }

    @Test
    void toleratesOuterWhitespaceAnUpperCaseXAndLeadingZeros() {
        assertThat(accepted(" 1024x1024 "))
                .isEqualTo(new Accepted("1024x1024", parse("1024x1024"), Basis.AS_REQUESTED));
        assertThat(accepted("1024X1024")).isEqualTo(new Accepted("1024X1024", parse("1024x1024"), Basis.AS_REQUESTED));
        assertThat(accepted("\t16:9\n")).isEqualTo(new Accepted("16:9", parse("1536x864"), Basis.PREPARED_VALUE));
        assertThat(accepted("01024x1024").sent()).hasToString("1024x1024");
    }

    @ParameterizedTest(name = "\"{0}\" is the default")
    @NullSource
    @ValueSource(strings = {"", "   ", "auto", "AUTO", " Auto "})
    void sendsTheDefaultForAutoOrAbsentInGenerate(String size) {
        SizeDecision decision = SizePolicy.forGenerate(size);
        assertThat(decision).isInstanceOf(Accepted.class);
        Accepted accepted = (Accepted) decision;
        assertThat(accepted.sent()).hasToString("1024x1024");
        assertThat(accepted.basis()).isEqualTo(Basis.DEFAULT);
        assertThat(accepted.requested()).isEqualTo(size == null || size.isBlank() ? null : size.strip());
    }

    @ParameterizedTest(name = "\"{0}\" is refused")
    @ValueSource(
            strings = {
                "big",
                "0x0",
                "0x1024",
                "1024x0",
                "-5x10",
                "+5x10",
                "16:0",
                "0:9",
                "0:0",
                "-16:9",
                "99999999999x1",
                "1x99999999999",
                "1000001x1024",
                "16:1000001",
                "99999999999999999999:1",
                "1024 x 1024",
                "1024x",
                "x1024",
                "1024",
                "16:9:1",
                "1.5x2",
                "1024*1024",
                "1024×1024",
                "１０２４x１０２４",
                "16/9",
                "2k",
                "1024px",
                "auto-1024",
                "1e3x1e3",
                "0x10",
                "original"
            })
    void refusesAnythingElseNamingTheFieldAndTheAcceptedForms(String size) {
        SizeDecision decision = SizePolicy.forGenerate(size);
        assertThat(decision).isInstanceOf(Refused.class);
        String message = ((Refused) decision).message();
        assertThat(message).startsWith("size \"").contains("WIDTHxHEIGHT", "W:H", "auto");
        // The same string is refused for an edit: only auto depends on the operation.
        assertThat(SizePolicy.forEdit(size, inspected(800, 600, 1))).isEqualTo(decision);
    }

    @Test
    void saysWhatIsWrongWithTheNumbers() {
        assertThat(refusal("0x0")).contains("width and height must be whole numbers from 1 to 1000000");
        assertThat(refusal("16:0")).contains("both terms of a ratio must be whole numbers from 1 to 1000000");
        assertThat(refusal("-5x10")).contains("width and height must be whole numbers");
        assertThat(refusal("big")).isEqualTo("size \"big\" is not accepted: " + SizePolicy.ACCEPTED_FORMS);
    }

    @Test
    void quotesOnlyTheStartOfAHugeValue() {
        String huge = "a".repeat(100_000);
        assertThat(refusal(huge)).hasSizeLessThan(200).contains("\"" + "a".repeat(40) + "...\"");
    }

    @Test
    void followsTheBaseImageForAutoInEdit() {
        // 800x600 has too few pixels: scaled up to 935x701, rounded to 928x704 (653,312 pixels), repaired to 928x720.
        assertThat(SizePolicy.forEdit("auto", inspected(800, 600, 1)))
                .isEqualTo(new Accepted("auto", parse("928x720"), Basis.SOURCE_PROPORTIONS));
        assertThat(SizePolicy.forEdit(null, inspected(4000, 3000, 1)))
                .isEqualTo(new Accepted(null, parse("1536x1152"), Basis.SOURCE_PROPORTIONS));
        assertThat(SizePolicy.forEdit("", inspected(1024, 1536, 1)))
                .isEqualTo(new Accepted(null, parse("1024x1536"), Basis.SOURCE_PROPORTIONS));
    }

    @Test
    void turnsTheBaseImageSizeAQuarterForOrientationsFiveToEight() {
        for (int orientation = 5; orientation <= 8; orientation++) {
            assertThat(SizePolicy.forEdit("auto", inspected(4000, 3000, orientation)))
                    .isEqualTo(new Accepted("auto", parse("1152x1536"), Basis.SOURCE_PROPORTIONS));
        }
        for (int orientation = 1; orientation <= 4; orientation++) {
            assertThat(SizePolicy.fromSource(4000, 3000, orientation)).hasToString("1536x1152");
        }
    }

    @Test
    void ignoresAnInvalidOrientation() {
        assertThat(SizePolicy.fromSource(4000, 3000, 0)).hasToString("1536x1152");
        assertThat(SizePolicy.fromSource(4000, 3000, 9)).hasToString("1536x1152");
        assertThat(SizePolicy.fromSource(4000, 3000, -6)).hasToString("1536x1152");
    }

    @Test
    void sendsTheDefaultWhenTheBaseImageSizeIsUnknown() {
        ImageInfo unreadable = new ImageInfo(ImageFormat.PNG, Optional.empty(), 1, "PNG");
        assertThat(SizePolicy.forEdit("auto", unreadable))
                .isEqualTo(new Accepted("auto", SizePolicy.DEFAULT_SIZE, Basis.DEFAULT));
        assertThat(SizePolicy.forEdit(null, null))
                .isEqualTo(new Accepted(null, SizePolicy.DEFAULT_SIZE, Basis.DEFAULT));
    }

    @Test
    void anExplicitSizeInAnEditIgnoresTheBaseImage() {
        assertThat(SizePolicy.forEdit("16:9", inspected(300, 900, 6)))
                .isEqualTo(new Accepted("16:9", parse("1536x864"), Basis.PREPARED_VALUE));
        assertThat(SizePolicy.forEdit("2048x1152", inspected(300, 900, 6)))
                .isEqualTo(new Accepted("2048x1152", parse("2048x1152"), Basis.AS_REQUESTED));
    }

    @Test
    void normalizeRefusesACapOutsideTheSupportedRange() {
        ImageSize size = new ImageSize(1024, 1024);
        assertThatThrownBy(() -> SizePolicy.normalize(size, 1024)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SizePolicy.normalize(size, 3856)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> SizePolicy.normalize(size, 2001)).isInstanceOf(IllegalArgumentException.class);
        assertThat(SizePolicy.normalize(size, 2048)).isEqualTo(size);
    }

    @Test
    void everySizeOnAGridNormalizesToAValidOneAtBothCaps() {
        // A deterministic sweep next to the random properties: every 7th width and height up to 5000 (~510,000 sizes
        // per cap), through all the steps and the repair, including their borders.
        for (int w = 1; w <= 5000; w += 7) {
            for (int h = 1; h <= 5000; h += 7) {
                ImageSize wanted = new ImageSize(w, h);
                for (int cap : new int[] {SizePolicy.NORMAL_CAP, SizePolicy.PIXEL_SIZE_CAP}) {
                    ImageSize sent = SizePolicy.normalize(wanted, cap);
                    if (!SizeLimits.isValid(sent) || sent.longestEdge() > cap) {
                        throw new AssertionError(wanted + " at cap " + cap + " gave " + sent + ", breaking "
                                + SizeLimits.brokenRules(sent));
                    }
                }
            }
        }
    }

    private static Accepted accepted(String size) {
        SizeDecision decision = SizePolicy.forGenerate(size);
        assertThat(decision).as("decision for %s", size).isInstanceOf(Accepted.class);
        return (Accepted) decision;
    }

    private static String refusal(String size) {
        SizeDecision decision = SizePolicy.forGenerate(size);
        assertThat(decision).isInstanceOf(Refused.class);
        return ((Refused) decision).message();
    }

    private static ImageInfo inspected(int width, int height, int orientation) {
        return new ImageInfo(ImageFormat.JPEG, Optional.of(new ImageSize(width, height)), orientation, "JPEG");
    }

    private static ImageSize parse(String size) {
        String[] parts = size.split("x");
        return new ImageSize(Integer.parseInt(parts[0]), Integer.parseInt(parts[1]));
    }
}
