package io.imageworker.health;

import io.imageworker.api.StatusSettings;
import io.imageworker.config.ProducerBudgets;
import io.imageworker.config.ProducerTopics;
import io.imageworker.config.ProducerWeights;
import io.imageworker.config.ReferencePrefixes;
import io.imageworker.config.StatusTokens;
import io.imageworker.config.TopicSettings;
import io.imageworker.config.WorkerConfig;
import io.imageworker.gateway.GatewaySettings;
import io.imageworker.reference.ReferenceSettings;
import io.imageworker.spend.BudgetSettings;
import io.imageworker.storage.StorageSettings;
import io.imageworker.support.RetrySettings;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import org.eclipse.microprofile.config.Config;

/**
 * Whether the settings are complete and agree with each other: the settings the worker cannot guess (the gateway's base
 * URL, API key and model) are set, and no two settings contradict each other. Read from the settings alone; start-up
 * ({@code health.StartupCheck}) adds what only a setting's owner can tell (the shape of the gateway's address, the
 * memory budget) and the problems of the settings of the layers above it (the console's, each layer's {@link
 * SettingsCheck}), and refuses to start on any problem.
 */
public final class ConfigurationCheck {

    /** The channel property of SmallRye's throttled commit strategy that marks a record as stuck. */
    public static final String MAX_AGE_PROPERTY =
            "mp.messaging.incoming.requests.throttled.unprocessed-record-max-age.ms";

    /** SmallRye's default of {@link #MAX_AGE_PROPERTY}, in milliseconds. */
    static final long DEFAULT_MAX_AGE_MS = 60_000L;

    /**
     * The request channel's Kafka consumer setting that bounds the time between two polls: a rebalance's wait
     * ({@code offsets.RevocationGrace}) runs between two polls.
     */
    public static final String MAX_POLL_INTERVAL_PROPERTY = "mp.messaging.incoming.requests.max.poll.interval.ms";

    /**
     * The same setting of the priority lane's channel: a consumer of its own in the same group, with the same rebalance
     * listener, so a rebalance waits between two of its polls too. It follows the request channel's unless set.
     */
    public static final String PRIORITY_MAX_POLL_INTERVAL_PROPERTY =
            "mp.messaging.incoming.priority-requests.max.poll.interval.ms";

    /** The same setting of the parked topic's channel (parking on), which shares the group and the listener as well. */
    public static final String PARKED_MAX_POLL_INTERVAL_PROPERTY =
            "mp.messaging.incoming.parked-requests.max.poll.interval.ms";

    /** Kafka's default of {@link #MAX_POLL_INTERVAL_PROPERTY}, in milliseconds. */
    static final long DEFAULT_MAX_POLL_INTERVAL_MS = 300_000L;

    /**
     * How much longer than the rebalance wait the poll interval must be: after the wait the listener still commits
     * (up to 10 s a try) before the next poll.
     */
    public static final Duration POLL_MARGIN = Duration.ofSeconds(60);

    private ConfigurationCheck() {}

    /**
     * The settings checked: the mappings of the settings that concern more than one package, or that contradict each
     * other across packages.
     */
    public record Settings(
            WorkerConfig worker,
            TopicSettings topic,
            RetrySettings retry,
            StorageSettings storage,
            BudgetSettings budget,
            StatusSettings status,
            GatewaySettings gateway,
            ReferenceSettings reference) {}

