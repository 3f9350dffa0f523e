package io.imageworker.api;

import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.RequestFailure;
import io.imageworker.contract.RequestId;
import io.imageworker.contract.TerminalEvent;
import io.imageworker.storage.ResultLedger;
import io.quarkus.logging.Log;
import io.smallrye.common.annotation.NonBlocking;
import io.smallrye.mutiny.Uni;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.time.Duration;
import java.util.Optional;
import org.eclipse.microprofile.openapi.annotations.Operation;
import org.eclipse.microprofile.openapi.annotations.media.Content;
import org.eclipse.microprofile.openapi.annotations.media.Schema;
import org.eclipse.microprofile.openapi.annotations.parameters.Parameter;
import org.eclipse.microprofile.openapi.annotations.responses.APIResponse;
import org.eclipse.microprofile.openapi.annotations.tags.Tag;

/**
 * {@code GET /requests/{requestId}}: where a request is. A recorded terminal event (the {@link ResultLedger}) says
 * {@code completed} or {@code failed}; else the requests this worker holds ({@link RequestStates}) say {@code queued}
 * or {@code calling} (a queued one with its place and estimate, {@link Standings}); else {@code unknown} (404), with
 * what this replica can tell of the others. The holding is read before and after the record, so that a request
 * held when the query comes and ending during the lookup (recorded after the read, let go before the second look) is
 * still answered with where it was, not {@code unknown}.
 *
 * <p>Non-blocking: the id is checked against the contract's rule first (a malformed one is refused with 400 and no
 * read), the record is read with the asynchronous S3 client within {@link #LOOKUP_WAIT}, and a store that cannot be
 * read is answered with 503 and a body saying so.
 *
 * <p>On the port of health and metrics; unauthenticated with declared producers. Its reads are bounded ({@link
 * StatusLookups}: at most {@code IMAGE_WORKER_STATUS_MAX_LOOKUPS} at once, one beyond them answered 429 with {@code
 * Retry-After}, the last terminal events read kept), so that the pipeline's own ledger lookups come first; and a
 * completed request's presigned URL is given only with {@code IMAGE_WORKER_STATUS_PRESIGNED_URLS=true}.
 *
 * <p>With producers taken from their topics ({@code IMAGE_WORKER_PRODUCER_IDENTITY=topic}, issue 49) a query needs a
 * producer's credential ({@link StatusCallers}; 401 without, nothing read), and sees that producer's requests only:
 * the record of {@code <producer>/<requestId>}, the requests held here under that name; {@code ?producer=} naming
 * another producer reads as an unknown id, with nothing read. Each producer's queries have a bound of lookups of their
 * own, so that one producer's flood is refused while another's queries pass.
 */
@Path("/requests")
@Tag(name = "requests", description = "The status of an image request, by its requestId")
public class RequestStatusResource {

    /** The longest a status query waits for the store before it answers 503. */
    static final Duration LOOKUP_WAIT = Duration.ofSeconds(5);

    /** How long a client refused for too many queries at once is asked to wait. */
    static final Duration BUSY_WAIT = Duration.ofSeconds(1);

    private final StatusLookups lookups;
    private final RequestStates states;
    private final Standings standings;
    private final StatusSettings config;
    private final StatusCallers callers;

    RequestStatusResource(
            StatusLookups lookups,
            RequestStates states,
            Standings standings,
            StatusSettings config,
            StatusCallers callers) {
        this.callers = callers;
        this.lookups = lookups;
        this.states = states;
        this.standings = standings;
        this.config = config;
    }

