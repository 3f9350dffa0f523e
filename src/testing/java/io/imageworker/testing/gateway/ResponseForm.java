package io.imageworker.testing.gateway;

/** How a successful image answer carries the image, whatever the client asked with {@code response_format}. */
public enum ResponseForm {
    /** {@code data[0].b64_json}. */
    B64,
    /** {@code data[0].url}, served by the simulator's second origin until it expires. */
    URL,
    /** Either, at the configured URL ratio (see {@link SimulatorSettings#urlRatio()}). Never seen in a record. */
    MIXED
}