    /** Each problem of {@code settings} (and of the request channels' {@code channels} settings), in one line each. */
    public static List<String> problems(Settings settings, Config channels) {
        WorkerConfig config = settings.worker();
        List<String> problems = new ArrayList<>();
        if (settings.gateway().baseUrl().filter(s -> !s.isBlank()).isEmpty()) {
            problems.add(
                    "IMAGE_WORKER_GATEWAY_BASE_URL is not set (the gateway origin, e.g. https://gateway.example.com)");
        }
        if (settings.gateway().apiKey().filter(s -> !s.isBlank()).isEmpty()) {
            problems.add("IMAGE_WORKER_GATEWAY_API_KEY is not set (the sk- token created in the gateway's console)");
        }
        if (settings.gateway().model().filter(s -> !s.isBlank()).isEmpty()) {
            problems.add("IMAGE_WORKER_GATEWAY_MODEL is not set (the image model identifier, written in full)");
        }
        if (config.concurrency() < 1) {
            problems.add("IMAGE_WORKER_CONCURRENCY must be at least 1");
        }
        if (config.maxInProgress().isPresent() && config.maxInProgress().get() < config.concurrency()) {
            problems.add(
                    "IMAGE_WORKER_MAX_IN_PROGRESS (" + config.maxInProgress().get()
                            + ") must be at least IMAGE_WORKER_CONCURRENCY (" + config.concurrency()
                            + "), or calls could never fill the concurrency");
        }
        try {
            ProducerWeights.of(config.producerWeights());
        } catch (IllegalArgumentException invalid) {
            problems.add(invalid.getMessage());
        }
        try {
            ProducerBudgets.of(settings.budget().perProducer());
        } catch (IllegalArgumentException invalid) {
            problems.add(invalid.getMessage());
        }
        if (!(config.priorityMinShare() >= 0 && config.priorityMinShare() <= 1)) {
            problems.add("IMAGE_WORKER_PRIORITY_MIN_SHARE (" + config.priorityMinShare() + ") must be from 0 to 1");
        }
        problems.addAll(topicProblems(settings));
        problems.addAll(referenceProblems(settings));
        problems.addAll(statusProblems(settings));
        problems.addAll(timingProblems(settings, channels));
        return problems;
    }

    /** The problems of the request topics and their window: the lanes' and the parked topic must be distinct. */
    private static List<String> topicProblems(Settings settings) {
        WorkerConfig config = settings.worker();
        List<String> problems = new ArrayList<>();
        if (settings.topic()
                .requestPriority()
                .filter(settings.topic().request()::equals)
                .isPresent()) {
            problems.add("IMAGE_WORKER_TOPIC_REQUEST_PRIORITY must name another topic than IMAGE_WORKER_TOPIC_REQUEST");
        }
        settings.topic()
                .requestParked()
                .filter(parked -> parked.equals(settings.topic().request())
                        || settings.topic()
                                .requestPriority()
                                .filter(parked::equals)
                                .isPresent())
                .ifPresent(parked -> problems.add("IMAGE_WORKER_TOPIC_REQUEST_PARKED must name another topic than"
                        + " IMAGE_WORKER_TOPIC_REQUEST and IMAGE_WORKER_TOPIC_REQUEST_PRIORITY"));
        if (config.producerIdentity() == WorkerConfig.ProducerIdentity.topic) {
            problems.addAll(producerTopicProblems(settings));
        }
        config.offsetWindow()
                .filter(window -> window < 1 || window > 1000)
                .ifPresent(window -> problems.add("IMAGE_WORKER_OFFSET_WINDOW (" + window + ") must be from 1 to 1000:"
                        + " what finishes above a commit must fit in the commit's metadata"));
        return problems;
    }

    /**
     * The status endpoint's credentials, read with producers taken from their topics only: the tokens well formed, each
     * of a producer the worker reads, and the ingress's header a header's name.
     */
    static List<String> statusProblems(Settings settings) {
        WorkerConfig config = settings.worker();
        List<String> problems = new ArrayList<>();
        if (config.producerIdentity() != WorkerConfig.ProducerIdentity.topic) {
            return problems;
        }
        try {
            Set<String> producers = config.producers().orElse(List.of()).stream()
                    .map(String::trim)
                    .collect(java.util.stream.Collectors.toSet());
            StatusTokens.of(settings.status().tokens()).tokens().keySet().stream()
                    .filter(name -> !producers.contains(name))
                    .sorted()
                    .forEach(name ->
                            problems.add(StatusTokens.SETTING + ": " + name + " is not one of IMAGE_WORKER_PRODUCERS"));
        } catch (IllegalArgumentException invalid) {
            problems.add(invalid.getMessage());
        }
        settings.status()
                .producerHeader()
                .map(String::trim)
                .filter(name -> !name.isEmpty() && !name.matches("[A-Za-z0-9!#$%&'*+.^_`|~-]+"))
                .ifPresent(name ->
                        problems.add("IMAGE_WORKER_STATUS_PRODUCER_HEADER: '" + name + "' is not a header's name"));
        return problems;
    }

