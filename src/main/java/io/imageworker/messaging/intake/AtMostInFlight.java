package io.imageworker.messaging.intake;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import io.smallrye.mutiny.subscription.MultiSubscriber;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Flow;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Handles each item of a stream, at most {@code width} at once: {@code width} items requested at first, one more as
 * each handling ends. What Mutiny's {@code transformToUni(...).merge(width)} did for the lanes, at a constant cost per
 * item: the merge looks through all of its {@code width} inner streams at every completion (its drain loop), and with
 * thousands read ahead that scan was a sixth of the worker's samples while it parked a backlog.
 *
 * <p>A handling that fails ends the stream as the merge did: the upstream is cancelled, the handlings still running are
 * cancelled, and {@code failed} is told once. {@link #cancel()} cancels the upstream and the handlings still running.
 * Requests go upstream one caller at a time (Reactive Streams 2.7), whichever thread ends a handling.
 */
final class AtMostInFlight<T> implements MultiSubscriber<T>, Cancellable {

    private final int width;
    private final Function<T, Uni<Void>> handler;
    private final Consumer<Throwable> failed;
    private final AtomicReference<Flow.Subscription> upstream = new AtomicReference<>();
    /** Handlings running, to cancel with the stream. */
    private final Set<Cancellable> running = ConcurrentHashMap.newKeySet();
    /** Items to request once the caller requesting now is done; the one that raised it from 0 requests. */
    private final AtomicLong toRequest = new AtomicLong();

    /** Cancelled, or failed: nothing more is requested or handled. */
    private final AtomicBoolean stopped = new AtomicBoolean();

    /**
     * @param width most items handled at once
     * @param handler the handling of one item, ended when its {@code Uni} ends
     * @param failed told of the first failure of the stream or of a handling, once
     */
    AtMostInFlight(int width, Function<T, Uni<Void>> handler, Consumer<Throwable> failed) {
        if (width < 1) {
            throw new IllegalArgumentException("width must be at least 1: " + width);
        }
        this.width = width;
        this.handler = handler;
        this.failed = failed;
    }

    @Override
    public void onSubscribe(Flow.Subscription subscription) {
        if (!upstream.compareAndSet(null, subscription)) {
            subscription.cancel();
            return;
        }
        request(width);
    }

    @Override
    public void onItem(T item) {
        if (stopped.get()) {
            return;
        }
        Uni<Void> handling;
        try {
            handling = handler.apply(item);
        } catch (RuntimeException e) {
            fail(e);
            return;
        }
        Handling one = new Handling();
        running.add(one);
        one.cancellable = handling.subscribe().with(ignored -> one.ended(null), one::ended);
        if (stopped.get()) {
            // Stopped while it was being subscribed: cancelled with the others.
            one.cancel();
        }
    }

    @Override
    public void onFailure(Throwable failure) {
        fail(failure);
    }

    @Override
    public void onCompletion() {
        // The handlings still running go on to their end.
    }

    @Override
    public void cancel() {
        if (stopped.compareAndSet(false, true)) {
            cancelAll();
        }
    }

    /** Handlings running now, for the tests. */
    int running() {
        return running.size();
    }

    private void fail(Throwable failure) {
        if (stopped.compareAndSet(false, true)) {
            cancelAll();
            failed.accept(failure);
        }
    }

    private void cancelAll() {
        Flow.Subscription subscription = upstream.get();
        if (subscription != null) {
            subscription.cancel();
        }
        running.forEach(Cancellable::cancel);
        running.clear();
    }

    /** Requests {@code count} more, serially: a caller that finds a request under way leaves its count to that one. */
    private void request(long count) {
        if (toRequest.getAndAdd(count) != 0) {
            return;
        }
        long requesting = count;
        do {
            if (!stopped.get()) {
                upstream.get().request(requesting);
            }
            requesting = toRequest.addAndGet(-requesting);
        } while (requesting != 0);
    }

    /** One item's handling: on its end (told once, as a {@code Uni} ends once), its place goes to the next item. */
    private final class Handling implements Cancellable {
        private volatile Cancellable cancellable;

        void ended(Throwable failure) {
            running.remove(this);
            if (failure != null) {
                fail(failure);
            } else {
                request(1);
            }
        }

        @Override
        public void cancel() {
            Cancellable handling = cancellable;
            if (handling != null) {
                handling.cancel();
            }
        }
    }
}
