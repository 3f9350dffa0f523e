package io.imageworker.health;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.api.StatusSettings;
import io.imageworker.config.TopicSettings;
import io.imageworker.gateway.GatewaySettings;
import io.imageworker.reference.ReferenceSettings;
import io.imageworker.spend.BudgetSettings;
import io.imageworker.storage.StorageSettings;
import io.imageworker.support.RetrySettings;
import io.imageworker.testing.TestConfig;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.eclipse.microprofile.config.Config;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Start-up refuses settings that are missing, and settings that contradict each other. */
class StartupCheckTest {

    /** The shipped poll interval (application.properties: 10 minutes) and this commit max age. */
    /** The settings the start-up check reads, with the defaults and {@code overrides}. */
    private static ConfigurationCheck.Settings settings(Map<String, String> overrides) {
        return new ConfigurationCheck.Settings(
                TestConfig.worker(overrides),
                TestConfig.settings(TopicSettings.class, overrides),
                TestConfig.settings(RetrySettings.class, overrides),
                TestConfig.settings(StorageSettings.class, overrides),
                TestConfig.settings(BudgetSettings.class, overrides),
                TestConfig.settings(StatusSettings.class, overrides),
                TestConfig.settings(GatewaySettings.class, overrides),
                TestConfig.settings(ReferenceSettings.class, overrides));
    }

    private static ConfigurationCheck.Settings settings() {
        return settings(Map.of());
    }

    private static Config channels(String maxAgeMs) {
        return channels(maxAgeMs, "600000");
    }

    private static Config channels(String maxAgeMs, String maxPollIntervalMs) {
        return new SmallRyeConfigBuilder()
                .withSources(new PropertiesConfigSource(
                        Map.of(
                                ConfigurationCheck.MAX_AGE_PROPERTY,
                                maxAgeMs,
                                ConfigurationCheck.MAX_POLL_INTERVAL_PROPERTY,
                                maxPollIntervalMs),
                        "channels",
                        500))
                .build();
    }

    @Test
    void refusesARebalanceWaitThatAPollIntervalCannotHold() {
        // The default wait, a whole call (180 s) and the patience (2 m), does not fit Kafka's default of 5 minutes.
        assertThat(StartupCheck.problems(settings(), channels("1200000", "300000")))
                .singleElement()
                .asString()
                .contains("IMAGE_WORKER_REBALANCE_GRACE (PT5M, by default", "300000 ms");
        // A longer gateway timeout lengthens the default wait past the shipped interval.
        assertThat(StartupCheck.problems(settings(Map.of("image-worker.gateway.timeout", "10m")), channels("1200000")))
                .singleElement()
                .asString()
                .contains("IMAGE_WORKER_REBALANCE_GRACE (PT12M, by default", "600000 ms");
        // So does a grace given explicitly; a shorter one fits.
        assertThat(StartupCheck.problems(
                        settings(Map.of("image-worker.rebalance-grace", "9m30s")), channels("1200000")))
                .singleElement()
                .asString()
                .contains("IMAGE_WORKER_REBALANCE_GRACE (PT9M30S)");
        assertThat(StartupCheck.problems(settings(Map.of("image-worker.rebalance-grace", "9m")), channels("1200000")))
                .isEmpty();
    }

    /**
     * The priority lane's and the parked topic's consumers join the group with the same rebalance listener, so a
     * rebalance waits between two of their polls too: each poll interval is checked while its channel is on, whether it
     * follows the request channel's (as application.properties has it) or is set on its own.
     */
    @ParameterizedTest
    @CsvSource({
        "image-worker.topic.request-parked, " + ConfigurationCheck.PARKED_MAX_POLL_INTERVAL_PROPERTY
                + ", MP_MESSAGING_INCOMING_PARKED_REQUESTS_MAX_POLL_INTERVAL_MS",
        "image-worker.topic.request-priority, " + ConfigurationCheck.PRIORITY_MAX_POLL_INTERVAL_PROPERTY
                + ", MP_MESSAGING_INCOMING_PRIORITY_REQUESTS_MAX_POLL_INTERVAL_MS"
    })
    void refusesAPollIntervalOfTheParkedOrPriorityChannelThatCannotHoldTheRebalanceWait(
            String topic, String property, String variable) {
        ConfigurationCheck.Settings on = settings(Map.of(topic, "image-request-other"));

        // As shipped: the channel follows the request channel's interval.
        assertThat(StartupCheck.problems(
                        on, channels(Map.of(property, "${" + ConfigurationCheck.MAX_POLL_INTERVAL_PROPERTY + "}"))))
                .isEmpty();
        // Set on its own below the default wait (5 minutes) + 60 s.
        assertThat(StartupCheck.problems(on, channels(Map.of(property, "300000"))))
                .singleElement()
                .asString()
                .contains(
                        "IMAGE_WORKER_REBALANCE_GRACE (PT5M, by default", property + " (300000 ms, " + variable + ")");
        // Set nowhere: Kafka's default, 5 minutes, is what that consumer would poll with.
        assertThat(StartupCheck.problems(on, channels(Map.of())))
                .singleElement()
                .asString()
                .contains(property + " (300000 ms");
        assertThat(StartupCheck.problems(on, channels(Map.of(property, "360000"))))
                .isEmpty();
        // The channel off (its topic empty): its consumer does not exist, its setting is not read.
        assertThat(StartupCheck.problems(settings(Map.of(topic, "")), channels(Map.of(property, "300000"))))
                .isEmpty();
    }

