package io.imageworker.messaging.results;

import io.imageworker.EventCodec;
import io.imageworker.ImageStarted;
import io.imageworker.TerminalEvent;
import io.imageworker.config.WorkerConfig;
import io.imageworker.gateway.CallListener;
import io.imageworker.support.Tracing;
import io.opentelemetry.api.trace.Span;
import io.quarkus.logging.Log;
import io.smallrye.common.annotation.Identifier;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.MutinyEmitter;
import io.smallrye.reactive.messaging.ce.OutgoingCloudEventMetadata;
import io.smallrye.reactive.messaging.kafka.api.OutgoingKafkaRecordMetadata;
import jakarta.enterprise.context.ApplicationScoped;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.errors.RecordTooLargeException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.record.AbstractRecords;
import org.apache.kafka.common.record.CompressionType;
import org.apache.kafka.common.record.RecordBatch;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.OnOverflow;

/**
 * Publishes terminal events as CloudEvents 1.0 in binary mode (SmallRye's outgoing CloudEvents metadata: the Kafka
 * connector writes the {@code ce_*} headers and {@code content-type}), and unreadable records to the DLQ. Every send
 * is awaited: the returned {@code Uni} completes only when Kafka has acknowledged the record, so a request is never
 * committed before its result is safely written.
 *
 * <p>The emitters buffer without a fixed size because their load is bounded elsewhere: each request in progress has
 * at most one result send outstanding, and requests in progress are at most {@code max-in-progress}; status events
 * on their way are counted and bounded by the same number.
 *
 * <p>It is the gateway's {@link CallListener}: the first call of each attempt of a request it was told of ({@link
 * #tellingStarts}) is published as {@code image.started}.
 */
@ApplicationScoped
public class ResultPublisher implements CallListener {

    /** {@code ce_source} of every result. */
    public static final URI SOURCE = URI.create("image-worker");

    /**
     * The room a DLQ copy too large to copy whole leaves for the DLQ's own headers and Kafka's overhead: far more
     * than they take.
     */
    static final int CUT_BYTES = 16 * 1024;

    /** How much of a key too large to copy whole a DLQ copy keeps. */
    static final int KEPT_KEY_BYTES = 1024;

    /** The longest list of dropped header names a DLQ copy gives, and the longest name in it. */
    private static final int MAX_DROPPED_LIST = 2048;

    private static final int MAX_DROPPED_NAME = 64;

    /** What a record header takes beside its name and value, at most (two varint lengths). */
    private static final int HEADER_OVERHEAD = 10;

    /** Kafka's default {@code max.request.size}: the largest record its producer sends. */
    static final int DEFAULT_MAX_RECORD_BYTES = 1024 * 1024;

    private final MutinyEmitter<byte[]> completed;
    private final MutinyEmitter<byte[]> failed;
    private final MutinyEmitter<byte[]> deadLetters;
    private final MutinyEmitter<byte[]> status;
    private final EventCodec codec;
    private final String completedTopic;
    private final String failedTopic;
    private final String deadLetterTopic;
    private final boolean statusOn;
    private final int maxStatusOnTheirWay;
    /** The largest record the producers send ({@code max.request.size}): results are made to fit in it. */
    private final int maxRecordBytes;

    private final AtomicInteger statusOnTheirWay = new AtomicInteger();
    /** The requests whose calls are published as they leave, by id: where each came from, what is told already. */
    private final Map<String, Starts> starting = new ConcurrentHashMap<>();

    ResultPublisher(
            @Channel("completed") @OnOverflow(OnOverflow.Strategy.UNBOUNDED_BUFFER) MutinyEmitter<byte[]> completed,
            @Channel("failed") @OnOverflow(OnOverflow.Strategy.UNBOUNDED_BUFFER) MutinyEmitter<byte[]> failed,
            @Channel("dead-letters") @OnOverflow(OnOverflow.Strategy.UNBOUNDED_BUFFER)
                    MutinyEmitter<byte[]> deadLetters,
            @Channel("status") @OnOverflow(OnOverflow.Strategy.UNBOUNDED_BUFFER) MutinyEmitter<byte[]> status,
            EventCodec codec,
            WorkerConfig config,
            @Identifier("default-kafka-broker") Map<String, Object> kafka) {
        this.completed = completed;
        this.failed = failed;
        this.deadLetters = deadLetters;
        this.status = status;
        this.codec = codec;
        this.completedTopic = config.topic().completed();
        this.failedTopic = config.topic().failed();
        this.deadLetterTopic = config.topic().dlq();
        this.statusOn =
                config.topic().status().filter(topic -> !topic.isBlank()).isPresent();
        this.maxStatusOnTheirWay = config.inProgressLimit();
        Object max = kafka.get(ProducerConfig.MAX_REQUEST_SIZE_CONFIG);
        this.maxRecordBytes = max == null
                ? DEFAULT_MAX_RECORD_BYTES
                : Integer.parseInt(max.toString().trim());
    }

