package io.imageworker.messaging.results;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.messaging.offsets.InFlight;
import io.imageworker.messaging.offsets.OffsetsFixture;
import io.imageworker.messaging.offsets.PartitionWork;
import io.imageworker.support.CpuWork;
import io.imageworker.support.RetrySettings;
import io.imageworker.support.WorkerThreads;
import io.imageworker.testing.TestConfig;
import io.imageworker.testing.infra.Infrastructure;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.smallrye.mutiny.Uni;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.CommonClientConfigs;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TransactionListing;
import org.apache.kafka.clients.admin.TransactionState;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Results and their offsets in one transaction, on a real broker, when a commit fails without saying whether it went
 * through (a broker restarting mid-commit): the result is visible to a {@code read_committed} consumer exactly once,
 * whether the commit had gone through (its answer lost) or not (never made). And what follows a commit does not hold
 * the next one back.
 */
class ResultTransactionsBrokerTest {

    private final String requests = "transactions-requests-" + UUID.randomUUID();
    private final String results = "transactions-results-" + UUID.randomUUID();
    private final String parked = "transactions-parked-" + UUID.randomUUID();
    private final String group = "transactions-group-" + UUID.randomUUID();
    private final TopicPartition partition = new TopicPartition(requests, 0);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final OffsetsFixture offsets = new OffsetsFixture(System::nanoTime);
    private final PartitionWork work = offsets.partitions();
    private final AtomicBoolean armed = new AtomicBoolean(true);

    private ResultTransactions transactions;

    @AfterEach
    void close() {
        if (transactions != null) {
            transactions.close();
        }
    }

    @Test
    void aCommitThatWentThroughButWhoseAnswerWasLostIsNotPublishedAgain() {
        start();
        transactions.commitStep = commit -> {
            commit.run();
            if (armed.compareAndSet(true, false)) {
                throw new KafkaException("the commit's answer was lost, for the test");
            }
        };

        publishOne();

        assertThat(armed).as("the commit did fail once").isFalse();
        assertThat(committedResults()).containsExactly("r-1");
        assertThat(committedOffset()).isEqualTo(1);
        assertThat(inDoubt("committed")).isEqualTo(1);
        assertThat(inDoubt("not_committed")).isZero();
    }

    @Test
    void aCommitThatFailedBeforeItWasMadeIsPublishedOnce() {
        start();
        transactions.commitStep = commit -> {
            if (armed.compareAndSet(true, false)) {
                // The transaction stays open: the broker aborts it once a new producer of its id starts.
                throw new KafkaException("the commit was never made, for the test");
            }
            commit.run();
        };

        publishOne();

        assertThat(armed).as("the commit did fail once").isFalse();
        assertThat(committedResults()).containsExactly("r-1");
        assertThat(committedOffset()).isEqualTo(1);
        assertThat(inDoubt("not_committed")).isEqualTo(1);
        assertThat(registry.get("image_worker_transactions_committed").counter().count())
                .isEqualTo(1);
    }

    @Test
    void whatFollowsACommitDoesNotHoldTheNextTransactionBack() throws InterruptedException {
        start();
        CountDownLatch released = new CountDownLatch(1);
        CountDownLatch following = new CountDownLatch(1);
        InFlight.Run first = offsets.inFlight().take(record(0));
        InFlight.Run second = offsets.inFlight().take(record(1));

        // What follows the first commit (in the worker: the acknowledgement, the next request's start) takes long.
        transactions
                .publish("r-1", first, List.of(result("r-1")), null)
                .invoke(() -> {
                    following.countDown();
                    awaitQuietly(released);
                })
                .subscribe()
                .with(ignored -> {}, failure -> {});
        try {
            assertThat(following.await(90, TimeUnit.SECONDS))
                    .as("the first result committed")
                    .isTrue();
            transactions
                    .publish("r-2", second, List.of(result("r-2")), null)
                    .await()
                    .atMost(Duration.ofSeconds(30));
        } finally {
            released.countDown();
        }

        assertThat(committedResults()).containsExactly("r-1", "r-2");
        assertThat(committedOffset()).isEqualTo(2);
    }