    /**
     * The places {@code s3://} references may be read from ({@code IMAGE_WORKER_REFERENCE_PREFIXES}): each well formed
     * and in an allowed bucket; with the producer taken from the topic, none overlapping the keys the worker writes
     * (an output key prefix, the result prefix), so that a shared place never holds another producer's output, and no
     * producer's own output ({@code <key prefix><producer>/}) overlapping another's or the results.
     */
    static List<String> referenceProblems(Settings settings) {
        WorkerConfig config = settings.worker();
        List<String> problems = new ArrayList<>();
        Optional<ReferencePrefixes> shared;
        try {
            shared = ReferencePrefixes.of(settings.reference().prefixes());
        } catch (IllegalArgumentException invalid) {
            problems.add(invalid.getMessage());
            return problems;
        }
        String bucket = settings.storage().bucket();
        Set<String> buckets = settings.reference().allowedBuckets().orElse(Set.of(bucket));
        List<String> outputs = new ArrayList<>(List.of(settings.storage().keyPrefix()));
        settings.storage().allowedKeyPrefixes().ifPresent(more -> more.stream()
                .filter(prefix -> !outputs.contains(prefix))
                .forEach(outputs::add));
        boolean perProducer = config.producerIdentity() == WorkerConfig.ProducerIdentity.topic;
        for (ReferencePrefixes.Prefix prefix :
                shared.map(ReferencePrefixes::prefixes).orElse(List.of())) {
            if (!buckets.contains(prefix.bucket())) {
                problems.add(ReferencePrefixes.SETTING + ": " + prefix + " is in a bucket that is not in"
                        + " IMAGE_WORKER_REFERENCE_ALLOWED_BUCKETS (" + String.join(",", buckets) + ")");
            }
            if (!perProducer) {
                continue;
            }
            List<String> written = new ArrayList<>(outputs);
            written.add(settings.storage().resultPrefix());
            written.stream()
                    .filter(output -> prefix.overlaps(bucket, output))
                    .findFirst()
                    .ifPresent(output -> problems.add(ReferencePrefixes.SETTING + ": " + prefix + " overlaps s3://"
                            + bucket + "/" + output + ", where the worker writes every producer's images or results:"
                            + " with IMAGE_WORKER_PRODUCER_IDENTITY=topic a shared place must hold no producer's"
                            + " output (each reads its own, <key prefix><producer>/, without it)"));
        }
        if (perProducer) {
            List<String[]> own = new ArrayList<>();
            for (String producer : config.producers().orElse(List.of())) {
                for (String output : outputs) {
                    own.add(new String[] {producer.trim(), output + producer.trim() + "/"});
                }
            }
            String results = settings.storage().resultPrefix();
            for (int i = 0; i < own.size(); i++) {
                String mine = own.get(i)[1];
                // Under the result prefix, an output holds its own producer's documents (<results><producer>/):
                // only one that holds the result prefix holds everyone's.
                if (results.startsWith(mine)) {
                    problems.add("the output of a producer, s3://" + bucket + "/" + mine + ", overlaps the result"
                            + " prefix IMAGE_WORKER_STORAGE_RESULT_PREFIX (" + results + "): a producer would read"
                            + " the result documents of every producer as its own output; name them apart");
                }
                for (int j = i + 1; j < own.size(); j++) {
                    String other = own.get(j)[1];
                    if (!own.get(i)[0].equals(own.get(j)[0]) && (mine.startsWith(other) || other.startsWith(mine))) {
                        problems.add("the outputs s3://" + bucket + "/" + mine + " and s3://" + bucket + "/" + other
                                + " of two producers overlap (IMAGE_WORKER_PRODUCERS and the storage key prefixes):"
                                + " one would read the other's images as its own; name them apart");
                    }
                }
            }
        }
        return problems;
    }

