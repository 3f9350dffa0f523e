package io.imageworker.processing;

import io.imageworker.storage.StorageSettings;
import io.imageworker.testing.TestConfig;
import java.util.Map;

/** {@link RequestValidator}s of given settings, for tests. */
final class RequestValidators {

    private RequestValidators() {}

    /** The validator of the default settings and {@code overrides}. */
    static RequestValidator of(Map<String, String> overrides) {
        return new RequestValidator(
                TestConfig.worker(overrides), TestConfig.settings(StorageSettings.class, overrides));
    }
}
