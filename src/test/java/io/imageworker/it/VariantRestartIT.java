package io.imageworker.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.testing.gateway.Latency;
import io.imageworker.testing.gateway.RecordedCall;
import io.imageworker.testing.images.TestImages;
import io.imageworker.testing.launch.LaunchStack;
import io.imageworker.testing.launch.PipelineClient;
import io.imageworker.testing.launch.SharedServersFirst;
import io.imageworker.testing.launch.TakesAbout;
import io.imageworker.testing.launch.WorkerProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import software.amazon.awssdk.core.async.AsyncResponseTransformer;
import software.amazon.awssdk.services.s3.S3AsyncClient;
import software.amazon.awssdk.services.s3.model.NoSuchKeyException;
import software.amazon.awssdk.services.s3.model.S3Object;

/**
 * The packaged worker killed with SIGKILL in the middle of {@code count: 4} requests, some of whose variants have
 * ended (and are recorded) while others are still being called, then started again: the new worker calls the gateway
 * only for the variants without a record, and every request ends with its four images, the recorded ones reused.
 *
 * <p>The middle is arranged, not hoped for: the simulator answers the first {@link #ANSWERED} image calls and holds
 * every later one until the kill. Waiting for a request seen half done and then killing left its last variants the
 * time to end in between, and a faster worker (November 2026) ended them all before the kill.
 */
@ExtendWith(SharedServersFirst.class)
@TakesAbout(seconds = 41)
class VariantRestartIT {

    private static final int REQUESTS = 6;
    private static final int COUNT = 4;
    private static final int CONCURRENCY = 4;
    /**
     * Image calls answered before the kill: not a multiple of {@link #COUNT}, so that whatever order the calls come in
     * at least one request has some variants recorded and not all (and one may have them all, and end).
     */
    private static final int ANSWERED = COUNT + COUNT / 2;

