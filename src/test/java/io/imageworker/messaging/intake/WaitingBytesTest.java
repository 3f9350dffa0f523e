package io.imageworker.messaging.intake;

import static org.assertj.core.api.Assertions.assertThat;

import io.smallrye.mutiny.subscription.Cancellable;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * The byte bound of a lane's waiting records at its own seam: the normal lane is fed by two streams (the request topic
 * and the parked topic), so two takers may wait at once, and each must go on once its bytes fit.
 */
class WaitingBytesTest {

    @Test
    void twoTakersWaitingAtOnceBothGoOnOnceTheirBytesFit() {
        WaitingBytes bytes = new WaitingBytes(100);
        CompletableFuture<Void> first = take(bytes, 80);
        CompletableFuture<Void> ofTheRequestTopic = take(bytes, 50);
        CompletableFuture<Void> ofTheParkedTopic = take(bytes, 30);
        assertThat(first).isCompleted();
        assertThat(ofTheRequestTopic).isNotDone();
        assertThat(ofTheParkedTopic).isNotDone();
        assertThat(bytes.waiting()).isEqualTo(2);

        bytes.give(80);

        // With one waiter's place, the second taker had taken the first one's, and the first was never woken.
        assertThat(ofTheRequestTopic).as("the first taker that waited").isCompleted();
        assertThat(ofTheParkedTopic).as("the second taker that waited").isCompleted();
        assertThat(bytes.held()).isEqualTo(80);
        assertThat(bytes.waiting()).isZero();
    }

    @Test
    void takersGoOnInTheOrderTheyCameEachWhenItsBytesFit() {
        WaitingBytes bytes = new WaitingBytes(100);
        take(bytes, 100);
        CompletableFuture<Void> large = take(bytes, 90);
        CompletableFuture<Void> small = take(bytes, 10);

        bytes.give(20);
        assertThat(large).as("90 does not fit beside 80").isNotDone();
        assertThat(small).as("nor does the one behind it overtake it").isNotDone();

        bytes.give(80);
        assertThat(large).isCompleted();
        assertThat(small).isCompleted();
        assertThat(bytes.held()).isEqualTo(100);
    }

    @Test
    void aRecordAloneAlwaysGoesWhateverItsSize() {
        WaitingBytes bytes = new WaitingBytes(100);
        assertThat(take(bytes, 500)).isCompleted();
        CompletableFuture<Void> next = take(bytes, 500);
        assertThat(next).isNotDone();

        bytes.give(500);
        assertThat(next).isCompleted();
    }

    @Test
    void aTakerCancelledWhileItWaitsLeavesTheLineAndTheNextGoesOn() {
        WaitingBytes bytes = new WaitingBytes(100);
        take(bytes, 60);
        CompletableFuture<Void> cancelledOne = new CompletableFuture<>();
        Cancellable cancellable = bytes.take(80)
                .subscribe()
                .with(ignored -> cancelledOne.complete(null), cancelledOne::completeExceptionally);
        CompletableFuture<Void> behind = take(bytes, 40);
        assertThat(behind).as("behind the one of 80").isNotDone();

        cancellable.cancel();

        assertThat(bytes.waiting()).isZero();
        assertThat(behind).isCompleted();
        assertThat(cancelledOne).isNotDone();
        assertThat(bytes.held()).isEqualTo(100);
    }

    private static CompletableFuture<Void> take(WaitingBytes bytes, long size) {
        return bytes.take(size).subscribe().asCompletionStage();
    }
}
