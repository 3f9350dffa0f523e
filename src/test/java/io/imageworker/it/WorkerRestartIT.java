package io.imageworker.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.RecordedCall;
import io.imageworker.testing.images.TestImages;
import io.imageworker.testing.launch.LaunchStack;
import io.imageworker.testing.launch.PipelineClient;
import io.imageworker.testing.launch.SharedServersFirst;
import io.imageworker.testing.launch.TakesAbout;
import io.imageworker.testing.launch.WorkerProcess;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The packaged worker killed with SIGKILL while gateway calls are in flight, then started again: no request is lost,
 * every stored image is whole, and what is repeated (a terminal event, a gateway call) is repeated only for requests
 * the first worker had not finished with.
 *
 * <p>With results in Kafka transactions (the default) each terminal event goes out with its record's offset: a
 * read_committed reader sees no event twice, and only a request the first worker was still working on is called again. With
 * transactions off, delivery is at least once: the records processed after the last commit before the kill are
 * delivered again to the new worker; a request whose result was already recorded is answered from its result document
 * (a repeated terminal event, no gateway call), one whose call was in progress is called again.
 */
@ExtendWith(SharedServersFirst.class)
@TakesAbout(seconds = 70)
class WorkerRestartIT {

    private static final int REQUESTS = 40;
    private static final int CONCURRENCY = 8;
    private static final Duration LATENCY = Duration.ofSeconds(1);
    private static final Duration WITHIN = Duration.ofSeconds(60);

    /** With results in transactions (the default), and without (at least once: repeats allowed, nothing lost). */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void everyRequestEndsWhenTheWorkerIsKilledMidCallAndStartedAgain(boolean transactions) throws Exception {
        try (LaunchStack stack = LaunchStack.onSharedServers(Latency.fixed(LATENCY));
                WorkerProcess worker = stack.worker("restart-worker", CONCURRENCY)
                        .env("IMAGE_WORKER_SHUTDOWN_GRACE", "5s")
                        .env("IMAGE_WORKER_TRANSACTIONS_ENABLED", Boolean.toString(transactions))
                        // So that the new worker gets the killed one's partitions quickly.
                        .shortConsumerSession()
                        .build();
                PipelineClient client = PipelineClient.on(stack)) {
            worker.start();

            Map<String, RecordMetadata> sent =
                    client.publish("restart", REQUESTS, id -> PipelineClient.request(id, "a red bicycle,"));

            // Kill once a first wave has ended (so that some results are recorded but perhaps not committed) and the
            // next calls are in flight.
            await("a first wave of results and calls in flight")
                    .atMost(WITHIN)
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> client.results().size() >= CONCURRENCY
                            && stack.gateway().imageCallsInFlight() > 0);
            Instant killedAt = Instant.now();
            worker.kill();
            // The simulator sees the dead worker's connections close; then its record of that worker is complete.
            await("the simulator to see the killed worker's calls end")
                    .atMost(WITHIN)
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> stack.gateway().imageCallsInFlight() == 0);
            // Every call the first worker made, and its last commit: it is dead, neither changes any more.
            List<RecordedCall> firstWorkerCalls = stack.gateway().imageCalls();
            Map<TopicPartition, OffsetAndMetadata> committedAtKill = stack.committed();

