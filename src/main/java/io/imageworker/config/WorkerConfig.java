package io.imageworker.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * The worker's own top-level settings, under the prefix {@code image-worker}: the limits, the graces, the producers...
 * Each property is also an environment variable ({@code image-worker.gateway.base-url} is {@code
 * IMAGE_WORKER_GATEWAY_BASE_URL}). The names of the product's configuration surface are fixed by the contract in
 * docs/configuration.md, wherever a setting is declared.
 *
 * <p>It holds no group: each group of settings is a mapping of the package that owns it, under {@code
 * image-worker.<group>}, injected by the classes that read it instead of this one: {@code gateway.GatewaySettings}
 * ({@code gateway}), {@code support.RetrySettings} ({@code retry}), {@code storage.StorageSettings} ({@code storage}),
 * {@code spend.BudgetSettings} ({@code budget}), {@code api.StatusSettings} ({@code status}), {@code
 * messaging.results.TransactionSettings} ({@code transactions}), {@code processing.CancelSettings} ({@code cancel}),
 * {@code reference.ReferenceSettings} ({@code reference}), {@code net.DownloadSettings} ({@code download}), {@code
 * console.ConsoleSettings} ({@code console}), {@code support.LogSettings} ({@code log}, which only
 * application.properties reads), and in this package {@link TopicSettings} ({@code topic}: the topic names, read from
 * the Kafka half up to the console). The layers keep this package below them all, so a default here that needs one of
 * them (the graces) takes its value as an argument. Take this mapping only to read one of its own settings ({@code
 * ArchitectureTest}). Most of its lines are the Javadoc of each setting, which docs/configuration.md follows. The
 * checks of the settings are in {@code health.ConfigurationCheck} (the console's in {@code
 * console.ConsoleSettingsCheck}), the parsed forms in {@link ProducerWeights}, {@link ProducerBudgets} and {@link
 * ProducerList}.
 */
@ConfigMapping(prefix = "image-worker")
public interface WorkerConfig {

    /** {@link #readAhead()} when not set. */
    int DEFAULT_READ_AHEAD = 5000;

    /** Most gateway calls in flight in this process at once (the ceiling of the adaptive limit). */
    @WithDefault("16")
    int concurrency();

    /**
     * Most requests in progress in this process at once, per lane: part of the places of each lane's request
     * stream (with the read-ahead: {@code messaging.intake.AtMostInFlight}). Requests beyond the gateway calls wait for a retry, the store or Kafka without holding a call slot; when
     * a lane's places are full, its Kafka connector stops polling (backpressure). Empty: twice {@link #concurrency()}.
     * Memory is bounded by this number times the lanes, the variants of a request and the largest image.
     */
    Optional<Integer> maxInProgress();

    /**
     * Most records of each lane taken from Kafka beyond {@link #maxInProgress()} that wait for their turn (contract
     * v1.2, fair shares): a request is taken into progress when a place is free, in weighted turns among the producers
     * with waiting records ({@link #producerWeights()}), so a producer whose backlog sits in Kafka before another's
     * requests holds those back by at most its backlog beyond this many. A waiting record holds its bytes, its parsed
     * JSON and about 5 KB of bookkeeping, and nothing else (no lookup, no reference read); what they hold is bounded to
     * a sixteenth of the memory budget per lane, and no record goes into progress 1000 offsets or more above the first
     * one of its partition not yet acknowledged (so that a commit's metadata names every record finished above it). Empty:
     * 5000; 0 takes records in the order of the partitions, as before v1.2.
     */
    Optional<Integer> readAhead();

    /**
     * With parking on ({@link TopicSettings#requestParked()}): once this many records of one producer wait for their turn in
     * the normal lane, that producer's next records of the request topic are parked instead of read ahead, so that its
     * backlog never fills the read-ahead before the records of producers published after it. Empty: {@link
     * #maxInProgress()}'s value, enough to keep every place in progress busy with one producer alone.
     */
    Optional<Integer> parkAfter();

    /**
     * How far above the first record of its partition not yet acknowledged a record may go into progress (at most
     * 1000, the default): what finished above a commit must fit in the commit's metadata ({@code
     * offsets.FinishedAbove}). Lower only to see the window's effects with small backlogs (the tests do).
     */
    Optional<Integer> offsetWindow();

    /**
     * The shares of gateway slots and of places in progress among producers with waiting work (contract v1.2):
     * {@code name=weight,...}, a producer not named weighs 1; empty: every producer 1 ({@link ProducerWeights}).
     */
    Optional<String> producerWeights();

    /**
     * Threads of the pool that runs the CPU work of a request off the event loops: reading a record, reading a
     * gateway answer's JSON and base64, hashing and inspecting an image. Empty: the number of processors the JVM
     * sees. Its queue is bounded by {@link #maxInProgress()}, since a request has at most one such task at a time.
     */
    Optional<Integer> cpuThreads();

    /** The longest start-up waits for the bucket check and the gateway's address probe. */
    @WithDefault("60s")
    Duration startupWait();

    /** Consumer group of the request topic. */
    @WithDefault("image-worker")
    String consumerGroup();

    /**
     * On a dead token (401) or a wrong address (404 {@code Invalid URL}, HTML), pause intake and wait for the
     * gateway to become healthy instead of failing the backlog. {@code false} fails each such request.
     */
    @WithDefault("true")
    boolean pauseOnGatewayFault();