    @GET
    @Path("/{requestId}")
    @Produces(MediaType.APPLICATION_JSON)
    @NonBlocking
    @Operation(
            summary = "The status of a request",
            description = "Answered from the result ledger (completed, failed) and from the requests this worker"
                    + " holds (queued, calling). A queued request carries its position among its producer's requests"
                    + " waiting on this replica and an estimate of when its first call leaves, from this replica's"
                    + " recent rate of calls and its producer's share (queue). A request held by another replica and"
                    + " not recorded yet reads unknown here, with the partitions this replica owns (replica).")
    @APIResponse(
            responseCode = "200",
            description = "queued, calling, completed (with the stored image) or failed (with the error)",
            content = @Content(schema = @Schema(implementation = RequestStatus.class)))
    @APIResponse(
            responseCode = "404",
            description = "unknown: no record, and this worker does not hold it (replica and note say whether another"
                    + " replica may)",
            content = @Content(schema = @Schema(implementation = RequestStatus.class)))
    @APIResponse(
            responseCode = "401",
            description = "UNAUTHENTICATED: with IMAGE_WORKER_PRODUCER_IDENTITY=topic, the query carries no producer's"
                    + " credential (Authorization: Bearer <its IMAGE_WORKER_STATUS_TOKENS token>, or the header of"
                    + " IMAGE_WORKER_STATUS_PRODUCER_HEADER set by an ingress); nothing is read",
            content = @Content(schema = @Schema(implementation = Problem.class)))
    @APIResponse(
            responseCode = "400",
            description = "INVALID_REQUEST_ID: the id breaks the contract's rule",
            content = @Content(schema = @Schema(implementation = Problem.class)))
    @APIResponse(
            responseCode = "500",
            description = "RECORD_UNREADABLE: the request's record cannot be read as an event",
            content = @Content(schema = @Schema(implementation = Problem.class)))
    @APIResponse(
            responseCode = "503",
            description = "STORE_UNAVAILABLE: the result store cannot be read now; ask again (Retry-After)",
            content = @Content(schema = @Schema(implementation = Problem.class)))
    @APIResponse(
            responseCode = "429",
            description = "TOO_MANY_QUERIES: as many status queries as allowed read the store now"
                    + " (IMAGE_WORKER_STATUS_MAX_LOOKUPS, per producer with IMAGE_WORKER_PRODUCER_IDENTITY=topic); ask"
                    + " again (Retry-After)",
            content = @Content(schema = @Schema(implementation = Problem.class)))
    public Uni<Response> status(
            @Parameter(
                            description = "The request's id",
                            schema = @Schema(pattern = "^[A-Za-z0-9._:-]{1,128}$", maxLength = RequestId.MAX_LENGTH))
                    @PathParam("requestId")
                    String requestId,
            @Parameter(
                            description = "The request's producer, when the producer is taken from the topic"
                                    + " (IMAGE_WORKER_PRODUCER_IDENTITY=topic, where a requestId is unique within its"
                                    + " producer): optional, the credential's producer; any other reads as unknown."
                                    + " Ignored otherwise",
                            schema = @Schema(pattern = "^[A-Za-z0-9._-]{1,64}$", maxLength = 64))
                    @QueryParam("producer")
                    String producer,
            @Context HttpHeaders headers) {
        String scope = null;
        if (callers.required()) {
            // Producers taken from their topics: the credential names the producer, before anything else is read.
            Optional<String> caller = callers.producer(
                    headers.getHeaderString(HttpHeaders.AUTHORIZATION),
                    callers.header().map(headers::getHeaderString).orElse(null));
            if (caller.isEmpty()) {
                return Uni.createFrom()
                        .item(Response.status(Response.Status.UNAUTHORIZED)
                                .type(MediaType.APPLICATION_JSON_TYPE)
                                .header(HttpHeaders.WWW_AUTHENTICATE, "Bearer realm=\"image-worker\"")
                                .entity(new Problem("UNAUTHENTICATED", callers.how()))
                                .build());
            }
            scope = caller.get();
        }
        if (!RequestId.isValid(requestId)) {
            return Uni.createFrom()
                    .item(answer(
                            Response.Status.BAD_REQUEST,
                            new Problem("INVALID_REQUEST_ID", "a requestId is " + RequestId.RULE)));
        }
        if (scope != null && producer != null && !producer.equals(scope)) {
            // Another producer's request: read as an unknown id, with nothing read of it.
            return Uni.createFrom().item(answer(Response.Status.NOT_FOUND, standings.unknown(requestId)));
        }
        String stored = ImageRequest.scopedId(scope, requestId);
        String caller = scope == null ? StatusLookups.ANYONE : scope;
        Optional<RequestStates.State> before = states.of(stored);
        return lookups.find(caller, stored)
                .ifNoItem()
                .after(LOOKUP_WAIT)
                .fail()
                .onItemOrFailure()
                .transform((recorded, failure) ->
                        failure == null ? status(requestId, stored, recorded, before) : unreadable(requestId, failure));
    }

    private Response status(
            String requestId, String stored, Optional<TerminalEvent> recorded, Optional<RequestStates.State> before) {
        if (recorded.isPresent()) {
            return answer(Response.Status.OK, RequestStatus.recorded(recorded.get(), config.presignedUrls()));
        }
        return states.of(stored)
                .or(() -> before)
                .map(state -> answer(Response.Status.OK, standings.held(requestId, stored, state)))
                .orElseGet(() -> answer(Response.Status.NOT_FOUND, standings.unknown(requestId)));
    }

    private static Response unreadable(String requestId, Throwable failure) {
        if (failure instanceof StatusLookups.TooManyLookups) {
            return askAgain(
                    Response.Status.TOO_MANY_REQUESTS,
                    BUSY_WAIT,
                    new Problem(
                            "TOO_MANY_QUERIES",
                            "as many status queries as allowed read the result store now; ask again"));
        }
        if (failure instanceof RequestFailure unreadableRecord) {
            return answer(
                    Response.Status.INTERNAL_SERVER_ERROR,
                    new Problem("RECORD_UNREADABLE", unreadableRecord.getMessage()));
        }
        Log.warnf("[%s] status query: the result store cannot be read: %s", requestId, failure.toString());
        return askAgain(
                Response.Status.SERVICE_UNAVAILABLE,
                LOOKUP_WAIT,
                new Problem(
                        "STORE_UNAVAILABLE",
                        "the result store cannot be read now, so the status is not known; ask again"));
    }

    /** {@code problem} with {@code status}, and {@code Retry-After} saying when to ask again. */
    private static Response askAgain(Response.Status status, Duration after, Problem problem) {
        return Response.status(status)
                .type(MediaType.APPLICATION_JSON_TYPE)
                .header("Retry-After", after.toSeconds())
                .entity(problem)
                .build();
    }

    private static Response answer(Response.Status status, Object body) {
        return Response.status(status)
                .type(MediaType.APPLICATION_JSON_TYPE)
                .entity(body)
                .build();
    }
}
