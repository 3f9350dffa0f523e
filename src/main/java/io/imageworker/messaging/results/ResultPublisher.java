package io.imageworker.messaging.results;

import io.imageworker.config.TopicSettings;
import io.imageworker.config.WorkerConfig;
import io.imageworker.contract.EventCodec;
import io.imageworker.contract.ImageStarted;
import io.imageworker.contract.TerminalEvent;
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
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.header.internals.RecordHeaders;
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
    /** The DLQ copies of unreadable records, made to fit in {@code max.request.size}. */
    private final DeadLetterCopies copies;

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
            TopicSettings topics,
            @Identifier("default-kafka-broker") Map<String, Object> kafka) {
        this.completed = completed;
        this.failed = failed;
        this.deadLetters = deadLetters;
        this.status = status;
        this.codec = codec;
        this.completedTopic = topics.completed();
        this.failedTopic = topics.failed();
        this.deadLetterTopic = topics.dlq();
        this.statusOn = topics.status().filter(topic -> !topic.isBlank()).isPresent();
        this.maxStatusOnTheirWay = config.inProgressLimit();
        this.maxRecordBytes = maxRecordBytes(kafka);
        this.copies = new DeadLetterCopies(maxRecordBytes);
    }

    /**
     * The largest record the worker's producers send, from the Kafka settings {@code kafka}: their {@code
     * max.request.size}, Kafka's default 1 MiB when none is set.
     */
    public static int maxRecordBytes(Map<String, Object> kafka) {
        Object max = kafka.get(ProducerConfig.MAX_REQUEST_SIZE_CONFIG);
        return max == null
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
     * The DLQ copy {@link #deadLetter} sends, for a transaction; {@code cut}: fitted ({@link
     * DeadLetterCopies#fitted}) even if its estimate fits, as when Kafka refused the whole copy as too large.
     */
    public ProducerRecord<byte[], byte[]> deadLetterRecord(
            byte[] value, RecordContext request, String reason, boolean cut) {
        Message<byte[]> copy = cut ? copies.fitted(value, request, reason) : copies.copy(value, request, reason);
        @SuppressWarnings("unchecked")
        OutgoingKafkaRecordMetadata<byte[]> kafka =
                copy.getMetadata(OutgoingKafkaRecordMetadata.class).orElseThrow();
        return new ProducerRecord<>(deadLetterTopic, null, kafka.getKey(), copy.getPayload(), kafka.getHeaders());
    }

    /**
     * Why no result of request {@code requestId} can carry what its record gives it (its key or its {@code
     * tracestate} leaves no room for the event in a Kafka record), or null: such a request is refused before any call,
     * its result published with what fits ({@link ResultEnvelope}).
     */
    public String unpublishable(String requestId, RecordContext request, Span requestSpan) {
        return envelope(request, requestId, requestSpan).cut();
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
     * is fitted ({@link DeadLetterCopies#fitted}); so is one Kafka refuses as too large all the same.
     */
    public Uni<Void> deadLetter(byte[] value, RecordContext request, String reason) {
        return deadLetters
                .sendMessage(copies.copy(value, request, reason))
                .onFailure(DeadLetterCopies::isTooLarge)
                .recoverWithUni(tooLarge -> deadLetters.sendMessage(copies.fitted(value, request, reason)));
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
