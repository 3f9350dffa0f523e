package io.imageworker.messaging.sidetopics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.config.TopicSettings;
import io.imageworker.processing.Cancellations;
import io.imageworker.spend.BudgetLedger;
import io.imageworker.spend.BudgetSettings;
import io.imageworker.support.WorkerThreads;
import io.imageworker.testing.TestConfig;
import io.imageworker.testing.infra.Infrastructure;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The side topics written by someone else than the fleet, on a real broker: the budget log (which only the workers'
 * principal should write) and the cancel topic (which producers write). Beside HostileCorpusTest, which does the same for
 * the request topic. Each case says its answer (skipped and counted, or applied), the calls it cost (places of the
 * spend budget taken, requests stopped) and the memory it leaves (places held, cancels and their accounted bytes). The
 * 120,000 forged cancels go through the broker; the 5 million cancels of one id are {@link CancelStormHeapTest}'s, which
 * measures the heap and so runs alone.
 */
class HostileSideTopicsTest {

    private static final Duration DECIDED_WITHIN = Duration.ofSeconds(20);
    private static final int CAP = 2;

    private final String bootstrap = Infrastructure.get().kafka().bootstrapServers();
    private final String budgetTopic = "image-worker-budget-" + UUID.randomUUID();
    private final long window = System.currentTimeMillis() / Duration.ofHours(1).toMillis();
    private final List<KafkaBudgetLog> logs = new ArrayList<>();
    private final List<CancelReader> readers = new ArrayList<>();

    @AfterEach
    void stop() {
        logs.forEach(KafkaBudgetLog::stop);
        readers.forEach(CancelReader::stop);
    }

    @Test
    void recordsThatCannotBeAppliedAreSkippedAndCountedAndAWorkerKeepsCallingAlsoAfterARestart() throws Exception {
        Infrastructure.get().kafka().createTopics(1, budgetTopic);
        writeBudget(
                "{\"kind\":\"CLAIM\"}",
                "not json",
                "[1, 2]",
                null,
                entry("STEAL", "x", window, "forger"),
                "{\"kind\":\"CLAIM\",\"claim\":5,\"window\":" + window + ",\"replica\":\"forger\"}",
                "{\"kind\":\"CLAIM\",\"claim\":\"x\",\"window\":\"now\",\"replica\":\"forger\"}",
                "{\"kind\":\"CLAIM\",\"claim\":\"x\",\"replica\":\"forger\"}",
                "{\"kind\":\"RELEASE\",\"claim\":\"x\",\"window\":" + window + "}");

        SimpleMeterRegistry first = new SimpleMeterRegistry();
        KafkaBudgetLog log = budgetLog(first);
        assertThat(log.claim("call-1", window, CAP).await().atMost(DECIDED_WITHIN))
                .as("the worker's call may leave")
                .isTrue();
        assertThat(skipped(first, "budget", "unreadable")).isEqualTo(6);
        assertThat(skipped(first, "budget", "incomplete")).isEqualTo(3);
        assertThat(first.get(KafkaBudgetLog.READER_RESTARTS).counter().count())
                .as("never a poison pill")
                .isZero();
        assertThat(log.stall()).isEmpty();
        assertThat(log.used(window)).as("places held: the one call's").isEqualTo(1);

        // A worker started again reads the same records from the window's start: skipped again, the same way.
        log.stop();
        SimpleMeterRegistry second = new SimpleMeterRegistry();
        KafkaBudgetLog restarted = budgetLog(second);
        assertThat(restarted.claim("call-2", window, CAP).await().atMost(DECIDED_WITHIN))
                .as("the restarted worker's call may leave")
                .isTrue();
        assertThat(restarted.claim("call-3", window, CAP).await().atMost(DECIDED_WITHIN))
                .as("the cap still holds: two calls in all")
                .isFalse();
        assertThat(skipped(second, "budget", "unreadable")).isEqualTo(6);
        assertThat(skipped(second, "budget", "incomplete")).isEqualTo(3);
        assertThat(second.get(KafkaBudgetLog.READER_RESTARTS).counter().count()).isZero();
        assertThat(restarted.used(window)).isEqualTo(CAP);
    }

    @Test
    void aForgedClaimIsJudgedByTheReadersOwnCapNotByTheLimitItCarries() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        KafkaBudgetLog log = budgetLog(registry);
        assertThat(log.claim("call-1", window, CAP).await().atMost(DECIDED_WITHIN))
                .isTrue();
        List<String> forged = new ArrayList<>();
        for (int i = 0; i < 1_000; i++) {
            forged.add(claim("forged-" + i, window, 1_000_000, "forger"));
        }
        writeBudget(forged.toArray(String[]::new));
        assertThat(log.claim("call-2", window, CAP).await().atMost(DECIDED_WITHIN))
                .as("the forged claims took the second place, none beyond it")
                .isFalse();

