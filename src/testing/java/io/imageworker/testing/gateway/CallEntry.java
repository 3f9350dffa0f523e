package io.imageworker.testing.gateway;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The growing record of one call; written from an event loop, read as a {@link RecordedCall} from any thread. */
final class CallEntry {

    private final Arrival arrival;

    private int status;
    private final Map<String, String> textFields = new LinkedHashMap<>();
    private final List<String> forbiddenFields = new ArrayList<>();
    private List<RecordedCall.FilePart> fileParts = List.of();
    private final List<SilentChange> silentChanges = new ArrayList<>();
    private ResponseForm responseForm;
    private String requestedSize;
    private String outputSize;
    private String imageUrl;
    private int n = 1;
    private boolean billed;
    private long billedUnits;
    private Instant finishedAt;
    private Fault fault;
    private String errorMessage;
    private String traceparent;

    /**
     * What is known of a call when it arrives.
     *
     * @param sequence its number, from 1 since the last reset
     * @param concurrencyAtArrival image calls in flight with it, itself included (0 for other routes)
     */
    record Arrival(long sequence, String requestId, String method, String path, int concurrencyAtArrival, Instant at) {}

    CallEntry(Arrival arrival) {
        this.arrival = arrival;
    }

    String requestId() {
        return arrival.requestId();
    }

    int concurrencyAtArrival() {
        return arrival.concurrencyAtArrival();
    }

    synchronized void textField(String name, String value) {
        textFields.putIfAbsent(name, value);
        if ((name.equals("n") || name.equals("moderation")) && !forbiddenFields.contains(name)) {
            forbiddenFields.add(name);
        }
    }

    synchronized void fileParts(List<RecordedCall.FilePart> parts) {
        fileParts = List.copyOf(parts);
    }

    synchronized void silentChange(SilentChange change) {
        if (!silentChanges.contains(change)) {
            silentChanges.add(change);
        }
    }

    synchronized void traceparent(String value) {
        traceparent = value;
    }

    synchronized void requestedSize(String value) {
        requestedSize = value;
    }

    synchronized void n(int value) {
        n = value;
    }

    synchronized void fault(Fault value) {
        fault = value;
    }

    synchronized void image(ResponseForm form, String size, String url) {
        responseForm = form;
        outputSize = size;
        imageUrl = url;
    }

    synchronized void billed(long units) {
        billed = true;
        billedUnits += units;
    }

    synchronized void finish(int statusCode, String message, Instant at) {
        status = statusCode;
        errorMessage = message;
        finishedAt = at;
    }

    synchronized RecordedCall snapshot() {
        return new RecordedCall(
                arrival.sequence(),
                arrival.requestId(),
                arrival.method(),
                arrival.path(),
                status,
                Collections.unmodifiableMap(new LinkedHashMap<>(textFields)),
                List.copyOf(forbiddenFields),
                fileParts,
                List.copyOf(silentChanges),
                responseForm,
                requestedSize,
                outputSize,
                imageUrl,
                n,
                billed,
                billedUnits,
                arrival.concurrencyAtArrival(),
                arrival.at(),
                finishedAt,
                fault,
                errorMessage,
                traceparent);
    }
}