    /** The shipped request channel's settings, and {@code more}. */
    private static Config channels(Map<String, String> more) {
        Map<String, String> properties = new HashMap<>(more);
        properties.put(ConfigurationCheck.MAX_AGE_PROPERTY, "1200000");
        properties.put(ConfigurationCheck.MAX_POLL_INTERVAL_PROPERTY, "600000");
        return new SmallRyeConfigBuilder()
                // Expressions expanded, as in the application.
                .addDefaultInterceptors()
                .withSources(new PropertiesConfigSource(properties, "channels", 500))
                .build();
    }

    @Test
    void acceptsTheShippedSettings() {
        // application.properties: 20 minutes, against a 15-minute request deadline and 2 minutes of patience.
        assertThat(StartupCheck.problems(settings(), channels("1200000"))).isEmpty();
    }

    @Test
    void refusesACommitMaxAgeNoLongerThanARequestMayTake() {
        assertThat(StartupCheck.problems(settings(), channels("60000")))
                .singleElement()
                .asString()
                .contains(ConfigurationCheck.MAX_AGE_PROPERTY, "60000 ms", "IMAGE_WORKER_RETRY_REQUEST_DEADLINE");
        assertThat(StartupCheck.problems(
                        settings(Map.of(
                                "image-worker.retry.request-deadline", "30m",
                                "image-worker.retry.infrastructure-patience", "2m")),
                        channels("1200000")))
                .hasSize(1);
    }

    @Test
    void aCommitMaxAgeOfZeroTurnsTheCheckOff() {
        assertThat(StartupCheck.problems(settings(), channels("0"))).isEmpty();
    }

    @Test
    void refusesFewerRequestsInProgressThanCallsInFlight() {
        assertThat(StartupCheck.problems(
                        settings(Map.of("image-worker.concurrency", "16", "image-worker.max-in-progress", "8")),
                        channels("1200000")))
                .singleElement()
                .asString()
                .contains("IMAGE_WORKER_MAX_IN_PROGRESS (8)", "IMAGE_WORKER_CONCURRENCY (16)");
    }

    @Test
    void refusesProducerWeightsThatAreNoListOfNameAndWeight() {
        assertThat(StartupCheck.problems(
                        settings(Map.of("image-worker.producer-weights", "catalogue=1,edits")), channels("1200000")))
                .singleElement()
                .asString()
                .contains("IMAGE_WORKER_PRODUCER_WEIGHTS=catalogue=1,edits", "'edits' is not name=weight");
        assertThat(StartupCheck.problems(
                        settings(Map.of("image-worker.producer-weights", "catalogue=1,edits=4")), channels("1200000")))
                .isEmpty();
    }

    @Test
    void refusesProducerBudgetsThatAreNoListOfNameAndCallsPerWindow() {
        assertThat(StartupCheck.problems(
                        settings(Map.of("image-worker.budget.per-producer", "catalogue=5000/1h,edits=10")),
                        channels("1200000")))
                .singleElement()
                .asString()
                .contains(
                        "IMAGE_WORKER_BUDGET_PER_PRODUCER=catalogue=5000/1h,edits=10",
                        "'edits=10' is not name=calls/window");
        assertThat(StartupCheck.problems(
                        settings(Map.of("image-worker.budget.per-producer", "catalogue=5000/1h,edits=10/10m")),
                        channels("1200000")))
                .isEmpty();
    }

