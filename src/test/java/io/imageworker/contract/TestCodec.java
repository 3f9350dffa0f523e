package io.imageworker.contract;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;

/** An {@link EventCodec} outside Quarkus, for unit tests: a mapper set up as Quarkus sets up its own. */
public final class TestCodec {

    private TestCodec() {}

    /** A codec whose mapper has Quarkus's defaults (java.time as ISO text, unknown properties ignored). */
    public static EventCodec codec() {
        return new EventCodec(JsonMapper.builder()
                .findAndAddModules()
                .disable(SerializationFeature.WRITE_DATES_AS_TIMESTAMPS)
                .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES)
                .build());
    }
}
