package io.imageworker.messaging.intake;

import io.imageworker.contract.ImageRequest;
import io.imageworker.contract.Lane;
import io.imageworker.messaging.offsets.InFlight;
import io.imageworker.messaging.offsets.RecordCopy;
import io.imageworker.progress.RequestEvents;
import io.imageworker.progress.RequestsInProgress;
import io.imageworker.support.AbandonedException;
import io.imageworker.turns.FairTurns;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.Collection;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.function.Supplier;
import org.apache.kafka.common.TopicPartition;
import org.eclipse.microprofile.reactive.messaging.Message;

/**
 * The read-ahead of each lane (contract v1.2, fair shares): records are taken from Kafka beyond the requests in
 * progress and wait for their turn, so that one producer's backlog sitting in the partitions before another's requests
 * does not hold them back. This class coordinates each record taken: whether it is parked, when it goes into progress
 * ({@link Admission}: its partition's window, its producer's turn, its bytes bounded meanwhile), how it steps aside for
 * its producer's cap once in progress ({@link SteppingAside}), and what a status query reads of it meanwhile.
 *
 * <p>Each lane takes up to {@code IMAGE_WORKER_MAX_IN_PROGRESS} + {@code IMAGE_WORKER_READ_AHEAD} records at once (its
 * places, {@link AtMostInFlight}). A record taken waits for a place in progress ({@code IMAGE_WORKER_MAX_IN_PROGRESS}
 * of them per lane, as before). A waiting record holds its bytes and nothing else: no ledger lookup, no reference read,
 * no memory budget, no call slot; only once in progress does it do what a request did before.
 *
 * <p>Commits stay correct: a waiting record is started in {@code offsets.PartitionWork} as soon as it is taken (the committed
 * offset never passes it), but a revocation does not wait for it ({@link InFlight.Run#waiting}): it is left to the
 * partition's next owner, leaves its producer's line at once ({@link #released}), and if its turn comes after that it
 * is dropped unacknowledged. The time it waits for its turn
 * does not count as a stuck record (the commit strategy). At shutdown a record still waiting ends at its turn at
 * once, unacknowledged, and is redelivered.
 *
 * <p>Parking (fair shares at any backlog, {@link #parkedOrInTurn}): a record of the request topic beyond its
 * partition's window, or of a producer that has its share waiting already ({@link ParkingDecision}, decided in {@code
 * messaging.parking.Parking}), takes no place here: the
 * consumer parks it (its copy to the parked topic, committed with its offset), and it comes back from the parked topic
 * to take its turn like any other. A copy of a request parked here lately is parked too, after the first copy, so
 * that one replica reads both.
 */
@ApplicationScoped
public class ReadAhead {

    /**
     * The requests in progress: those waiting for their turn are told there ({@link RequestsInProgress#readAhead}, by
     * this class alone) and stand in their producers' lines until their turn, their end, or at once when their
     * partition goes to another worker ({@link #released}).
     */
    private final RequestsInProgress progress;

    /** When a record goes into progress: its window, its turn, its bytes meanwhile. */
    private final Admission admission;
    /** The requests in progress, as they step aside for their producer's cap. */
    private final SteppingAside aside;
    /** Where the status read model hears of each request queued in its producer's line. */
    private final RequestEvents events;
    /** Which records offered for parking are parked instead of read ahead ({@code messaging.parking.Parking}). */
    private final ParkingDecision parking;

    /**
     * Records go into progress as {@code admission} admits them and step aside as {@code aside} has them; their
     * requests wait for their turn in {@code progress}, queued in their producers' lines as told to {@code events},
     * until their turn, or until {@code inFlight} releases their partition; the records offered for parking are
     * parked as {@code parking} says.
     */
    @Inject
    ReadAhead(
            Admission admission,
            SteppingAside aside,
            InFlight inFlight,
            RequestsInProgress progress,
            RequestEvents events,
            ParkingDecision parking) {
        this.admission = admission;
        this.progress = progress;
        this.aside = aside;
        this.events = events;
        this.parking = parking;
        inFlight.whenReleased(this::released);
    }

