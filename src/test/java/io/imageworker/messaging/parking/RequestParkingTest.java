package io.imageworker.messaging.parking;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.config.TopicSettings;
import io.imageworker.messaging.offsets.OffsetsFixture;
import io.imageworker.messaging.results.RecordContext;
import io.imageworker.messaging.results.ResultSink;
import io.imageworker.messaging.results.ResultTransactionsFixture;
import io.imageworker.testing.TestConfig;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.AbstractRecords;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.RecordBatch;
import org.junit.jupiter.api.Test;

/**
 * Which records may be parked: only those of the request topic, and only with transactions on. Without transactions
 * a copy and its offset could not be committed as one (a record parked twice, or committed without its copy), so
 * nothing is parked, though the parked topic is still read.
 */
class RequestParkingTest {

    private static final String PARKED = "image-request-parked";

    private static RequestParking parking(boolean transactions) {
        Map<String, String> settings = new HashMap<>();
        settings.put("image-worker.topic.request-parked", PARKED);
        settings.put("image-worker.transactions.enabled", Boolean.toString(transactions));
        var config = TestConfig.worker(settings);
        ResultSink sink = ResultTransactionsFixture.sink(settings, new OffsetsFixture(System::nanoTime).partitions());
        // No Kafka client is asked for anything here.
        return new RequestParking(config, TestConfig.settings(TopicSettings.class, settings), sink, null, Map.of());
    }

    private static RecordContext of(String topic) {
        return new RecordContext(null, new RecordHeaders(), topic, 0, 0, Instant.now());
    }

    @Test
    void withTransactionsOffNothingIsParkedButTheParkedTopicIsRead() {
        RequestParking parking = parking(false);

        assertThat(parking.parks(of("image-request")))
                .as("a record of the request topic")
                .isFalse();
        assertThat(parking.reads()).isTrue();
        assertThat(parking.topic()).isEqualTo(PARKED);
    }

    @Test
    void withTransactionsOnOnlyRecordsOfTheRequestTopicAreParked() {
        RequestParking parking = parking(true);

        assertThat(parking.parks(of("image-request"))).isTrue();
        assertThat(parking.parks(of(PARKED)))
                .as("a parked record, never parked again")
                .isFalse();
        assertThat(parking.parks(of("image-request-priority"))).isFalse();
    }

    @Test
    void aRecordWhoseCopyWouldBeLargerThanKafkaTakesIsNotToBeParked() {
        RequestParking parking = parking(true);
        byte[] key = "r-1".getBytes(StandardCharsets.UTF_8);
        RecordContext small = new RecordContext(key, new RecordHeaders(), "image-request", 0, 0, Instant.now());

        assertThat(parking.tooLargeToPark("a", new byte[1000], small)).isNull();
        // A value that fits a record of 1 MiB with its own key and no header, and no more.
        int fits = 1024 * 1024 - 100;
        while (size(key, new byte[fits + 1], new RecordHeaders()) <= 1024 * 1024) {
            fits++;
        }
        assertThat(size(key, new byte[fits], new RecordHeaders())).isLessThanOrEqualTo(1024 * 1024);

        assertThat(parking.tooLargeToPark("a", new byte[fits], small))
                .as("its copy adds the producer as key and the key header")
                .contains("too large to be queued fairly")
                .contains("max.request.size")
                .contains("image-worker-parked-key");
        assertThat(parking.tooLargeToPark("a", new byte[fits - 64], small))
                .as("room for the producer and the header")
                .isNull();
    }

    @Test
    void aCopyIsHeldToASmallerMaxRequestSize() {
        Map<String, String> settings = Map.of("image-worker.topic.request-parked", PARKED);
        var config = TestConfig.worker(settings);
        ResultSink sink = ResultTransactionsFixture.sink(settings, new OffsetsFixture(System::nanoTime).partitions());
        RequestParking parking = new RequestParking(
                config,
                TestConfig.settings(TopicSettings.class, settings),
                sink,
                null,
                Map.of("max.request.size", "10000"));
        RecordContext record = new RecordContext(null, new RecordHeaders(), "image-request", 0, 0, Instant.now());

        assertThat(parking.tooLargeToPark(null, new byte[9000], record)).isNull();
        assertThat(parking.tooLargeToPark(null, new byte[10000], record)).contains("(10000 bytes: max.request.size)");
    }

    private static int size(byte[] key, byte[] value, RecordHeaders headers) {
        return AbstractRecords.estimateSizeInBytesUpperBound(
                RecordBatch.CURRENT_MAGIC_VALUE, CompressionType.NONE, key, value, headers.toArray());
    }
}
