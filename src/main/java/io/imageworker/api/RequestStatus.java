package io.imageworker.api;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.imageworker.contract.TerminalEvent;
import java.time.Instant;
import java.util.List;
import java.util.Locale;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** The answer of {@code GET /requests/{requestId}}: where a request is, and for an ended one how it ended. */
@JsonInclude(JsonInclude.Include.NON_NULL)
@Schema(
        name = "RequestStatus",
        description = "Where a request is. queued: this worker holds it (read ahead and waiting for its turn, or in"
                + " progress) and no gateway call of it has left yet, or it parked it (see queue);"
                + " calling: a gateway call of it has left (it may be retried, or its image stored); completed and"
                + " failed: its terminal event is recorded (a refusal before any gateway call too); unknown: no"
                + " record, and this worker does not hold it (it may not have arrived yet, or be held by another"
                + " replica: see replica).")
public record RequestStatus(
        @Schema(required = true, description = "The requestId asked about") String requestId,
        @Schema(
                        required = true,
                        enumeration = {"queued", "calling", "completed", "failed", "unknown"})
                String status,
        @Schema(
                        description = "completed: the stored image, as in image-completed (the first variant with"
                                + " count); its presigned url only with IMAGE_WORKER_STATUS_PRESIGNED_URLS=true")
                TerminalEvent.StoredImage image,
        @Schema(description = "completed with count above 1: every stored variant, in call order")
                List<TerminalEvent.StoredImage> images,
        @Schema(description = "completed or failed with count above 1: variants requested, delivered, failed")
                TerminalEvent.VariantTally variants,
        @Schema(description = "failed: the error of image-failed (code, message, retryable, gateway status and body)")
                TerminalEvent.Error error,
        @Schema(description = "completed or failed: when the request ended (timings.completedAt of its event)")
                Instant completedAt,
        @Schema(
                        description = "queued: where it stands on this replica, and when its first gateway call should"
                                + " leave (always present with queued)")
                Queue queue,
        @Schema(
                        description = "unknown: what this replica can tell of the others, from the partitions of the"
                                + " request topics it owns")
                Replica replica,
        @Schema(description = "For a person: what the answer leaves out, and why (queued without a position, unknown)")
                String note) {

    /** A request this worker holds, not ended yet: {@code queue} with {@code queued}, and a {@code note}, if any. */
    static RequestStatus held(String requestId, RequestStates.State state, Queue queue, String note) {
        return new RequestStatus(
                requestId, state.name().toLowerCase(Locale.ROOT), null, null, null, null, null, queue, null, note);
    }

    /** A request with no record, which this worker does not hold: what it can tell of the others. */
    static RequestStatus unknown(String requestId, Replica replica, String note) {
        return new RequestStatus(requestId, "unknown", null, null, null, null, null, null, replica, note);
    }

    /** Where a queued request stands on this replica, and when its first call should leave. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    @Schema(
            name = "QueuePlace",
            description = "Where a queued request stands on the replica that answers, and an estimate of when its first"
                    + " gateway call leaves. The estimate is this replica's own: its position divided by the rate at"
                    + " which gateway calls left this replica lately (over twice the gateway's timeout, at least a minute)"
                    + " times its producer's share of them"
                    + " (its weight over the weights of the producers with requests waiting in its lane now, and its"
                    + " lane's part while the other lane waits too). It assumes the producers waiting now keep"
                    + " waiting and the gateway keeps its pace, and counts each request ahead as one call: a rough"
                    + " guide that improves as calls go on, not a promise. With IMAGE_WORKER_PRODUCER_IDENTITY=topic the"
                    + " estimate rests on its producer's own pace alone (basis), and share is absent: nothing in it"
                    + " tells of the other producers but what they leave to this one.")
    public record Queue(
            @Schema(
                            description = "1 for the next of its producer's requests waiting on this replica (in its"
                                    + " lane) to get a call slot, 2 for the one after... Absent when it stands in no"
                                    + " producer's line here: parked by this replica (it waits in the parked topic), or"
                                    + " a second copy of an id already waiting",
                            minimum = "1")
                    Long position,
            @Schema(description = "When its first gateway call should leave, by this replica's recent rate")
                    Instant callExpectedAt,
            @Schema(description = "The same, in seconds from the answer", minimum = "0") Double callExpectedInSeconds,
            @Schema(
                            description = "Gateway calls per second that left this replica lately, over twice the"
                                    + " gateway's timeout (at least a minute): the estimate's rate. With"
                                    + " IMAGE_WORKER_PRODUCER_IDENTITY=topic, its producer's own rate instead (see"
                                    + " basis): never the replica's")
                    Double callsPerSecond,
            @Schema(
                            description = "The part of those calls its producer gets while the producers waiting now"
                                    + " keep waiting (0 to 1). Absent with IMAGE_WORKER_PRODUCER_IDENTITY=topic, where"
                                    + " it would tell a producer who else waits (see basis)")
                    Double share,
            @Schema(
                            description = "With IMAGE_WORKER_PRODUCER_IDENTITY=topic only (absent otherwise): what the"
                                    + " estimate rests on, its producer's own pace alone, and the estimate is then"
                                    + " position / callsPerSecond. OWN_CALLS: callsPerSecond is the rate at which its"
                                    + " producer's requests in its lane got their first call on this replica lately"
                                    + " (what its share actually got). GUARANTEED_SHARE, with none lately:"
                                    + " callsPerSecond is what its guaranteed share gives, its weight over the weights"
                                    + " of every producer of IMAGE_WORKER_PRODUCERS (times its lane's least part with"
                                    + " the priority lane on) of this replica's gateway slots (IMAGE_WORKER_CONCURRENCY),"
                                    + " each held for the mean length of its producer's own last calls",
                            enumeration = {"OWN_CALLS", "GUARANTEED_SHARE"})
                    String basis,
            @Schema(
                            description = "Why there is no estimate: NO_RECENT_CALLS, no gateway call left this replica"
                                    + " lately, or none has finished yet (no rate to go by: nothing is invented); NO_POSITION, it"
                                    + " stands in no line here (see position); GATEWAY_PAUSED, intake is paused on a"
                                    + " dead token or a wrong address until the gateway answers again;"
                                    + " PRODUCER_OVER_CAP, its producer is over its own spend cap until its window"
                                    + " allows another call; PRIORITY_FIRST, its lane gets no call while the priority"
                                    + " lane has waiting requests (with IMAGE_WORKER_PRODUCER_IDENTITY=topic: its"
                                    + " producer has no call of its own lately here and its lane is guaranteed no"
                                    + " slot, IMAGE_WORKER_PRIORITY_MIN_SHARE=0; said whether or not priority requests"
                                    + " wait now). With IMAGE_WORKER_PRODUCER_IDENTITY=topic, NO_RECENT_CALLS means"
                                    + " that no call of its producer's own left this replica lately and none of its"
                                    + " calls finished here yet",
                            enumeration = {
                                "NO_RECENT_CALLS",
                                "NO_POSITION",
                                "GATEWAY_PAUSED",
                                "PRODUCER_OVER_CAP",
                                "PRIORITY_FIRST"
                            })
                    String noEstimate) {

        /** A place with no estimate, {@code why}; {@code position} null when it has none. */
        static Queue withoutEstimate(Long position, String why) {
            return new Queue(position, null, null, null, null, null, why);
        }
    }

    /** What the replica that answers {@code unknown} can tell of the others. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    @Schema(
            name = "ReplicaView",
            description = "The partitions of the request topics (normal, priority, parked) this replica owns in the"
                    + " consumer group now: a request it does not hold is held, if by any, by the replica that owns"
                    + " its partition. No other replica is asked.")
    public record Replica(
            @Schema(description = "Partitions of the request topics this replica owns now") Integer partitionsOwned,
            @Schema(description = "Partitions the request topics have (absent when not known)") Integer partitionsTotal,
            @Schema(
                            description = "false only when this replica owns every partition of the request topics: no"
                                    + " other replica can hold the request then")
                    boolean mayBeHeldElsewhere) {}

    /**
     * A request whose terminal event is recorded; the presigned URLs of its images only when {@code urls} says so (the
     * endpoint is unauthenticated).
     */
    static RequestStatus recorded(TerminalEvent event, boolean urls) {
        if (event instanceof TerminalEvent.Completed completed) {
            return new RequestStatus(
                    completed.requestId(),
                    "completed",
                    urls ? completed.image() : withoutUrl(completed.image()),
                    urls || completed.images() == null
                            ? completed.images()
                            : completed.images().stream()
                                    .map(RequestStatus::withoutUrl)
                                    .toList(),
                    completed.variants(),
                    null,
                    endedAt(completed.timings()),
                    null,
                    null,
                    null);
        }
        TerminalEvent.Failed failed = (TerminalEvent.Failed) event;
        return new RequestStatus(
                failed.requestId(),
                "failed",
                null,
                null,
                failed.variants(),
                failed.error(),
                endedAt(failed.timings()),
                null,
                null,
                null);
    }

    private static TerminalEvent.StoredImage withoutUrl(TerminalEvent.StoredImage image) {
        return image == null
                ? null
                : new TerminalEvent.StoredImage(
                        image.bucket(),
                        image.key(),
                        image.uri(),
                        null,
                        image.contentType(),
                        image.width(),
                        image.height(),
                        image.bytes(),
                        image.sha256());
    }

    private static Instant endedAt(TerminalEvent.Timings timings) {
        return timings == null ? null : timings.completedAt();
    }
}
