package io.imageworker.messaging.intake;

import io.imageworker.messaging.offsets.RecordCopy;

/**
 * Which records offered for parking are parked instead of read ahead, as the read-ahead asks it ({@link
 * ReadAhead#parkedOrInTurn}): decided and counted in {@code messaging.parking.Parking}, which implements this. The
 * read-ahead holds a parked record's bytes until its park ends, and tells the decision of each park's course, since
 * a copy of a request whose park is under way or was made lately is parked after it.
 */
public interface ParkingDecision {

    /** Parks nothing: every record goes in its turn. */
    ParkingDecision NEVER = new ParkingDecision() {
        @Override
        public String why(RecordCopy record, String requestId, int waitingOfProducer) {
            return null;
        }

        @Override
        public void underWay(String requestId) {}

        @Override
        public void parked(String requestId, String why) {}

        @Override
        public void over(String requestId) {}
    };

    /**
     * Why {@code record} is parked, or null when it is read ahead.
     *
     * @param requestId its request's id, or null when it is no request
     * @param waitingOfProducer records of its producer waiting for their turn now
     */
    String why(RecordCopy record, String requestId, int waitingOfProducer);

    /** The park of request {@code requestId} (null: a record that is no request) starts. */
    void underWay(String requestId);

    /** The park of {@code requestId} (null: none) for {@code why} is done: its copy and its offset committed. */
    void parked(String requestId, String why);

    /** The park of {@code requestId} (null: none) is over, done or not: it is under way no more. */
    void over(String requestId);
}