        assertThat(log.used(window))
                .as("places held: the cap, not the forged limit")
                .isEqualTo(CAP);
        assertThat(skipped(registry, "budget", "unreadable")).isZero();
    }

    @Test
    void claimsBeyondTheNextWindowAreSkippedAndHoldNothing() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        KafkaBudgetLog log = budgetLog(registry);
        List<String> forged = new ArrayList<>();
        for (long ahead = 2; ahead < 1_002; ahead++) {
            forged.add(claim("far-" + ahead, window + ahead, CAP, "forger"));
        }
        forged.add(claim("next", window + 1, CAP, "another-replica"));
        writeBudget(forged.toArray(String[]::new));

        assertThat(log.claim("call-1", window, CAP).await().atMost(DECIDED_WITHIN))
                .isTrue();
        assertThat(skipped(registry, "budget", "window_ahead")).isEqualTo(1_000);
        assertThat(log.used(window + 2)).as("no window ahead filled").isZero();
        assertThat(log.used(window + 1000)).isZero();
        assertThat(log.used(window + 1))
                .as("the next window is a clock's skew away: kept")
                .isEqualTo(1);
    }

    @Test
    void aReleaseWithoutItsClaimsSecretGivesNoPlaceBackWhateverWriterItNames() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        KafkaBudgetLog log = budgetLog(registry);
        String first = BudgetLedger.claimOf("secret-1");
        assertThat(log.claim(first, window, CAP).await().atMost(DECIDED_WITHIN)).isTrue();
        assertThat(log.claim(BudgetLedger.claimOf("secret-2"), window, CAP)
                        .await()
                        .atMost(DECIDED_WITHIN))
                .isTrue();

        // What anyone who reads the claim can write: its writer's name is in it, its secret is not.
        writeBudget(
                entry("RELEASE", first, window, "forger"),
                entry("RELEASE", first, window, log.replica()),
                release(first, window, log.replica(), first),
                release(first, window, log.replica(), "secret-2"));

        assertThat(log.claim(BudgetLedger.claimOf("secret-3"), window, CAP)
                        .await()
                        .atMost(DECIDED_WITHIN))
                .as("over the cap: the forged releases freed nothing")
                .isFalse();
        assertThat(skipped(registry, "budget", "foreign_release")).isEqualTo(4);
        assertThat(log.used(window)).isEqualTo(CAP);

        // The writer's own release, with the claim's secret, does give its place back.
        log.release("secret-1", window);
        await().atMost(DECIDED_WITHIN).until(() -> log.used(window) == 1);
    }

    @Test
    void forgedFutureCancelsDoNotEvictALaterRealCancelAndMemoryStaysWithinItsBound() throws Exception {
        String topic = "image-cancel-" + UUID.randomUUID();
        Infrastructure.get().kafka().createTopics(3, topic);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        // Room for 100,000 cancels of ids of this length: the storm overflows it by a fifth.
        long bound = 100_000 * Cancellations.bytesOf("forged-000000") + Cancellations.bytesOfProducer("default");
        Cancellations cancellations = new Cancellations(Clock.systemUTC(), Duration.ofHours(1), bound, true, registry);
        CancelReader reader = cancelReader(topic, cancellations, registry);
        reader.startReading();

        long ahead = System.currentTimeMillis() + Duration.ofMinutes(50).toMillis();
        try (KafkaProducer<byte[], byte[]> producer = producer()) {
            for (int i = 0; i < 120_000; i++) {
                String id = String.format("forged-%06d", i);
                producer.send(new ProducerRecord<>(topic, i % 3, ahead, bytes(id), bytes(cancel(id))));
            }
            producer.send(new ProducerRecord<>(topic, 0, ahead, null, bytes("not a cancel")));
            producer.send(new ProducerRecord<>(topic, 1, ahead, null, bytes("{\"requestId\": 5}")));
            producer.send(new ProducerRecord<>(topic, 2, ahead, bytes("x".repeat(129)), bytes("{}")));
            producer.flush();
            await().atMost(Duration.ofSeconds(60)).until(() -> dropped(registry) == 20_000);

            producer.send(new ProducerRecord<>(
                            topic, 1, System.currentTimeMillis(), bytes("real"), bytes(cancel("real"))))
                    .get(30, TimeUnit.SECONDS);
        }

        await().atMost(DECIDED_WITHIN).until(() -> cancellations.isCancelled("real"));
        assertThat(cancellations.heldBytes()).as("accounted bytes").isLessThanOrEqualTo(bound);
        assertThat(cancellations.held()).as("cancels held").isEqualTo(100_000);
        assertThat(dropped(registry))
                .as("the oldest forged one forgotten for the real one")
                .isEqualTo(20_001);
        assertThat(skipped(registry, "cancel", "unreadable")).isEqualTo(3);
        assertThat(reader.stall()).isEmpty();
    }

    @Test
    void aRecordItsHandlerFailsOnIsSkippedAndTheCancelBehindItArrives() throws Exception {
        String topic = "image-cancel-" + UUID.randomUUID();
        Infrastructure.get().kafka().createTopics(1, topic);
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        // A failure no check foresaw (a bug): before, the reader restarted at the record forever.
        Cancellations cancellations =
                new Cancellations(
                        Clock.systemUTC(), Duration.ofHours(1), Cancellations.MAX_HELD_BYTES, true, registry) {
                    @Override
                    public void cancel(String requestId, String producer, long madeAtMillis) {
                        if (requestId.equals("boom")) {
                            throw new IllegalStateException("a bug, for the test");
                        }
                        super.cancel(requestId, producer, madeAtMillis);
                    }
                };
        CancelReader reader = cancelReader(topic, cancellations, registry);
        reader.startReading();
        try (KafkaProducer<byte[], byte[]> producer = producer()) {
            producer.send(new ProducerRecord<>(topic, 0, null, bytes("boom"), bytes(cancel("boom"))));
            producer.send(new ProducerRecord<>(topic, 0, null, bytes("after"), bytes(cancel("after"))))
                    .get(30, TimeUnit.SECONDS);
        }

        await().atMost(DECIDED_WITHIN).until(() -> cancellations.isCancelled("after"));
        assertThat(skipped(registry, "cancel", "failed")).isEqualTo(1);
        assertThat(registry.get("image_worker_cancel_reader_restarts").counter().count())
                .isZero();
        assertThat(cancellations.held()).isEqualTo(1);
    }

    private KafkaBudgetLog budgetLog(SimpleMeterRegistry registry) {
        Map<String, String> budget = Map.of(
                "image-worker.topic.budget",
                budgetTopic,
                "image-worker.budget.window",
                "1h",
                "image-worker.budget.max-calls",
                Integer.toString(CAP));
        KafkaBudgetLog log = new KafkaBudgetLog(
                TestConfig.settings(TopicSettings.class, budget),
                TestConfig.settings(BudgetSettings.class, budget),
                Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap),
                new ObjectMapper(),
                registry,
                settings -> new KafkaConsumer<>(settings, new ByteArrayDeserializer(), new ByteArrayDeserializer()),
                System::nanoTime,
                Duration.ofMillis(100),
                new WorkerThreads());
        logs.add(log);
        log.start();
        return log;
    }

    private CancelReader cancelReader(String topic, Cancellations cancellations, SimpleMeterRegistry registry) {
        CancelReader reader =
                CancelReaderBrokerTest.unstarted(topic, cancellations, registry, new ByteArrayDeserializer());
        readers.add(reader);
        return reader;
    }

    private static double skipped(SimpleMeterRegistry registry, String topic, String reason) {
        return registry.get(SkippedRecords.METRIC)
                .tag("topic", topic)
                .tag("reason", reason)
                .counter()
                .count();
    }

    private static double dropped(SimpleMeterRegistry registry) {
        return registry.get("image_worker_cancels_dropped").counter().count();
    }

    private static String claim(String claim, long window, int limit, String replica) throws Exception {
        return new String(
                new ObjectMapper()
                        .writeValueAsBytes(
                                new KafkaBudgetLog.Record(BudgetLedger.Kind.CLAIM, claim, window, limit, replica)),
                StandardCharsets.UTF_8);
    }

    private static String entry(String kind, String claim, long window, String replica) {
        return String.format(
                "{\"kind\":\"%s\",\"claim\":\"%s\",\"window\":%d,\"limit\":0,\"replica\":\"%s\"}",
                kind, claim, window, replica);
    }

    /** A release of {@code claim} that shows {@code secret}. */
    private static String release(String claim, long window, String replica, String secret) {
        return String.format(
                "{\"kind\":\"RELEASE\",\"claim\":\"%s\",\"window\":%d,\"limit\":0,\"replica\":\"%s\","
                        + "\"secret\":\"%s\"}",
                claim, window, replica, secret);
    }

    private static String cancel(String requestId) {
        return "{\"requestId\":\"" + requestId + "\"}";
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private KafkaProducer<byte[], byte[]> producer() {
        return new KafkaProducer<>(
                Map.of(
                        ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                        bootstrap,
                        ProducerConfig.ACKS_CONFIG,
                        "all",
                        ProducerConfig.LINGER_MS_CONFIG,
                        20),
                new ByteArraySerializer(),
                new ByteArraySerializer());
    }

    /** Writes {@code values} (null: a tombstone) to the budget topic, as someone other than a worker would. */
    private void writeBudget(String... values) throws Exception {
        try (KafkaProducer<byte[], byte[]> producer = producer()) {
            List<java.util.concurrent.Future<?>> sent = new ArrayList<>();
            for (String value : values) {
                sent.add(producer.send(
                        new ProducerRecord<>(budgetTopic, 0, null, null, value == null ? null : bytes(value))));
            }
            for (java.util.concurrent.Future<?> written : sent) {
                written.get(30, TimeUnit.SECONDS);
            }
        }
    }
}