    /**
     * The key and trace a result of request {@code requestId}, read from {@code request}, carries, and what of them
     * must be cut for the result to fit in a record Kafka takes ({@link ResultEnvelope}).
     */
    ResultEnvelope envelope(RecordContext request, String requestId, Span requestSpan) {
        return envelope(request, requestId, traceparent(request, requestSpan));
    }

    private ResultEnvelope envelope(RecordContext request, String requestId, String traceparent) {
        String tracestate = traceparent == null ? null : RecordContext.header(request.headers(), "tracestate");
        ResultEnvelope envelope = ResultEnvelope.of(request.key(), tracestate, requestId, maxRecordBytes);
        if (envelope.cut() != null) {
            Log.debugf("[%s] %s", requestId, envelope.cut());
        }
        return envelope;
    }

    /**
     * Publishes {@code event} with the request's key (or the requestId), its trace continued: the worker's span of the
     * request is the result's parent when traces are recorded ({@link Tracing}).
     */
    public Uni<Void> publish(TerminalEvent event, RecordContext request, Span requestSpan) {
        Message<byte[]> message =
                cloudEvent(codec.write(event), event.ceType(), event.requestId(), request, requestSpan);
        return (event instanceof TerminalEvent.Completed ? completed : failed).sendMessage(message);
    }

    /**
     * {@code event} as the Kafka record {@link #publish} sends, for a transaction ({@link ResultTransactions}): the same
     * key, the same CloudEvents binary headers as SmallRye's connector writes ({@code ce_specversion}, {@code ce_id},
     * {@code ce_type}, {@code ce_source}, {@code ce_subject}, {@code ce_datacontenttype}, {@code content-type},
     * {@code ce_time}), the same trace.
     */
    public ProducerRecord<byte[], byte[]> record(TerminalEvent event, RecordContext request, Span requestSpan) {
        String traceparent = traceparent(request, requestSpan);
        ResultEnvelope envelope = envelope(request, event.requestId(), traceparent);
        RecordHeaders headers = traceHeaders(traceparent, envelope);
        headers.add("ce_specversion", bytes("1.0"));
        headers.add("ce_id", bytes(UUID.randomUUID().toString()));
        headers.add("ce_type", bytes(event.ceType()));
        headers.add("ce_source", bytes(SOURCE.toString()));
        headers.add("ce_subject", bytes(event.requestId()));
        headers.add("ce_datacontenttype", bytes("application/json"));
        headers.add("content-type", bytes("application/json"));
        headers.add("ce_time", bytes(DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(ZonedDateTime.now())));
        return new ProducerRecord<>(
                event instanceof TerminalEvent.Completed ? completedTopic : failedTopic,
                null,
                envelope.key(),
                codec.write(event),
                headers);
    }

    /**
     * The DLQ copy {@link #deadLetter} sends, for a transaction; {@code cut}: fitted ({@link #fittedCopy}) even if
     * its estimate fits, as when Kafka refused the whole copy as too large.
     */
    public ProducerRecord<byte[], byte[]> deadLetterRecord(
            byte[] value, RecordContext request, String reason, boolean cut) {
        Message<byte[]> copy = cut ? fittedCopy(value, request, reason) : deadLetterCopy(value, request, reason);
        @SuppressWarnings("unchecked")
        OutgoingKafkaRecordMetadata<byte[]> kafka =
                copy.getMetadata(OutgoingKafkaRecordMetadata.class).orElseThrow();
        return new ProducerRecord<>(deadLetterTopic, null, kafka.getKey(), copy.getPayload(), kafka.getHeaders());
    }

    /**
     * {@code work}, the processing of request {@code requestId} read from {@code request}, while whose run the first
     * call of each attempt (whichever variant's call leaves first) is published as {@code image.started} on {@code
     * image-status}, when that topic is configured, with the request's key and trace. A copy of a request that is
     * already running shares the run of the first, and its status events.
     */
    public <T> Uni<T> tellingStarts(String requestId, RecordContext request, Span requestSpan, Uni<T> work) {
        if (!statusOn) {
            return work;
        }
        return Uni.createFrom().deferred(() -> {
            Starts mine = new Starts(request, requestSpan, ConcurrentHashMap.newKeySet());
            if (starting.putIfAbsent(requestId, mine) != null) {
                return work;
            }
            return work.onTermination().invoke(() -> starting.remove(requestId, mine));
        });
    }

