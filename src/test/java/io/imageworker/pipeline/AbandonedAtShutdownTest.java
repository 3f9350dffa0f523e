package io.imageworker.pipeline;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.contract.TerminalEvent;
import io.imageworker.processing.RequestProcessor;
import io.imageworker.storage.ImageStore;
import io.imageworker.support.AbandonedException;
import io.imageworker.support.Shutdown;
import io.imageworker.testing.WorkerTestResource;
import io.imageworker.testing.gateway.Fault;
import io.imageworker.testing.launch.EndsItsApplication;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.mutiny.helpers.test.UniAssertSubscriber;
import jakarta.inject.Inject;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * When the shutdown grace is over, the requests still running are abandoned: no new gateway call, no failure recorded
 * (it may be the shutdown's own doing, and the next worker would replay it as the outcome), a success still recorded
 * (so that the next worker answers it without a second billed call).
 *
 * <p>It leaves the worker in its shutdown state, which lasts until the application stops: it runs last of the default
 * worker's classes ({@link EndsItsApplication}), then that application stops for the next group's.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@EndsItsApplication
@WithTestResource(WorkerTestResource.class)
class AbandonedAtShutdownTest extends PipelineTestSupport {

    @Inject
    RequestProcessor processor;

    @Inject
    ImageStore store;

    @Inject
    Shutdown shutdown;

    @Test
    void afterTheGraceNoCallStartsAndNoFailureIsRecordedButASuccessIs() throws IOException {
        gateway.control().setLatency(Duration.ofSeconds(2)).injectFault(Fault.serverError(500));
        String failing = newId("abandoned-500");
        String succeeding = newId("abandoned-ok");
        String late = newId("abandoned-late");
        UniAssertSubscriber<TerminalEvent> failingEnd = start(failing);
        await().atMost(WITHIN).until(() -> callsFor(failing).size() == 1);
        UniAssertSubscriber<TerminalEvent> succeedingEnd = start(succeeding);
        await().atMost(WITHIN).until(() -> callsFor(succeeding).size() == 1);

        shutdown.abandonUnfinished();

        // The 500 would have been retried once (an unknown outcome); abandoned, it is neither retried nor failed.
        failingEnd.awaitFailure(WITHIN).assertFailedWith(AbandonedException.class);
        assertThat(callsFor(failing)).hasSize(1);
        assertThat(store.findResult(failing).await().atMost(WITHIN)).isEmpty();
        // The image the gateway billed is kept: the next worker replays it.
        assertThat(succeedingEnd.awaitItem(WITHIN).getItem()).isInstanceOf(TerminalEvent.Completed.class);
        assertThat(store.findResult(succeeding).await().atMost(WITHIN)).isPresent();
        // A request reaching the gateway step now makes no call.
        start(late).awaitFailure(WITHIN).assertFailedWith(AbandonedException.class);
        assertThat(callsFor(late)).isEmpty();
    }

    private UniAssertSubscriber<TerminalEvent> start(String requestId) throws IOException {
        return processor
                .process(requestId, JSON.readTree(request(requestId, "")), Instant.now())
                .subscribe()
                .withSubscriber(UniAssertSubscriber.create());
    }
}