            worker.start();
            await("a terminal event for each request")
                    .atMost(WITHIN)
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> client.firstEvents(sent.keySet()).size() == REQUESTS);
            // Every record committed means every result published, replays included; then read them all.
            await("every request record committed")
                    .atMost(WITHIN)
                    .pollInterval(Duration.ofMillis(200))
                    .until(stack::allCommitted);
            Map<TopicPartition, Long> ends = stack.resultEnds();
            await("every published event read").atMost(WITHIN).until(() -> client.caughtUpTo(ends));

            List<PipelineClient.Result> events = client.results().stream()
                    .filter(result -> sent.containsKey(result.requestId()))
                    .toList();
            Map<String, List<PipelineClient.Result>> byRequest = client.eventsByRequest(sent.keySet());
            Map<String, List<RecordedCall>> callsByRequest = stack.callsByRequest(sent.keySet());

            // No request lost; each ended with its image (the simulator injects no fault).
            assertThat(byRequest.keySet()).containsExactlyInAnyOrderElementsOf(sent.keySet());
            assertThat(events).allSatisfy(event -> assertThat(event.completed())
                    .as("%s ended with %s", event.requestId(), event.body())
                    .isTrue());

            // Each completed event's object is in the store, byte for byte what the event says.
            for (PipelineClient.Result event : events) {
                assertThat(event.text("image", "bucket")).isEqualTo(LaunchStack.BUCKET);
                byte[] stored = stack.readObject(event.imageKey());
                assertThat(TestImages.sha256(stored))
                        .as("sha256 of %s", event.imageKey())
                        .isEqualTo(event.sha256());
                assertThat((long) stored.length).isEqualTo(Long.parseLong(event.text("image", "bytes")));
            }

            // What the kill interrupted.
            Set<String> callInFlightAtKill = firstWorkerCalls.stream()
                    .filter(call ->
                            call.finishedAt() == null || !call.finishedAt().isBefore(killedAt))
                    .map(call -> PipelineClient.requestOf(call, sent.keySet()))
                    .filter(id -> id != null)
                    .collect(Collectors.toCollection(TreeSet::new));
            Set<String> endedBeforeKill = byRequest.entrySet().stream()
                    .filter(entry -> entry.getValue().stream()
                            .anyMatch(event -> event.createdAt().isBefore(killedAt)))
                    .map(Map.Entry::getKey)
                    .collect(Collectors.toCollection(TreeSet::new));
            Set<String> inProgressAtKill = firstWorkerCalls.stream()
                    .map(call -> PipelineClient.requestOf(call, sent.keySet()))
                    .filter(id -> id != null && !endedBeforeKill.contains(id))
                    .collect(Collectors.toCollection(TreeSet::new));
            Set<String> uncommittedAtKill = sent.entrySet().stream()
                    .filter(entry -> {
                        RecordMetadata record = entry.getValue();
                        OffsetAndMetadata committed =
                                committedAtKill.get(new TopicPartition(record.topic(), record.partition()));
                        return committed == null || record.offset() >= committed.offset();
                    })
                    .map(Map.Entry::getKey)
                    .collect(Collectors.toCollection(TreeSet::new));

            Set<String> duplicated = byRequest.entrySet().stream()
                    .filter(entry -> entry.getValue().size() > 1)
                    .map(Map.Entry::getKey)
                    .collect(Collectors.toCollection(TreeSet::new));
            Set<String> calledAgain = callsByRequest.entrySet().stream()
                    .filter(entry -> entry.getValue().size() > 1)
                    .map(Map.Entry::getKey)
                    .collect(Collectors.toCollection(TreeSet::new));
            int extraCalls = callsByRequest.values().stream()
                    .mapToInt(calls -> calls.size() - 1)
                    .sum();
            int extraBilled = callsByRequest.values().stream()
                    .mapToInt(calls -> Math.max(
                            0, (int) calls.stream().filter(RecordedCall::billed).count() - 1))
                    .sum();
            int duplicateEvents = byRequest.values().stream()
                    .mapToInt(list -> list.size() - 1)
                    .sum();

            System.out.printf(
                    "WorkerRestartIT (transactions %s): %d requests; at the kill %d had a call in flight, %d were in progress, %d had"
                            + " ended, %d were not committed; %d requests got a duplicate terminal event (%d extra"
                            + " events); %d requests were called again: %d image calls and %d billed calls beyond one"
                            + " per request; worker log %s%n",
                    transactions ? "on" : "off",
                    REQUESTS,
                    callInFlightAtKill.size(),
                    inProgressAtKill.size(),
                    endedBeforeKill.size(),
                    uncommittedAtKill.size(),
                    duplicated.size(),
                    duplicateEvents,
                    calledAgain.size(),
                    extraCalls,
                    extraBilled,
                    worker.logFile());

            assertThat(callInFlightAtKill)
                    .as("the kill interrupted gateway calls")
                    .isNotEmpty();
            // A repeated event only for a record delivered again, i.e. not committed when the worker died.
            assertThat(duplicated).isSubsetOf(uncommittedAtKill);
            if (transactions) {
                // With the results published in transactions with their offsets, a read_committed reader sees none.
                assertThat(duplicated)
                        .as("requests with a repeated event, read_committed")
                        .isEmpty();
            }
            // A second gateway call only for a request the first worker was still working on.
            assertThat(calledAgain).isSubsetOf(inProgressAtKill);
            // A request that had ended is answered from its result document: a repeated event, never a new call.
            assertThat(callsByRequest).allSatisfy((id, calls) -> assertThat(calls.size())
                    .as("image calls for %s", id)
                    .isBetween(1, inProgressAtKill.contains(id) ? 2 : 1));
        }
    }
}
