package io.imageworker.messaging.parking;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.messaging.offsets.OffsetsFixture;
import io.imageworker.messaging.results.RecordContext;
import io.imageworker.messaging.results.ResultTransactions;
import io.imageworker.messaging.results.ResultTransactionsFixture;
import io.imageworker.testing.TestConfig;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import org.apache.kafka.common.header.internals.RecordHeaders;
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
        ResultTransactions results =
                ResultTransactionsFixture.of(config, new OffsetsFixture(System::nanoTime).partitions());
        // No Kafka client is asked for anything here.
        return new RequestParking(config, results, null, Map.of());
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
}
