package io.imageworker.gateway;

import io.imageworker.support.BoundedBody;
import io.smallrye.mutiny.TimeoutException;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.smallrye.mutiny.subscription.UniEmitter;
import io.vertx.mutiny.core.Vertx;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The deadline of one gateway call ({@code IMAGE_WORKER_GATEWAY_TIMEOUT}), which waiting for memory never runs down:
 *
 * <ul>
 *   <li>from the moment the call is sent until its answer's headers come in, the whole timeout;
 *   <li>while the answer waits, paused, for the memory budget to admit its bytes, none: the gateway has answered and
 *       billed the call, and a shortage of memory must not turn into a failed call (the budget always progresses: the
 *       answers admitted before it are read, stored and give their bytes back);
 *   <li>from the admission on, the whole timeout again, to read the body.
 * </ul>
 *
 * <p>When it passes, the exchange is reset ({@link BoundedBody#abort}: its connection closed, nothing more read) and the
 * call fails with a {@link TimeoutException}. One timer per call at a time, on Vert.x's timer wheel; no thread waits.
 */
final class CallDeadline<T> {

    private final Vertx vertx;
    private final BoundedBody body;
    private final long timeoutNanos;
    private final long sentAt = System.nanoTime();
    private final AtomicBoolean over = new AtomicBoolean();
    private UniEmitter<? super T> emitter;
    private volatile Cancellable call;
    private volatile long timer = -1;

    private CallDeadline(Vertx vertx, BoundedBody body, Duration timeout) {
        this.vertx = vertx;
        this.body = body;
        this.timeoutNanos = timeout.toNanos();
    }

    /** {@code call}, whose answer is read through {@code body}, failed with a timeout when its deadline passes. */
    static <T> Uni<T> bound(Vertx vertx, Uni<T> call, BoundedBody body, Duration timeout) {
        return Uni.createFrom().emitter(emitter -> new CallDeadline<T>(vertx, body, timeout).start(emitter, call));
    }

    private void start(UniEmitter<? super T> emitter, Uni<T> sent) {
        this.emitter = emitter;
        emitter.onTermination(() -> {
            cancelTimer();
            if (over.compareAndSet(false, true)) {
                // Cancelled from downstream: the call's answer is no longer wanted.
                Cancellable subscription = call;
                if (subscription != null) {
                    subscription.cancel();
                }
            }
        });
        arm(timeoutNanos);
        call = sent.subscribe().with(this::completed, this::failed);
    }

    private void completed(T item) {
        if (over.compareAndSet(false, true)) {
            cancelTimer();
            emitter.complete(item);
        }
    }

    private void failed(Throwable failure) {
        if (over.compareAndSet(false, true)) {
            cancelTimer();
            emitter.fail(failure);
        }
    }

    private void arm(long nanos) {
        timer = vertx.setTimer(Math.max(1, nanos / 1_000_000), ignored -> check());
    }

    private void cancelTimer() {
        long id = timer;
        if (id >= 0) {
            vertx.cancelTimer(id);
        }
    }

    /** The timer rang: the call's time is up, unless it waits for memory or its body's own time runs. */
    private void check() {
        if (over.get()) {
            return;
        }
        long answered = body.answeredAt();
        long admitted = body.admittedAt();
        if (answered != 0 && admitted == 0) {
            // Answered, paused until the budget admits it: no time runs; looked at again later.
            arm(timeoutNanos);
            return;
        }
        long left = (admitted != 0 ? admitted : sentAt) + timeoutNanos - System.nanoTime();
        if (left > 0) {
            arm(left);
            return;
        }
        if (over.compareAndSet(false, true)) {
            TimeoutException timedOut = new TimeoutException();
            Cancellable subscription = call;
            if (subscription != null) {
                subscription.cancel();
            }
            body.abort(timedOut);
            emitter.fail(timedOut);
        }
    }
}