    /**
     * A backlog parks by the thousand: parked copies go into one transaction up to {@code park-max-batch} (1000), not
     * {@code max-batch} (200) as results do, each copy visible with its offset. At 200 a transaction, parking a
     * backlog ran at a few thousand records a second, and a producer behind the backlog waited for it.
     */
    @Test
    void parkedCopiesAreCommittedByTheThousandWithTheirOffsets() {
        // The copies are all queued before the first transaction: the linger of parks is long here.
        start(Map.of("image-worker.transactions.park-linger", "3s"));
        int parks = 1000;
        List<Uni<Void>> parked = new ArrayList<>();
        for (int offset = 0; offset < parks; offset++) {
            InFlight.Run run = offsets.inFlight().take(record(offset));
            assertThat(run.start()).isEqualTo(PartitionWork.Start.RUN);
            parked.add(transactions.park("p-" + offset, run, result("p-" + offset)));
        }
        Uni.join().all(parked).andFailFast().await().atMost(Duration.ofSeconds(90));

        assertThat(committedResults()).hasSize(parks).doesNotHaveDuplicates();
        assertThat(committedOffset()).isEqualTo(parks);
        assertThat(registry.get("image_worker_transactions_committed").counter().count())
                .as("transactions for %d parks", parks)
                .isEqualTo(1);
    }

    /**
     * A worker killed between its park's sends and its commit: the copy went out in its open transaction, which the
     * broker aborts (after the transaction's timeout; here by fencing its {@code transactional.id} at once, to the same
     * end), and the record's offset was not committed, so its partition's next owner parks it again. A {@code
     * read_committed} reader of the parked topic sees one copy: the one committed with the offset. A copy sent outside
     * the transaction would be seen twice; an offset committed without its copy, never.
     */
    @Test
    void aParkCutOffBeforeItsCommitLeavesNoCopyAndTheNextOwnerParksTheRecordOnce() throws Exception {
        start();
        CountDownLatch cutOff = new CountDownLatch(1);
        CountDownLatch killed = new CountDownLatch(1);
        transactions.commitStep = commit -> {
            cutOff.countDown();
            awaitQuietly(killed);
            throw new KafkaException("the worker was killed before its commit, for the test");
        };
        ResultTransactions next = null;
        try {
            // Taken right before its park is queued, so that no commit of progress alone takes the step first.
            InFlight.Run first = offsets.inFlight().take(record(0));
            transactions.park("p-0", first, copy("p-0")).subscribe().with(ignored -> {}, failure -> {});
            assertThat(cutOff.await(90, TimeUnit.SECONDS))
                    .as("the park's transaction cut off")
                    .isTrue();
            assertThat(endOffset(parked))
                    .as("the copy sent in the open transaction")
                    .isPositive();

            // The broker aborts the killed worker's transaction; then the partition's next owner, another worker
            // (a transactional.id of its own), reads no commit to start from and parks the record again.
            OffsetsFixture nextOffsets = new OffsetsFixture(System::nanoTime);
            next = transactions(Map.of(), nextOffsets.partitions());
            nextOffsets.partitions().assigned(List.of(partition), Map.of());
            abortOpenTransactions("image-worker-" + requests + "-");
            next.park("p-0", nextOffsets.inFlight().take(record(0)), copy("p-0"))
                    .await()
                    .atMost(Duration.ofSeconds(90));

            assertThat(committedKeys(parked)).containsExactly("p-0");
            assertThat(committedOffset()).isEqualTo(1);
        } finally {
            // The killed worker's copy of the record is its new owner's now: its transaction ends with no result.
            offsets.revoke(partition);
            killed.countDown();
            if (next != null) {
                next.close();
            }
        }
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(2, TimeUnit.MINUTES);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private RecordContext record(long offset) {
        return new RecordContext(null, new RecordHeaders(), requests, 0, offset, Instant.now());
    }

    private ProducerRecord<byte[], byte[]> result(String key) {
        return new ProducerRecord<>(
                results, key.getBytes(StandardCharsets.UTF_8), "{}".getBytes(StandardCharsets.UTF_8));
    }

    /** A parked copy, keyed {@code key}. */
    private ProducerRecord<byte[], byte[]> copy(String key) {
        return new ProducerRecord<>(
                parked, key.getBytes(StandardCharsets.UTF_8), "{}".getBytes(StandardCharsets.UTF_8));
    }

    /** The end of {@code topic}'s partition 0 as a read_uncommitted reader sees it: records of open transactions too. */
    private static long endOffset(String topic) throws Exception {
        TopicPartition out = new TopicPartition(topic, 0);
        try (Admin admin = Admin.create(Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap()))) {
            return admin.listOffsets(Map.of(out, OffsetSpec.latest()))
                    .partitionResult(out)
                    .get()
                    .offset();
        }
    }

