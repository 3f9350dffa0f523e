package io.imageworker.config;

import static org.assertj.core.api.Assertions.assertThat;

import io.imageworker.support.LogSettings;
import io.imageworker.testing.TestConfig;
import io.imageworker.testing.WorkerTestResource;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.config.SmallRyeConfig;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.parallel.Execution;
import org.junit.jupiter.api.parallel.ExecutionMode;

/**
 * Every settings mapping ({@link TestConfig#MAPPINGS}) is one the started worker knows and has read (the pipeline
 * tests' own worker, no start of its own), those that no bean injects included: {@link LogSettings}, which only
 * application.properties reads, agrees with what Quarkus's logging was given.
 */
@QuarkusTest
@Execution(ExecutionMode.SAME_THREAD)
@WithTestResource(WorkerTestResource.class)
class SettingsMappingsTest {

    @Test
    void theStartedWorkerHasEveryMappingAndTheLogsOneAgreesWithTheLogging() {
        SmallRyeConfig config = ConfigProvider.getConfig().unwrap(SmallRyeConfig.class);

        assertThat(TestConfig.MAPPINGS).allSatisfy(mapping -> assertThat(config.getConfigMapping(mapping))
                .as(mapping.getName())
                .isNotNull());
        assertThat(config.getConfigMapping(LogSettings.class).json())
                .isEqualTo(config.getValue("quarkus.log.console.json.enabled", Boolean.class));
    }
}