    /**
     * A rebalance took {@code partitions} away: the requests of theirs waiting for their turn are their new owner's
     * now, so they leave their producers' lines and read queued here no more at once, not at their turn, which may
     * come long after (behind a deep read-ahead, or a producer held by its cap). Each still ends at its turn, given
     * up ({@link GivenUp}).
     */
    void released(Collection<TopicPartition> partitions) {
        progress.leaveLines(partitions);
    }

    /**
     * A record taken from {@code lane} as it asks for its turn: its message (for the bytes it holds), its copy in
     * {@code offsets.PartitionWork} and its run there; and, for a request, its id and its {@link Producer} (of a type of
     * its own, so that the two cannot be swapped); {@link #notARequest} for a record that is none.
     */
    public record Asking(
            Lane lane,
            Message<byte[]> message,
            RecordCopy record,
            InFlight.Run run,
            String requestId,
            Producer producer) {

        /** A record that is no request (its turn is the default producer's). */
        public static Asking notARequest(Lane lane, Message<byte[]> message, RecordCopy record, InFlight.Run run) {
            return new Asking(lane, message, record, run, null, Producer.DEFAULT);
        }
    }

    /** The producer whose turns a record waits for: the one it names, or the default one when it names none. */
    public record Producer(String name) {

        /** The producer of the records that name none. */
        public static final Producer DEFAULT = new Producer(ImageRequest.DEFAULT_PRODUCER);

        /** {@code name}, or the default producer when it is null. */
        public static Producer of(String name) {
            return name == null ? DEFAULT : new Producer(name);
        }
    }

    /**
     * {@code park} of the record {@code asking} at once, without a turn, when it is to be parked ({@link ParkingDecision}:
     * beyond its partition's window, its producer has its share waiting already, or it is a copy of a request parked
     * here lately); else {@code work} in its turn,
     * as {@link #inTurn(Asking, Supplier)}. {@code park} holds the record's bytes until it ends, nothing else.
     */
    public <T> Uni<T> parkedOrInTurn(Asking asking, Supplier<Uni<T>> park, Supplier<Uni<T>> work) {
        return parkedOrInTurn(asking, park, null, work);
    }

    /**
     * {@link #parkedOrInTurn(Asking, Supplier, Supplier)}, but {@code unparkable} instead of {@code park} when it is
     * not null and the record is to be parked: its copy would be larger than Kafka takes ({@code
     * parking.RequestParking#tooLargeToPark}), so it is answered at once, without a turn, as a park would have been
     * done; it is not counted as parked. A record that is not to be parked goes in its turn as ever.
     */
    public <T> Uni<T> parkedOrInTurn(
            Asking asking, Supplier<Uni<T>> park, Supplier<Uni<T>> unparkable, Supplier<Uni<T>> work) {
        String why = whyParked(asking);
        if (why == null) {
            return inTurn(asking, work);
        }
        Held bytesHeld = admission.bytesHeld(asking.lane(), asking.message());
        if (unparkable != null) {
            return Uni.createFrom().<T>deferred(unparkable::get).onTermination().invoke(bytesHeld::giveBack);
        }
        String requestId = asking.requestId();
        // Known by its name: <producer>/<requestId> where ids are unique within their producer.
        String name = requestId == null ? null : progress.name(asking.producer().name(), requestId);
        return Uni.createFrom()
                .<T>deferred(() -> {
                    parking.underWay(name);
                    return park.get();
                })
                .invoke(() -> parking.parked(name, why))
                .onTermination()
                .invoke(() -> {
                    parking.over(name);
                    bytesHeld.giveBack();
                });
    }

    /**
     * Why the record {@code asking} is parked ({@link ParkingDecision#why}), or null when it goes in its turn. The
     * request is named by its name ({@link RequestsInProgress#name}): in topic mode another producer's request of the id is
     * another request.
     */
    private String whyParked(Asking asking) {
        String requestId = asking.requestId();
        return parking.why(
                asking.record(),
                requestId == null ? null : progress.name(asking.producer().name(), requestId),
                admission.waiting(asking.lane(), asking.producer().name()));
    }