    /**
     * On SIGTERM, how long the gateway calls in flight may take to finish, and their requests to be stored and
     * published, before the process exits. No call starts after SIGTERM: a request without a call in flight is left
     * uncommitted at once and redelivered to the next worker, which costs nothing. Empty: {@link #drainGrace}'s
     * default, a full gateway call plus the infrastructure patience (5 minutes with the defaults), so that a rollout
     * never cuts off a call it would then pay for twice. The Helm chart's termination grace is derived from it.
     */
    Optional<Duration> shutdownGrace();

    /**
     * When a rebalance takes partitions away from this worker (a replica joined or left), the longest it waits for the
     * requests on them that have a gateway call in flight (or made one) to finish, store and publish, before their new
     * owner takes them. A request that has made no call yet is not waited for and makes none here any more: the new
     * owner makes it, once. The worker takes no new record while it waits (Kafka's rebalance listener runs on the
     * polling thread, never on an event loop), so it must stay below {@code max.poll.interval.ms} by at least {@code
     * health.ConfigurationCheck.POLL_MARGIN}. Empty: {@link #rebalanceWait}'s default, a full gateway call plus the
     * infrastructure patience, so that no rebalance cuts off a call it would then pay for twice.
     */
    Optional<Duration> rebalanceGrace();

    /**
     * The normal lane's least share of gateway slots while requests of both lanes wait for one (0 to 1): with the
     * priority lane on ({@link TopicSettings#requestPriority()}), a free slot goes to a waiting priority request first, except
     * that at least this share of the slots handed out while both lanes wait goes to the normal lane, so that it never
     * starves. 0 serves the normal lane only when no priority request waits.
     */
    @WithDefault("0.2")
    double priorityMinShare();

    /**
     * Where a request's producer comes from (issue 49): {@code declared} (the default, and the behaviour before it),
     * the request's own {@code producer} field, which any writer of the request topic may set to any name; or {@code
     * topic}, the request topic it arrived on: each producer of {@link #producers()} writes to {@code
     * <request-topic>.<producer>} (and {@code <request-priority-topic>.<producer>}), under an ACL of its own, the
     * worker subscribes to those topics, and a request whose {@code producer} names another is refused ({@code
     * INVALID_REQUEST}, no call).
     */
    @WithDefault("declared")
    ProducerIdentity producerIdentity();

    /**
     * With {@link #producerIdentity()} {@code topic}: the producers, by name ({@code catalogue,edits}), whose request
     * topics ({@code <request-topic>.<name>}, {@code <request-priority-topic>.<name>}) the worker reads; required
     * then, ignored otherwise. A producer added is read once the workers restart with it.
     */
    Optional<List<String>> producers();

    /**
     * The most bytes of gateway answers, decoded images and edit references held at once ({@code
     * IMAGE_WORKER_MEMORY_BUDGET}): bytes, a size with a unit of 1024 ({@code 256Mi}, {@code 1G}) or a share of the
     * maximum heap ({@code 40%}); absent, half of the maximum heap. Work waits for it, never fails
     * ({@code memory.MemoryBudget}).
     */
    Optional<String> memoryBudget();

    /**
     * {@link #shutdownGrace()}, or its default: {@code gateway.timeout} (a full call) plus
     * {@code retry.infrastructure-patience} (what storing the image and the result document, downloading an answer
     * given as a URL, and publishing the event are allowed to take).
     *
     * @param call {@code gateway.timeout} ({@code gateway.GatewaySettings})
     * @param patience {@code retry.infrastructure-patience} ({@code support.RetrySettings})
     */
    default Duration drainGrace(Duration call, Duration patience) {
        return shutdownGrace().orElseGet(() -> call.plus(patience));
    }

    /**
     * {@link #rebalanceGrace()}, or its default: {@code gateway.timeout} (a full call) plus {@code
     * retry.infrastructure-patience} (storing and publishing its result at worst).
     *
     * @param call {@code gateway.timeout} ({@code gateway.GatewaySettings})
     * @param patience {@code retry.infrastructure-patience} ({@code support.RetrySettings})
     */
    default Duration rebalanceWait(Duration call, Duration patience) {
        return rebalanceGrace().orElseGet(() -> call.plus(patience));
    }

    /** {@link #maxInProgress()}, or its default. */
    default int inProgressLimit() {
        return Math.max(1, maxInProgress().orElse(2 * Math.max(1, concurrency())));
    }

    /** {@link #readAhead()}, or its default. */
    default int readAheadLimit() {
        return Math.max(0, readAhead().orElse(DEFAULT_READ_AHEAD));
    }

    /** {@link #parkAfter()}, or its default. */
    default int parkAfterLimit() {
        return Math.max(1, parkAfter().orElse(inProgressLimit()));
    }

    /** Most records of each lane taken from Kafka at once: those in progress and those waiting for their turn. */
    default int intakeLimit() {
        return inProgressLimit() + readAheadLimit();
    }

    /** Where a request's producer comes from ({@link #producerIdentity()}). */
    enum ProducerIdentity {
        /** The request's {@code producer} field, as the producer declares it: one trusted team. */
        declared,
        /** The request topic's suffix ({@code <request-topic>.<producer>}), which Kafka's ACLs authenticate. */
        topic
    }
}