    @Test
    void refusesProducerTopicsWithoutProducersOrThatAnotherSettingNames() {
        assertThat(StartupCheck.problems(
                        settings(Map.of("image-worker.producer-identity", "topic")), channels("1200000")))
                .singleElement()
                .asString()
                .contains("IMAGE_WORKER_PRODUCERS must name the producers");
        assertThat(StartupCheck.problems(
                        settings(Map.of(
                                "image-worker.producer-identity", "topic",
                                "image-worker.producers", "catalogue,..")),
                        channels("1200000")))
                .singleElement()
                .asString()
                .contains("IMAGE_WORKER_PRODUCERS: '..'");
        assertThat(StartupCheck.problems(
                        settings(Map.of(
                                "image-worker.producer-identity", "topic",
                                "image-worker.producers", "catalogue,dlq",
                                "image-worker.topic.dlq", "image-request.dlq")),
                        channels("1200000")))
                .singleElement()
                .asString()
                .contains("image-request.dlq", "IMAGE_WORKER_PRODUCER_IDENTITY=topic");
        assertThat(StartupCheck.problems(
                        settings(Map.of(
                                "image-worker.producer-identity",
                                "topic",
                                "image-worker.producers",
                                "catalogue,edits")),
                        channels("1200000")))
                .isEmpty();
        // A key prefix after which one producer's key could be another's.
        assertThat(StartupCheck.problems(
                        settings(Map.of(
                                "image-worker.producer-identity", "topic",
                                "image-worker.producers", "catalogue,edits",
                                "image-worker.storage.allowed-key-prefixes", "images/,images/edits/,uploads")),
                        channels("1200000")))
                .anySatisfy(problem -> assertThat(problem).contains("'images/edits/'", "must end with '/'"))
                .anySatisfy(problem -> assertThat(problem).contains("'uploads'"));
        // A producer's cancel topic, <cancel topic>.<producer>, that is a request topic too.
        assertThat(StartupCheck.problems(
                        settings(Map.of(
                                "image-worker.producer-identity", "topic",
                                "image-worker.producers", "catalogue,edits",
                                "image-worker.topic.cancel", "image-request")),
                        channels("1200000")))
                .singleElement()
                .asString()
                .contains("image-request.catalogue", "cancel topic");
        // Declared producers: the list is not read.
        assertThat(StartupCheck.problems(
                        settings(Map.of("image-worker.topic.dlq", "image-request.dlq")), channels("1200000")))
                .isEmpty();
    }

    @ParameterizedTest(name = "{0}: {1}")
    @CsvSource(
            delimiter = '|',
            value = {
                "declared | s3://images/shared | must end with '/'",
                "declared | images/shared/ | is not s3://<bucket>/<key prefix>",
                "declared | s3://images/../ | none '.' or '..'",
                "declared | s3://assets/shared/ | not in IMAGE_WORKER_REFERENCE_ALLOWED_BUCKETS",
                "topic | s3://images/ | overlaps s3://images/images/",
                "topic | s3://images/images/shared/ | overlaps s3://images/images/",
                "topic | s3://images/results/shared/ | overlaps s3://images/results/",
            })
    void refusesReferencePrefixesThatAreMalformedOrHoldAProducersOutput(String mode, String prefixes, String why) {
        assertThat(StartupCheck.problems(
                        settings(Map.of(
                                "image-worker.producer-identity", mode,
                                "image-worker.producers", "a,b",
                                "image-worker.reference.prefixes", prefixes)),
                        channels("1200000")))
                .singleElement()
                .asString()
                .contains("IMAGE_WORKER_REFERENCE_PREFIXES", why);
    }

    @Test
    void refusesStatusTokensOfUnknownProducersOrThatAreShort() {
        String token = "0123456789abcdefghijklmnopqrstuvwxyz";
        assertThat(StartupCheck.problems(
                        settings(Map.of(
                                "image-worker.producer-identity", "topic",
                                "image-worker.producers", "a,b",
                                "image-worker.status.tokens", "a=" + token + ",c=x" + token)),
                        channels("1200000")))
                .singleElement()
                .asString()
                .contains("IMAGE_WORKER_STATUS_TOKENS: c is not one of IMAGE_WORKER_PRODUCERS");
        assertThat(StartupCheck.problems(
                        settings(Map.of(
                                "image-worker.producer-identity", "topic",
                                "image-worker.producers", "a,b",
                                "image-worker.status.tokens", "a=secret")),
                        channels("1200000")))
                .singleElement()
                .asString()
                .contains("the token of a must be at least 32")
                .doesNotContain("secret");
        // Declared producers: not read.
        assertThat(StartupCheck.problems(
                        settings(Map.of("image-worker.status.tokens", "a=secret")), channels("1200000")))
                .isEmpty();
    }