    /**
     * {@code work} of the record {@code asking}, once it is its turn; the record waits meanwhile, without counting as
     * stuck ({@link InFlight.Run#waiting}). Fails with {@link GivenUp} instead when, by its turn, the worker drains or
     * the record's partition was given to another worker. While it runs, the request can give its place back while
     * its producer's cap holds it ({@link SteppingAside#of(String)}).
     */
    public <T> Uni<T> inTurn(Asking asking, Supplier<Uni<T>> work) {
        String requestId = asking.requestId();
        String name = requestId == null ? null : progress.name(asking.producer().name(), requestId);
        InFlight.Run run = asking.run();
        Held bytesHeld = admission.bytesHeld(asking.lane(), asking.message());
        Held queued = requestId == null ? Held.NOTHING : new Held(() -> progress.turnCame(name));
        Held lineHeld = inLine(asking, queued);
        run.waiting();
        AtomicReference<Held> placed = new AtomicReference<>(Held.NOTHING);
        Function<FairTurns.Turn, Uni<T>> goIntoProgress = turn -> {
            progress.outOfLine(run);
            bytesHeld.giveBack();
            queued.giveBack();
            run.admitted();
            if (!run.mayGoOn()) {
                return Uni.createFrom()
                        .failure(new GivenUp(
                                asking.record(),
                                "the worker drains, or its partition went to another worker meanwhile"));
            }
            // By the request's name: two producers' requests of one id are two places (topic mode).
            placed.set(aside.placed(name, turn, run));
            return work.get()
                    .onFailure(failure -> failure instanceof AbandonedException && run.mayGoOn())
                    .recoverWithUni(failure -> {
                        // It shared the work of a copy given up here (its partition released in a rebalance that
                        // gave this copy's back): this copy may still go on, so it runs the request again, once.
                        RecordCopy record = asking.record();
                        Log.infof(
                                "Record %s-%d@%d shared the work of a copy of its request given up here; it runs it"
                                        + " again",
                                record.topic(), record.partition(), record.offset());
                        return work.get();
                    });
        };
        // Its turn is asked for once its partition's window reaches it; meanwhile it waits as read ahead.
        return admission
                .inTurn(asking.lane(), asking.record(), asking.producer().name(), goIntoProgress)
                .onTermination()
                .invoke(() -> {
                    progress.outOfLine(run);
                    bytesHeld.giveBack();
                    queued.giveBack();
                    lineHeld.giveBack();
                    run.admitted();
                    placed.get().giveBack();
                });
    }

    /**
     * The request of {@code asking} joins its producer's line, for a status query, and reads queued ({@code queued}
     * gives that back): it stands in its line until its first call leaves or it ends, or its partition goes to another
     * worker while it waits for its turn ({@link #released}). What takes it out of its line is returned.
     */
    private Held inLine(Asking asking, Held queued) {
        String requestId = asking.requestId();
        if (requestId == null) {
            return Held.NOTHING;
        }
        // Known by its name: <producer>/<requestId> where ids are unique within their producer.
        String name = progress.name(asking.producer().name(), requestId);
        Held line =
                new Held(events.queued(name, asking.lane(), asking.producer().name()));
        progress.readAhead(name);
        progress.inLine(asking.run(), () -> {
            queued.giveBack();
            line.giveBack();
        });
        return line;
    }

    /**
     * A record whose turn came when it could no longer run here: left unacknowledged, for its redelivery (drain) or
     * its partition's new owner. Not an outcome.
     */
    public static final class GivenUp extends RuntimeException {
        private static final long serialVersionUID = 1L;

        GivenUp(RecordCopy context, String why) {
            super(
                    "Record " + context.topic() + "-" + context.partition() + "@" + context.offset()
                            + " was waiting for its turn when " + why + "; it is left unacknowledged",
                    null,
                    false,
                    false);
        }
    }
}
