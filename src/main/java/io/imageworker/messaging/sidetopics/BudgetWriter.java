package io.imageworker.messaging.sidetopics;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.spend.BudgetLedger;
import io.quarkus.logging.Log;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.ToLongFunction;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * The writing half of the budget log ({@link KafkaBudgetLog}): this replica's claims and releases, each keyed by the
 * replica and stamped with its window's time, written to partition 0 of the budget topic; a release with its claim's
 * secret. Whether a claim holds is not known here: it is decided when the reader reads it back.
 */
final class BudgetWriter {

    /** How long closing the writer may take at a stop. */
    private static final Duration CLOSE_TIMEOUT = Duration.ofSeconds(5);

    private final String topic;
    private final String replica;
    private final ObjectMapper json;
    /** The window length of a scope, in milliseconds. */
    private final ToLongFunction<String> windowMillis;

    private KafkaProducer<byte[], byte[]> producer;

    BudgetWriter(String topic, String replica, ObjectMapper json, ToLongFunction<String> windowMillis) {
        this.topic = topic;
        this.replica = replica;
        this.json = json;
        this.windowMillis = windowMillis;
    }

    /** Makes the producer, with the client settings {@code settings}. */
    void open(Map<String, Object> settings) {
        producer = new KafkaProducer<>(settings, new ByteArraySerializer(), new ByteArraySerializer());
    }

    /** Writes {@code entry}; a failure to write it fails {@code verdict}, if any (a claim waiting for its own). */
    void write(BudgetLedger.Entry entry, CompletableFuture<Boolean> verdict) {
        byte[] value;
        try {
            value = json.writeValueAsBytes(new KafkaBudgetLog.Record(
                    entry.kind(),
                    entry.claim(),
                    entry.window(),
                    entry.limit(),
                    replica,
                    entry.scope(),
                    entry.secret()));
        } catch (IOException e) {
            throw new IllegalStateException("cannot write a budget entry", e);
        }
        // The record's time is the claim's: reading from a window's start by time finds every claim of the window.
        long at = Math.max(System.currentTimeMillis(), entry.window() * windowMillis.applyAsLong(entry.scope()));
        producer.send(
                new ProducerRecord<>(topic, 0, at, replica.getBytes(StandardCharsets.UTF_8), value),
                (metadata, error) -> {
                    if (error != null) {
                        Log.warnf("Spend guard: could not write a %s to %s: %s", entry.kind(), topic, error.toString());
                        if (verdict != null) {
                            verdict.completeExceptionally(error);
                        }
                    }
                });
    }

    /** Closes the producer, if open. */
    void close() {
        if (producer != null) {
            producer.close(CLOSE_TIMEOUT);
            producer = null;
        }
    }
}