    private static final Duration WITHIN = Duration.ofSeconds(90);
    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void aRestartedWorkerCallsOnlyForTheVariantsWithoutARecord() throws Exception {
        try (LaunchStack stack = LaunchStack.onSharedServers(Latency.fixed(Duration.ofMillis(300)));
                WorkerProcess worker = stack.worker("variant-restart-worker", CONCURRENCY)
                        .env("IMAGE_WORKER_SHUTDOWN_GRACE", "5s")
                        .shortConsumerSession()
                        .build();
                PipelineClient client = PipelineClient.on(stack);
                S3AsyncClient s3 = stack.infrastructure().s3().newAsyncClient()) {
            stack.gateway().control().holdImageCallsAfter(ANSWERED);
            worker.start();
            List<String> ids = List.copyOf(client.publish(
                            "variants",
                            REQUESTS,
                            id -> PipelineClient.request(id, "a lighthouse,", "\"count\":" + COUNT))
                    .keySet());

            // Kill once the answered calls' variants are all recorded, with the next calls held in flight: nothing more
            // can be recorded until the kill.
            await(ANSWERED + " variants recorded and calls held")
                    .atMost(WITHIN)
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> stack.gateway().imageCallsInFlight() > 0
                            && ids.stream()
                                            .mapToInt(
                                                    id -> variantRecords(s3, id).size())
                                            .sum()
                                    == ANSWERED);
            worker.kill();
            await("the simulator to see the killed worker's calls end")
                    .atMost(WITHIN)
                    .pollInterval(Duration.ofMillis(20))
                    .until(() -> stack.gateway().imageCallsInFlight() == 0);
            stack.gateway().control().stopHolding();
            int callsBeforeRestart = stack.gateway().imageCalls().size();
            // What the new worker finds: the records are final, their writer is dead.
            Map<String, Map<Integer, String>> recordedAtKill = new LinkedHashMap<>();
            Map<String, Boolean> endedAtKill = new LinkedHashMap<>();
            for (String id : ids) {
                recordedAtKill.put(id, variantRecords(s3, id));
                endedAtKill.put(id, exists(s3, "results/" + id + ".json"));
            }

            worker.start();
            await("a terminal event for each request")
                    .atMost(WITHIN)
                    .pollInterval(Duration.ofMillis(100))
                    .until(() -> client.firstEvents(ids).size() == REQUESTS);
            List<RecordedCall> calls = stack.gateway().imageCalls();
            Map<String, Integer> callsAfterRestart = new TreeMap<>();
            PipelineClient.byRequest(calls.subList(callsBeforeRestart, calls.size()), ids)
                    .forEach((id, own) -> callsAfterRestart.put(id, own.size()));

            System.out.printf(
                    "VariantRestartIT: %d requests of count %d; at the kill, variants recorded %s, requests ended %s;"
                            + " calls made after the restart %s; worker log %s%n",
                    REQUESTS,
                    COUNT,
                    recordedAtKill.values().stream().map(Map::size).toList(),
                    endedAtKill.values(),
                    callsAfterRestart,
                    worker.logFile());

            assertThat(recordedAtKill.values())
                    .as("the kill came in the middle of a request's variants")
                    .anyMatch(recorded -> !recorded.isEmpty() && recorded.size() < COUNT);
            for (String id : ids) {
                PipelineClient.Result event = client.firstEvents(ids).get(id);
                assertThat(event.completed())
                        .as("%s ended with %s", id, event.body())
                        .isTrue();
                JsonNode images = event.body().path("images");
                assertThat(images).hasSize(COUNT);
                assertThat(event.body().path("variants").toString())
                        .isEqualTo("{\"requested\":4,\"delivered\":4,\"failed\":0}");
                Map<Integer, String> recorded = recordedAtKill.get(id);
                int expectedCalls = endedAtKill.get(id) ? 0 : COUNT - recorded.size();
                assertThat(callsAfterRestart.getOrDefault(id, 0))
                        .as("calls for %s after the restart (variants recorded at the kill: %s)", id, recorded.keySet())
                        .isEqualTo(expectedCalls);
                for (int variant = 1; variant <= COUNT; variant++) {
                    JsonNode image = images.get(variant - 1);
                    String key = image.path("key").asText();
                    assertThat(key).endsWith("/" + id + "/" + variant + ".png");
                    if (recorded.containsKey(variant)) {
                        assertThat(image.path("sha256").asText())
                                .as("%s variant %d, recorded before the kill, is reused", id, variant)
                                .isEqualTo(recorded.get(variant));
                    }
                    assertThat(TestImages.sha256(stack.readObject(key)))
                            .as(key)
                            .isEqualTo(image.path("sha256").asText());
                }
            }
        }
    }

    /** The request's variant records: each variant's number and its image's sha256. */
    private static Map<Integer, String> variantRecords(S3AsyncClient s3, String id) {
        Map<Integer, String> records = new TreeMap<>();
        List<S3Object> objects = s3.listObjectsV2(
                        list -> list.bucket(LaunchStack.BUCKET).prefix("results/" + id + "/"))
                .join()
                .contents();
        for (S3Object object : objects) {
            try {
                JsonNode record = JSON.readTree(s3.getObject(
                                get -> get.bucket(LaunchStack.BUCKET).key(object.key()),
                                AsyncResponseTransformer.toBytes())
                        .join()
                        .asByteArray());
                records.put(
                        record.path("variant").asInt(),
                        record.path("image").path("sha256").asText());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return records;
    }

    private static boolean exists(S3AsyncClient s3, String key) {
        try {
            s3.headObject(head -> head.bucket(LaunchStack.BUCKET).key(key)).join();
            return true;
        } catch (java.util.concurrent.CompletionException e) {
            if (e.getCause() instanceof NoSuchKeyException
                    || e.getCause() instanceof software.amazon.awssdk.services.s3.model.S3Exception s3e
                            && s3e.statusCode() == 404) {
                return false;
            }
            throw e;
        }
    }
}
