package io.imageworker.testing.gateway;

import java.time.Instant;

/**
 * One request to the second origin that serves returned {@code url}s.
 *
 * @param path path requested
 * @param status status answered; 0 for a download left hanging
 * @param arrivedAt when it arrived
 */
public record RecordedDownload(String path, int status, Instant arrivedAt) {}