    /**
     * With the producer taken from the topic: the producers are named, each a name a topic may end with, and no other
     * topic the worker reads or writes is one of theirs ({@code <request-topic>.<name>}, {@code
     * <request-priority-topic>.<name>}), or the lanes would read it as a producer's requests.
     */
    private static List<String> producerTopicProblems(Settings settings) {
        WorkerConfig config = settings.worker();
        List<String> problems = new ArrayList<>();
        List<String> producers = config.producers().orElse(List.of()).stream()
                .map(String::trim)
                .filter(name -> !name.isEmpty())
                .toList();
        if (producers.isEmpty()) {
            problems.add(
                    "IMAGE_WORKER_PRODUCERS must name the producers (catalogue,edits) when"
                            + " IMAGE_WORKER_PRODUCER_IDENTITY=topic: the worker reads <IMAGE_WORKER_TOPIC_REQUEST>.<producer>");
            return problems;
        }
        producers.stream()
                .filter(name -> !ProducerTopics.isName(name))
                .forEach(name -> problems.add("IMAGE_WORKER_PRODUCERS: '" + name + "' is not 1 to 64 characters of"
                        + " [A-Za-z0-9._-] starting with a letter, a digit, '_' or '-'"));
        // Keys are <key prefix><producer>/...: a prefix must end with '/' and name no producer, or one producer's key
        // could be another's (the validator refuses such a request's own output.keyPrefix likewise).
        List<String> prefixes = new ArrayList<>(List.of(settings.storage().keyPrefix()));
        settings.storage().allowedKeyPrefixes().ifPresent(prefixes::addAll);
        for (String prefix : prefixes) {
            boolean namesAProducer = List.of(prefix.split("/")).stream().anyMatch(producers::contains);
            if ((!prefix.isEmpty() && !prefix.endsWith("/")) || namesAProducer) {
                problems.add("the storage key prefix '" + prefix + "' must end with '/' and hold no producer's name as"
                        + " a segment with IMAGE_WORKER_PRODUCER_IDENTITY=topic: keys are <key prefix><producer>/...");
            }
        }
        TopicSettings topic = settings.topic();
        List<String> read = new ArrayList<>(ProducerTopics.topics(topic.request(), producers));
        topic.requestPriority()
                .filter(name -> !name.isBlank())
                .ifPresent(base -> read.addAll(ProducerTopics.topics(base, producers)));
        List<Optional<String>> others = List.of(
                Optional.of(topic.completed()),
                Optional.of(topic.failed()),
                Optional.of(topic.dlq()),
                topic.requestParked(),
                topic.status(),
                topic.cancel(),
                Optional.of(topic.budget()));
        for (Optional<String> other : others) {
            other.filter(read::contains)
                    .ifPresent(name -> problems.add("the topic " + name + " is named by a setting but is also a"
                            + " producer's request topic (IMAGE_WORKER_PRODUCER_IDENTITY=topic reads"
                            + " <IMAGE_WORKER_TOPIC_REQUEST>.<producer>): name it otherwise"));
        }
        // Each producer's cancel topic, <cancel-topic>.<producer>, is neither a request topic nor another setting's.
        topic.cancel().filter(name -> !name.isBlank()).ifPresent(base -> {
            List<String> named = others.stream().flatMap(Optional::stream).toList();
            ProducerTopics.topics(base, producers).stream()
                    .filter(cancels -> read.contains(cancels) || named.contains(cancels))
                    .findFirst()
                    .ifPresent(name -> problems.add("the topic " + name + " is a producer's cancel topic"
                            + " (IMAGE_WORKER_PRODUCER_IDENTITY=topic reads <IMAGE_WORKER_TOPIC_CANCEL>.<producer>)"
                            + " and also a request topic or another setting's: name them otherwise"));
        });
        return problems;
    }

