package io.imageworker.gateway;

import io.imageworker.support.WorkerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Where the gateway calls that hold a slot of the {@link ConcurrencyLimiter} are, counted by stage and exported as
 * gauges: what a slot counts ({@code image_worker_gateway_calls_in_flight}) is not what the gateway sees, and the stages
 * tell the two apart.
 */
@ApplicationScoped
public class CallStages {

    /** A stage of a call in its slot. */
    public enum Stage {
        /** In its slot, waiting for the memory budget to grant its read window before it is sent. */
        WAITING_FOR_MEMORY_TO_SEND(
                "image_worker_gateway_calls_waiting_for_memory",
                "Gateway calls holding a slot, not sent yet: waiting for the memory budget to grant their read window"),
        /** Sent; no answer yet. */
        AWAITING_ANSWER(
                "image_worker_gateway_calls_awaiting_answer",
                "Gateway calls sent and not yet answered: what the gateway holds in flight from this worker"),
        /** Answered; its body paused on the wire until the memory budget admits its bytes. */
        ANSWER_WAITING_FOR_MEMORY(
                "image_worker_gateway_answers_waiting_for_memory",
                "Gateway answers whose headers came in, their body paused until the memory budget admits it"),
        /** Answered and admitted: its body being read and decoded. */
        READING(
                "image_worker_gateway_answers_reading",
                "Gateway answers admitted by the memory budget, being read and decoded"),
        /** Not in a slot: not counted. */
        ENDED(null, null);

        private final String gauge;
        private final String description;

        Stage(String gauge, String description) {
            this.gauge = gauge;
            this.description = description;
        }
    }

    private final Map<Stage, AtomicInteger> counts = new EnumMap<>(Stage.class);

    @Inject
    CallStages(MeterRegistry registry) {
        for (Stage stage : Stage.values()) {
            counts.put(stage, new AtomicInteger());
            if (stage.gauge != null) {
                WorkerMetrics.gauge(stage.gauge, this, stages -> stages.count(stage), stage.description)
                        .register(registry);
            }
        }
    }

    /** Stages of their own, with metrics nobody reads, for tests and tools. */
    public static CallStages unregistered() {
        return new CallStages(new SimpleMeterRegistry());
    }

    /** A call moves from {@code from} to {@code to} ({@link Stage#ENDED} for a call that enters or leaves a slot). */
    public void move(Stage from, Stage to) {
        if (from != to) {
            counts.get(to).incrementAndGet();
            counts.get(from).decrementAndGet();
        }
    }

    /** Calls in {@code stage} now; {@link Stage#ENDED} is not counted. */
    public int count(Stage stage) {
        return stage == Stage.ENDED ? 0 : counts.get(stage).get();
    }
}