    @Override
    public void sent(ImageStarted call) {
        Starts starts = starting.get(call.requestId());
        if (starts != null && starts.told().add(call.attempt())) {
            started(call, starts.request(), starts.requestSpan());
        }
    }

    /** Where a request whose calls are told came from, and the attempts told already. */
    private record Starts(RecordContext request, Span requestSpan, Set<Integer> told) {}

    /**
     * Publishes {@code image.started} on {@code image-status} when its topic is configured, with the request's key and
     * trace like a result, without waiting: a hint for progress displays never delays nor fails the request. At most
     * {@code max-in-progress} of them are on their way at once; one beyond (Kafka slow or away) is dropped, and a
     * failed send is logged at DEBUG.
     */
    private void started(ImageStarted event, RecordContext request, Span requestSpan) {
        if (statusOnTheirWay.incrementAndGet() > maxStatusOnTheirWay) {
            statusOnTheirWay.decrementAndGet();
            Log.debugf("[%s] image.started dropped: %d already on their way", event.requestId(), maxStatusOnTheirWay);
            return;
        }
        status.sendMessage(
                        cloudEvent(codec.write(event), ImageStarted.CE_TYPE, event.requestId(), request, requestSpan))
                .onTermination()
                .invoke(statusOnTheirWay::decrementAndGet)
                .subscribe()
                .with(
                        sent -> {},
                        failure -> Log.debugf(
                                "[%s] image.started not published: %s", event.requestId(), failure.toString()));
    }

    /**
     * A CloudEvent in binary mode with the request's key (or its id) and its trace continued, as far as they leave
     * room for it ({@link ResultEnvelope}).
     */
    private Message<byte[]> cloudEvent(
            byte[] payload, String type, String requestId, RecordContext request, Span requestSpan) {
        String traceparent = traceparent(request, requestSpan);
        ResultEnvelope envelope = envelope(request, requestId, traceparent);
        RecordHeaders headers = traceHeaders(traceparent, envelope);
        byte[] key = envelope.key();
        return Message.of(payload)
                .addMetadata(OutgoingCloudEventMetadata.builder()
                        .withId(UUID.randomUUID().toString())
                        .withSource(SOURCE)
                        .withType(type)
                        .withSubject(requestId)
                        .withTimestamp(ZonedDateTime.now())
                        .withDataContentType("application/json")
                        .build())
                .addMetadata(OutgoingKafkaRecordMetadata.<byte[]>builder()
                        .withKey(key)
                        .withHeaders(headers)
                        .build());
    }

    /** The {@code traceparent} of a result: the request's trace with the worker's span, or null. */
    private static String traceparent(RecordContext request, Span requestSpan) {
        return Tracing.traceparentFor(requestSpan, RecordContext.header(request.headers(), "traceparent"));
    }

    /** The request's trace continued: {@code traceparent}, and the request's {@code tracestate} when it fits. */
    private static RecordHeaders traceHeaders(String traceparent, ResultEnvelope envelope) {
        RecordHeaders headers = new RecordHeaders();
        if (traceparent != null) {
            headers.add("traceparent", bytes(traceparent));
            if (envelope.tracestate() != null) {
                headers.add("tracestate", bytes(envelope.tracestate()));
            }
        }
        return headers;
    }

    /**
     * Sends an unreadable record to the DLQ byte for byte: same key, same value, its headers, plus
     * {@code dead-letter-reason}, {@code dead-letter-topic}, {@code dead-letter-partition} and
     * {@code dead-letter-offset} (the names SmallRye's own DLQ uses).
     *
     * <p>A record as large as Kafka takes has no room left for those headers: its whole copy would be refused as too
     * large, a refusal no retry heals, and a record that cannot be brought to an end fails the channel. Such a copy
     * is fitted ({@link #fittedCopy}); so is one Kafka refuses as too large all the same.
     */
    public Uni<Void> deadLetter(byte[] value, RecordContext request, String reason) {
        return deadLetters
                .sendMessage(deadLetterCopy(value, request, reason))
                .onFailure(ResultPublisher::isTooLarge)
                .recoverWithUni(tooLarge -> deadLetters.sendMessage(fittedCopy(value, request, reason)));
    }

    /** The whole DLQ copy when it fits in a record Kafka takes, else the fitted one. */
    private Message<byte[]> deadLetterCopy(byte[] value, RecordContext request, String reason) {
        Message<byte[]> whole = deadLetterCopy(value, request.key(), request.headers(), request, reason, List.of());
        return size(whole) <= maxRecordBytes ? whole : fittedCopy(value, request, reason);
    }

