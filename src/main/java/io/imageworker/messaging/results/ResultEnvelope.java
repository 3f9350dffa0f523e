package io.imageworker.messaging.results;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * What a request's result carries from its record beside the event: its key (the request's, or the {@code requestId}
 * when it had none) and its {@code tracestate} (with a {@code traceparent}). A producer may send a record whose key or
 * {@code tracestate} is nearly as large as Kafka takes: the request fits, but its result, the same key and trace plus
 * the event and its CloudEvents headers, would not, and a result Kafka refuses is refused again at every try, holding
 * its partition until the infrastructure patience ends and the channel fails. So whatever leaves less than {@link
 * #RESULT_ROOM} of a record for the rest is not carried: a key that large is replaced by the {@code requestId}, then a
 * {@code tracestate} that still leaves no room is dropped. Such a request is refused before any gateway call (its
 * event says what was cut), and any result of it (a replay too) is published with what fits.
 *
 * @param key the result's key
 * @param tracestate the {@code tracestate} to continue, or null
 * @param cut what was cut, for the refusal's message, or null when nothing was
 */
record ResultEnvelope(byte[] key, String tracestate, String cut) {

    /**
     * The most a result takes besides its key and {@code tracestate}: its event (at most 16 KiB of metadata, up to 8
     * stored variants with their presigned URLs, an error with 2 KiB of the gateway's answer), its CloudEvents and
     * {@code traceparent} headers and Kafka's overhead; well below, with a margin.
     */
    static final int RESULT_ROOM = 64 * 1024;

    /**
     * The envelope of a result of {@code requestId}, whose record had {@code requestKey} (or null) and {@code
     * tracestate} (null when none is continued), in records of at most {@code maxRecordBytes}.
     */
    static ResultEnvelope of(byte[] requestKey, String tracestate, String requestId, int maxRecordBytes) {
        int room = maxRecordBytes - RESULT_ROOM;
        byte[] id = requestId.getBytes(StandardCharsets.UTF_8);
        List<String> cuts = new ArrayList<>();
        byte[] key = requestKey == null ? id : requestKey;
        if (key.length > room) {
            cuts.add("this event is keyed by its requestId, not by the record's key (" + key.length + " bytes)");
            key = id;
        }
        String trace = tracestate;
        if (trace != null) {
            int traceBytes = trace.getBytes(StandardCharsets.UTF_8).length;
            if (key.length + traceBytes > room) {
                cuts.add("this event goes without the record's tracestate header (" + traceBytes + " bytes)");
                trace = null;
            }
        }
        String cut = cuts.isEmpty()
                ? null
                : "the request's record leaves no room for its result in a Kafka record (at most " + maxRecordBytes
                        + " bytes, max.request.size): " + String.join("; ", cuts);
        return new ResultEnvelope(key, trace, cut);
    }
}