    @Test
    void acceptsReferencePrefixesApartFromTheOutputsAndRefusesOutputsThatOverlap() {
        assertThat(StartupCheck.problems(
                        settings(Map.of(
                                "image-worker.producer-identity", "topic",
                                "image-worker.producers", "a,b",
                                "image-worker.reference.allowed-buckets", "images,assets",
                                "image-worker.reference.prefixes", "s3://images/shared/,s3://assets/")),
                        channels("1200000")))
                .isEmpty();
        // Producer x of images/ reads images/x/, which holds y's output under the key prefix images/x/.
        assertThat(StartupCheck.problems(
                        settings(Map.of(
                                "image-worker.producer-identity", "topic",
                                "image-worker.producers", "x,y",
                                "image-worker.storage.allowed-key-prefixes", "images/,images/x/")),
                        channels("1200000")))
                .anySatisfy(problem ->
                        assertThat(problem).contains("s3://images/images/x/", "s3://images/images/x/y/", "overlap"));
        // The key prefix data/ makes producer "results" read every result document of data/results/.
        assertThat(StartupCheck.problems(
                        settings(Map.of(
                                "image-worker.producer-identity", "topic",
                                "image-worker.producers", "results",
                                "image-worker.storage.key-prefix", "data/",
                                "image-worker.storage.result-prefix", "data/results/")),
                        channels("1200000")))
                .anySatisfy(problem -> assertThat(problem).contains("IMAGE_WORKER_STORAGE_RESULT_PREFIX"));
        // Declared producers: the outputs are not producers', and a prefix over them is the operator's choice.
        assertThat(StartupCheck.problems(
                        settings(Map.of("image-worker.reference.prefixes", "s3://images/")), channels("1200000")))
                .isEmpty();
    }

    @Test
    void refusesAMemoryBudgetThatIsNoPositiveSize() {
        assertThat(StartupCheck.problems(settings(Map.of("image-worker.memory-budget", "lots")), channels("1200000")))
                .singleElement()
                .asString()
                .contains("IMAGE_WORKER_MEMORY_BUDGET=lots");
        assertThat(StartupCheck.problems(settings(Map.of("image-worker.memory-budget", "256Mi")), channels("1200000")))
                .isEmpty();
    }

    @Test
    void namesEachMissingRequiredSetting() {
        assertThat(StartupCheck.problems(
                        settings(Map.of(
                                "image-worker.gateway.base-url", "",
                                "image-worker.gateway.api-key", "",
                                "image-worker.gateway.model", "")),
                        channels("1200000")))
                .hasSize(3)
                .anyMatch(problem -> problem.startsWith("IMAGE_WORKER_GATEWAY_BASE_URL"))
                .anyMatch(problem -> problem.startsWith("IMAGE_WORKER_GATEWAY_API_KEY"))
                .anyMatch(problem -> problem.startsWith("IMAGE_WORKER_GATEWAY_MODEL"));
    }

    /**
     * The settings of a layer above, checked there (the console's, which this layer may not read): their problems
     * come after those of the settings checked here, and one is enough to refuse the start.
     */
    @Test
    void addsTheProblemsOfTheChecksOfTheLayersAbove() {
        SettingsCheck above = () -> List.of("IMAGE_WORKER_CONSOLE_MAX_ENTRIES must be at least 1");

        assertThat(StartupCheck.problems(settings(), channels("1200000"), List.of(above)))
                .containsExactly("IMAGE_WORKER_CONSOLE_MAX_ENTRIES must be at least 1");
        assertThat(StartupCheck.problems(
                        settings(Map.of("image-worker.memory-budget", "lots")),
                        channels("1200000"),
                        List.of(above, List::of)))
                .hasSize(2)
                .last()
                .isEqualTo("IMAGE_WORKER_CONSOLE_MAX_ENTRIES must be at least 1");
        assertThat(StartupCheck.problems(settings(), channels("1200000"), List.of(List::of)))
                .isEmpty();
    }
}