    /**
     * The problems of the request channels' consumer timings beside the worker's own: how long a record may be in
     * progress, and how long a rebalance waits between two polls of each consumer of the group (the request channel's,
     * and the priority lane's and the parked topic's when they are on).
     */
    private static List<String> timingProblems(Settings settings, Config channels) {
        WorkerConfig config = settings.worker();
        RetrySettings retry = settings.retry();
        List<String> problems = new ArrayList<>();
        // Outside the pauses by design (a gateway fault, the spend guard: not counted by the pause-aware commit
        // strategy, however long), a record is in progress for at most the request deadline plus a store's patience;
        // if the commit strategy called a record stuck sooner, ordinary slow requests would mark the consumer
        // unhealthy and restart it.
        Duration longest = retry.requestDeadline().plus(retry.infrastructurePatience());
        long maxAgeMs = channels.getOptionalValue(MAX_AGE_PROPERTY, Long.class).orElse(DEFAULT_MAX_AGE_MS);
        if (maxAgeMs > 0 && maxAgeMs <= longest.toMillis()) {
            problems.add(MAX_AGE_PROPERTY + " (" + maxAgeMs + " ms) must be longer than"
                    + " IMAGE_WORKER_RETRY_REQUEST_DEADLINE plus IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE (" + longest
                    + "): a slower request would be taken for a stuck record and the consumer restarted");
        }
        // A rebalance waits for the calls in flight on the partitions it takes away inside Kafka's rebalance
        // callback, between two polls: a wait past max.poll.interval.ms makes the consumer leave the group, and every
        // request in progress here is then done again by the partitions' next owners. Every consumer of the group that
        // is on polls with that listener: the request channel's, the priority lane's and the parked topic's. The last
        // two follow the request channel's setting unless set themselves; one set nowhere gets Kafka's default.
        List<String> pollIntervals = new ArrayList<>(List.of(MAX_POLL_INTERVAL_PROPERTY));
        if (named(settings.topic().requestPriority())) {
            pollIntervals.add(PRIORITY_MAX_POLL_INTERVAL_PROPERTY);
        }
        if (named(settings.topic().requestParked())) {
            pollIntervals.add(PARKED_MAX_POLL_INTERVAL_PROPERTY);
        }
        Duration rebalanceWait = config.rebalanceWait(settings.gateway().timeout(), retry.infrastructurePatience());
        for (String property : pollIntervals) {
            long maxPollMs = channels.getOptionalValue(property, Long.class).orElse(DEFAULT_MAX_POLL_INTERVAL_MS);
            if (rebalanceWait.plus(POLL_MARGIN).toMillis() > maxPollMs) {
                problems.add("IMAGE_WORKER_REBALANCE_GRACE (" + rebalanceWait
                        + (config.rebalanceGrace().isPresent()
                                ? ""
                                : ", by default IMAGE_WORKER_GATEWAY_TIMEOUT plus"
                                        + " IMAGE_WORKER_RETRY_INFRASTRUCTURE_PATIENCE")
                        + ") plus " + POLL_MARGIN.toSeconds() + " s must not exceed " + property + " (" + maxPollMs
                        + " ms, " + environmentName(property) + "): a rebalance waits for the calls in flight between"
                        + " two polls, and a longer wait would put this worker out of the group");
            }
        }
        return problems;
    }

    /** Whether an optional topic setting names a topic (empty or blank: the feature is off). */
    private static boolean named(Optional<String> topic) {
        return topic.filter(name -> !name.isBlank()).isPresent();
    }

    /** The environment variable that sets a property: MicroProfile Config's mapping, upper case, {@code _} for the rest. */
    static String environmentName(String property) {
        return property.toUpperCase(Locale.ROOT).replaceAll("[^A-Z0-9]", "_");
    }
}
