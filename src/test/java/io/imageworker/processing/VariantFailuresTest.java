package io.imageworker.processing;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.support.AbandonedException;
import io.smallrye.mutiny.CompositeException;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What a request's variants' failures, collected together, end it as. */
class VariantFailuresTest {

    @Test
    void aVariantAbandonedAtShutdownAbandonsTheRequestSoThatItIsRedeliveredNotFailed() {
        AbandonedException abandoned = new AbandonedException("r", null);
        Throwable collected = new CompositeException(List.of(new IllegalStateException("other"), abandoned));

        assertThat(Variants.unwrap(collected)).isSameAs(abandoned);
    }

    @Test
    void aSingleVariantsFailureIsThatFailure() {
        IllegalStateException only = new IllegalStateException("only");

        assertThat(Variants.unwrap(new CompositeException(List.of(only)))).isSameAs(only);
    }

    @Test
    void severalOtherFailuresStayTogether() {
        CompositeException collected =
                new CompositeException(List.of(new IllegalStateException("a"), new IllegalArgumentException("b")));

        assertThat(Variants.unwrap(collected)).isSameAs(collected);
    }
}
