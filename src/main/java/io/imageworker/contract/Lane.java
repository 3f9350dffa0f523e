package io.imageworker.contract;

/**
 * The lane a request came in by: {@code image-request}, or the optional priority topic
 * ({@code IMAGE_WORKER_TOPIC_REQUEST_PRIORITY}), whose requests get a free gateway slot first while the normal lane
 * keeps at least {@code IMAGE_WORKER_PRIORITY_MIN_SHARE} of the slots.
 */
public enum Lane {
    /** {@code image-request}. */
    NORMAL,
    /** The priority topic. */
    PRIORITY
}
