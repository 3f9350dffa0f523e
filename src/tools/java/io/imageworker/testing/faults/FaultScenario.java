package io.imageworker.testing.faults;

import io.imageworker.testing.gateway.Latency;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

/**
 * What a fault run does: how many requests it publishes and over how long, how the gateway behaves, which faults are
 * injected continuously, and the incidents on its timeline (offsets from the first request). {@link #full()} is
 * {@code ./mvnw -Pfaults}; {@link #ci()} is the subset {@code FaultSuiteIT} runs in {@code ./mvnw verify}.
 *
 * @param name printed in the report
 * @param requests generate requests published, evenly spread over {@code publishOver}
 * @param publishOver time from the first request to the last
 * @param concurrency {@code IMAGE_WORKER_CONCURRENCY}: the limit the gateway's peak is held to
 * @param latency the simulated gateway's time per image call
 * @param urlRatio share of successes answered with a {@code url} instead of {@code b64_json}
 * @param faultEveryCalls one image call in this many takes a fault from the {@link FaultMix}; zero for none
 * @param gatewayTimeout {@code IMAGE_WORKER_GATEWAY_TIMEOUT}: how long a hung call lasts
 * @param probeInterval {@code IMAGE_WORKER_GATEWAY_PROBE_INTERVAL}: how soon a paused worker sees a restored token
 * @param settleTimeout after the last incident, how long every request has to reach its terminal event
 * @param seed seed of the fault mix's choices (the timing still varies from run to run)
 * @param timeline the incidents, each at its offset
 */
