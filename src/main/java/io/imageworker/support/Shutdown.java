package io.imageworker.support;

import jakarta.enterprise.context.ApplicationScoped;

/**
 * The rule for requests still running when the shutdown grace is over: they start no more gateway calls, and none of
 * them ends as a failure, recorded or published. A failure then may be the shutdown's own doing (clients closing
 * under a call), and a recorded one would be replayed to the next worker as the request's outcome. A success is
 * still stored and recorded, which spares the next worker a second billed call. Such requests end with
 * {@link AbandonedException}, so their records are left for redelivery.
 */
@ApplicationScoped
public class Shutdown {

    private volatile boolean abandoned;

    /** Called when the shutdown grace is over. */
    public void abandonUnfinished() {
        abandoned = true;
    }

    /** Whether the grace is over: no new gateway call may start. */
    public boolean abandoned() {
        return abandoned;
    }
}