    /**
     * The DLQ copy of a record too large to copy whole, made to fit in {@code max.request.size} less {@value
     * #CUT_BYTES} bytes (the DLQ's own headers): its key and its headers take at most half of that (a key larger is
     * cut to its first {@value #KEPT_KEY_BYTES} bytes, headers that do not fit are dropped, in their order), its
     * value the rest (cut to its first bytes). {@code dead-letter-value-bytes} and {@code dead-letter-key-bytes} give
     * the lengths of what was cut, {@code dead-letter-dropped-headers} the names of what was dropped, and the reason
     * says so.
     */
    private Message<byte[]> fittedCopy(byte[] value, RecordContext request, String reason) {
        int budget = maxRecordBytes - CUT_BYTES;
        int half = budget / 2;
        List<Header> added = new ArrayList<>();
        List<String> cuts = new ArrayList<>();
        byte[] key = request.key();
        if (key != null && key.length > half) {
            cuts.add("the key to its first " + KEPT_KEY_BYTES + " of " + key.length + " bytes");
            added.add(header("dead-letter-key-bytes", Integer.toString(key.length)));
            key = Arrays.copyOf(key, KEPT_KEY_BYTES);
        }
        int used = key == null ? 0 : key.length;
        RecordHeaders kept = new RecordHeaders();
        StringBuilder dropped = new StringBuilder();
        if (request.headers() != null) {
            for (Header header : request.headers()) {
                byte[] name = bytes(header.key());
                int cost = HEADER_OVERHEAD + name.length + (header.value() == null ? 0 : header.value().length);
                if (used + cost <= half) {
                    kept.add(header);
                    used += cost;
                } else if (dropped.length() < MAX_DROPPED_LIST) {
                    String shown = header.key().length() <= MAX_DROPPED_NAME
                            ? header.key()
                            : header.key().substring(0, MAX_DROPPED_NAME) + "...";
                    dropped.append(dropped.isEmpty() ? "" : ",").append(shown);
                }
            }
        }
        if (!dropped.isEmpty()) {
            cuts.add("headers dropped: " + dropped);
            added.add(header("dead-letter-dropped-headers", dropped.toString()));
        }
        byte[] keptValue = value;
        if (value != null && value.length > budget - used) {
            keptValue = Arrays.copyOf(value, budget - used);
            cuts.add(0, "the value is cut to its first " + keptValue.length + " of " + value.length + " bytes");
            added.add(header("dead-letter-value-bytes", Integer.toString(value.length)));
        }
        return deadLetterCopy(
                keptValue,
                key,
                kept,
                request,
                reason + "; " + (cuts.isEmpty() ? "nothing to cut" : String.join(", ", cuts))
                        + ": the whole copy is larger than Kafka takes",
                added);
    }

    /** The size Kafka's producer gives {@code message}'s record, to compare with {@code max.request.size}. */
    private static int size(Message<byte[]> message) {
        @SuppressWarnings("unchecked")
        OutgoingKafkaRecordMetadata<byte[]> kafka =
                message.getMetadata(OutgoingKafkaRecordMetadata.class).orElseThrow();
        return AbstractRecords.estimateSizeInBytesUpperBound(
                RecordBatch.CURRENT_MAGIC_VALUE,
                CompressionType.NONE,
                kafka.getKey(),
                message.getPayload(),
                kafka.getHeaders().toArray());
    }

    /** Whether {@code failure} is Kafka refusing a record as too large (no retry heals it). */
    static boolean isTooLarge(Throwable failure) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause()) {
            if (cause instanceof RecordTooLargeException) {
                return true;
            }
        }
        return false;
    }

    /**
     * A DLQ copy of {@code value} with {@code key} and {@code copied} (the record's headers, or those kept), the DLQ
     * headers of {@code request} and {@code reason}, and {@code added}.
     */
    private static Message<byte[]> deadLetterCopy(
            byte[] value, byte[] key, Headers copied, RecordContext request, String reason, List<Header> added) {
        RecordHeaders headers = new RecordHeaders();
        if (copied != null) {
            for (Header header : copied) {
                headers.add(header.key(), header.value());
            }
        }
        headers.add("dead-letter-reason", bytes(reason));
        headers.add("dead-letter-topic", bytes(request.topic()));
        headers.add("dead-letter-partition", bytes(Integer.toString(request.partition())));
        headers.add("dead-letter-offset", bytes(Long.toString(request.offset())));
        added.forEach(headers::add);
        return Message.of(value)
                .addMetadata(OutgoingKafkaRecordMetadata.<byte[]>builder()
                        .withKey(key)
                        .withHeaders(headers)
                        .build());
    }

    private static Header header(String name, String value) {
        return new RecordHeader(name, bytes(value));
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