    /**
     * Aborts the open transactions of the {@code transactional.id}s starting with {@code prefix}: what the broker does
     * to a killed worker's once their timeout passes, done at once by a producer of the same id, which fences it.
     */
    private static void abortOpenTransactions(String prefix) throws Exception {
        try (Admin admin = Admin.create(Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap()))) {
            for (TransactionListing open : admin.listTransactions().all().get()) {
                if (open.transactionalId().startsWith(prefix) && open.state() == TransactionState.ONGOING) {
                    try (KafkaProducer<byte[], byte[]> fencing = new KafkaProducer<>(
                            Map.of(
                                    ProducerConfig.BOOTSTRAP_SERVERS_CONFIG,
                                    bootstrap(),
                                    ProducerConfig.TRANSACTIONAL_ID_CONFIG,
                                    open.transactionalId()),
                            new ByteArraySerializer(),
                            new ByteArraySerializer())) {
                        fencing.initTransactions();
                    }
                }
            }
        }
    }

    private double inDoubt(String settled) {
        return registry.get("image_worker_transactions_in_doubt")
                .tag("settled", settled)
                .counter()
                .count();
    }

    private void start() {
        start(Map.of());
    }

    /** The transactions of the topic, with these settings {@code overrides}. */
    private void start(Map<String, String> overrides) {
        Infrastructure.get().kafka().createTopics(1, requests, results, parked);
        transactions = transactions(overrides, work);
        work.assigned(List.of(partition), Map.of());
    }

    /** The transactions of a worker over {@code work}, in the group, with these settings {@code overrides}. */
    private ResultTransactions transactions(Map<String, String> overrides, PartitionWork work) {
        WorkerThreads threads = new WorkerThreads();
        ResultTransactions made = new ResultTransactions(
                Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap()),
                TestConfig.settings(TransactionSettings.class, overrides),
                TestConfig.settings(RetrySettings.class, overrides),
                work,
                // Room for a task per record taken, as the worker's pool has: each park's end goes on there.
                new CpuWork(threads, 2, 2000),
                threads,
                registry);
        made.groupOf(requests, new ConsumerGroupMetadata(group));
        return made;
    }

    private void publishOne() {
        RecordContext request = record(0);
        ProducerRecord<byte[], byte[]> result = result("r-1");
        // Started right before its result is submitted: a record running with no result waiting is what the
        // transactions' commit of progress (every second) commits in a transaction of offsets only, which would take
        // the step armed for the result's transaction (a first assertion loading its library in between did, once).
        InFlight.Run run = offsets.inFlight().take(request);
        Uni<Void> published = transactions.publish("r-1", run, List.of(result), null);
        assertThat(run.start()).isEqualTo(PartitionWork.Start.RUN);
        published.await().atMost(Duration.ofSeconds(90));
        assertThat(work.runs(request)).as("ended with its commit").isFalse();
    }

    /** The keys of the results a read_committed consumer reads, up to the end of the topic. */
    private List<String> committedResults() {
        return committedKeys(results);
    }

    /** The keys of the records of {@code topic} a read_committed consumer reads, up to the end of the topic. */
    private List<String> committedKeys(String topic) {
        TopicPartition out = new TopicPartition(topic, 0);
        try (KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(
                Map.of(
                        ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG,
                        bootstrap(),
                        ConsumerConfig.ISOLATION_LEVEL_CONFIG,
                        "read_committed"),
                new ByteArrayDeserializer(),
                new ByteArrayDeserializer())) {
            consumer.assign(List.of(out));
            consumer.seekToBeginning(List.of(out));
            long end = consumer.endOffsets(List.of(out)).get(out);
            List<String> keys = new ArrayList<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (consumer.position(out) < end && System.nanoTime() < deadline) {
                for (ConsumerRecord<byte[], byte[]> record : consumer.poll(Duration.ofMillis(200))) {
                    keys.add(new String(record.key(), StandardCharsets.UTF_8));
                }
            }
            assertThat(consumer.position(out)).as("read to the end").isEqualTo(end);
            return keys;
        }
    }

    private long committedOffset() throws RuntimeException {
        try (Admin admin = Admin.create(Map.of(CommonClientConfigs.BOOTSTRAP_SERVERS_CONFIG, bootstrap()))) {
            OffsetAndMetadata offset = admin.listConsumerGroupOffsets(group)
                    .partitionsToOffsetAndMetadata()
                    .get()
                    .get(partition);
            return offset == null ? -1 : offset.offset();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static String bootstrap() {
        return Infrastructure.get().kafka().bootstrapServers();
    }
}