public record FaultScenario(
        String name,
        int requests,
        Duration publishOver,
        int concurrency,
        Latency latency,
        double urlRatio,
        int faultEveryCalls,
        Duration gatewayTimeout,
        Duration probeInterval,
        Duration settleTimeout,
        long seed,
        List<Incident> timeline) {

    public FaultScenario {
        Objects.requireNonNull(name, "name");
        if (requests < 1 || concurrency < 1) {
            throw new IllegalArgumentException("requests and concurrency must be at least 1");
        }
        timeline = timeline.stream().sorted(Comparator.comparing(Incident::at)).toList();
    }

    /**
     * The whole suite, about three minutes: 300 requests over 150 s at concurrency 16, a gateway taking 0.5 to 2 s,
     * half the answers as URLs, one call in six with a fault (5xx, hangs, truncated bodies, expired URLs), and on the
     * timeline: a storm of 20 upstream 429 without {@code Retry-After}, the worker killed with SIGKILL and restarted,
     * the broker stopped for 10 s, a 429 storm from a concurrency cap of 2 with {@code Retry-After} while the backlog
     * drains, a storm of 15 upstream 429 with {@code Retry-After}, the store down for 30 s, the token revoked for
     * 12 s, a second SIGKILL and a third (with {@code -Dfaults.publish-over-s} long enough, in the middle of the
     * backlog).
     */
    public static FaultScenario full() {
        return new FaultScenario(
                "full",
                300,
                Duration.ofSeconds(150),
                16,
                Latency.uniform(Duration.ofMillis(500), Duration.ofMillis(2_000)),
                0.5,
                6,
                Duration.ofSeconds(8),
                Duration.ofSeconds(2),
                Duration.ofMinutes(5),
                5,
                List.of(
                        new Incident.RateLimitBurst(seconds(12), 20, 0),
                        new Incident.WorkerKill(seconds(25)),
                        new Incident.BrokerOutage(seconds(45), seconds(10)),
                        // Right after the broker is back, when the backlog pushes the calls in flight up.
                        new Incident.RateLimitCap(seconds(57), seconds(10), 2, 1),
                        new Incident.RateLimitBurst(seconds(69), 15, 2),
                        new Incident.StoreOutage(seconds(75), seconds(30)),
                        new Incident.TokenRevoked(seconds(115), seconds(12), seconds(35)),
                        new Incident.WorkerKill(seconds(140)),
                        new Incident.WorkerKill(seconds(170))));
    }

    /**
     * The subset run by {@code ./mvnw verify}, under two minutes: 60 requests over 30 s at concurrency 8, a gateway
     * taking 0.3 to 1.2 s, one call in four with a fault, 429 storms (a concurrency cap with {@code Retry-After}, a
     * burst without), one SIGKILL, the broker stopped for 5 s, the token revoked for 6 s and the store down for 8 s.
     */
    public static FaultScenario ci() {
        return new FaultScenario(
                "ci",
                60,
                Duration.ofSeconds(30),
                8,
                Latency.uniform(Duration.ofMillis(300), Duration.ofMillis(1_200)),
                0.5,
                4,
                Duration.ofSeconds(4),
                Duration.ofSeconds(1),
                Duration.ofMinutes(3),
                7,
                List.of(
                        new Incident.RateLimitCap(seconds(2), seconds(4), 2, 1),
                        new Incident.WorkerKill(seconds(7)),
                        new Incident.RateLimitBurst(seconds(11), 6, 0),
                        new Incident.BrokerOutage(seconds(16), seconds(5)),
                        new Incident.TokenRevoked(seconds(23), seconds(6), seconds(25)),
                        new Incident.StoreOutage(seconds(32), seconds(8))));
    }

    /**
     * {@link #full()} with the sizes given as system properties: {@code faults.requests},
     * {@code faults.publish-over-s}, {@code faults.concurrency}, {@code faults.latency-min-ms},
     * {@code faults.latency-max-ms}, {@code faults.fault-every-calls} (0: no continuous faults), {@code faults.seed}.
     * The timeline stays as it is.
     */
    public static FaultScenario fromSystemProperties() {
        FaultScenario s = full();
        Latency latency = Latency.uniform(
                Duration.ofMillis(
                        Long.getLong("faults.latency-min-ms", s.latency().min().toMillis())),
                Duration.ofMillis(
                        Long.getLong("faults.latency-max-ms", s.latency().max().toMillis())));
        return new FaultScenario(
                s.name(),
                Integer.getInteger("faults.requests", s.requests()),
                Duration.ofSeconds(
                        Long.getLong("faults.publish-over-s", s.publishOver().toSeconds())),
                Integer.getInteger("faults.concurrency", s.concurrency()),
                latency,
                s.urlRatio(),
                Integer.getInteger("faults.fault-every-calls", s.faultEveryCalls()),
                s.gatewayTimeout(),
                s.probeInterval(),
                s.settleTimeout(),
                Long.getLong("faults.seed", s.seed()),
                s.timeline());
    }

    /** When the last incident is over, by the plan (the time a killed worker takes to be ready is not counted). */
    public Duration timelineEnd() {
        Duration end = Duration.ZERO;
        for (Incident incident : timeline) {
            Duration over = incident.at().plus(incident.length());
            end = over.compareTo(end) > 0 ? over : end;
        }
        return end;
    }

    /** A one-line description of the timeline, for the report. */
    public List<String> describeTimeline() {
        List<String> lines = new ArrayList<>();
        for (Incident incident : timeline) {
            lines.add(String.format("t=%3ds %s", incident.at().toSeconds(), incident.describe()));
        }
        return lines;
    }

    private static Duration seconds(long value) {
        return Duration.ofSeconds(value);
    }

    /** Something that happens to the worker or to what it depends on, at an offset from the first request. */
    public sealed interface Incident {

        /** When it starts, from the first request. */
        Duration at();

        /** How long it lasts; zero for an instant one. */
        default Duration length() {
            return Duration.ZERO;
        }

        /** What it is, for the report. */
        String describe();

        /** The worker is killed with SIGKILL and started again at once (it is ready some seconds later). */
        record WorkerKill(Duration at) implements Incident {
            @Override
            public String describe() {
                return "worker killed with SIGKILL (kill -9), then started again";
            }
        }

        /** The broker is stopped (SIGTERM) and started again after {@code length}. */
        record BrokerOutage(Duration at, Duration length) implements Incident {
            @Override
            public String describe() {
                return "Kafka broker stopped for " + length.toSeconds() + " s, then started again";
            }
        }

        /** The object store is stopped and started again after {@code length}. */
        record StoreOutage(Duration at, Duration length) implements Incident {
            @Override
            public String describe() {
                return "object store stopped for " + length.toSeconds() + " s, then started again";
            }
        }

        /**
         * The token answers 401 for {@code length}, then is restored. It is revoked at {@code at}, or later, as soon
         * as a call is in flight (a worker still restarting or waiting for the broker makes none, and a revocation no
         * call meets tests nothing), and it is restored only once a call was answered 401 (longer than {@code
         * length} when the worker's next call comes late). No fault is injected from 2 s before until {@code quietAfter} after the restore,
         * so that what the requests caught by the revocation end with is the revocation's doing alone; a timeline whose
         * other steps are over sooner ends without waiting for the resume (the injection ends with the timeline).
         */
        record TokenRevoked(Duration at, Duration length, Duration quietAfter) implements Incident {
            @Override
            public String describe() {
                return "token revoked (401 on every call) for " + length.toSeconds() + " s, then restored";
            }
        }

        /** The gateway answers 429 at once to calls above {@code cap} in flight, for {@code length}. */
        record RateLimitCap(Duration at, Duration length, int cap, int retryAfterSeconds) implements Incident {
            @Override
            public String describe() {
                return "429 storm: calls above " + cap + " in flight refused for " + length.toSeconds() + " s"
                        + (retryAfterSeconds > 0 ? ", Retry-After " + retryAfterSeconds + " s" : ", no Retry-After");
            }
        }

        /**
         * Not planned: the run's supervisor killed and restarted a worker that was not live, as Kubernetes' liveness
         * probe would. Never part of a scenario's timeline.
         */
        record LivenessRestart(Duration at) implements Incident {
            @Override
            public String describe() {
                return "worker restarted by the supervisor because it was not live";
            }
        }

        /** The next {@code count} calls get an upstream 429 after the latency. */
        record RateLimitBurst(Duration at, int count, int retryAfterSeconds) implements Incident {
            @Override
            public String describe() {
                return "429 storm: the next " + count + " calls answered 429"
                        + (retryAfterSeconds > 0
                                ? " with Retry-After " + retryAfterSeconds + " s"
                                : ", no Retry-After");
            }
        }
    }
}
