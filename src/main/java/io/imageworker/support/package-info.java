/**
 * What several layers share, none of it specific to one stage: {@link io.imageworker.support.WorkerThreads} (the one
 * maker and owner of the worker's own threads and pools, which stops them in order at shutdown), {@link
 * io.imageworker.support.CpuWork} (the fixed pool where CPU work runs, off the event loops), {@link io.imageworker.support.BoundedBody} (a response body read into one capped array),
 * {@link io.imageworker.support.Patience} (retries of operations that cost nothing, only after a failure that can
 * heal), {@link io.imageworker.support.Shutdown} and {@link io.imageworker.support.AbandonedException} (the steps of a
 * graceful shutdown), {@link io.imageworker.support.Pauses} (the clock of the pauses by design), {@link
 * io.imageworker.support.Tracing} and {@link io.imageworker.support.TraceContext} (the spans of a request), {@link
 * io.imageworker.support.WorkerMetrics} (the counters and timers at {@code /q/metrics}), and the settings every layer
 * shares: {@link io.imageworker.support.RetrySettings} (the retries and the patience) and {@link
 * io.imageworker.support.LogSettings} (the log's format, read by application.properties alone).
 *
 * <p>It may use {@code config} and the contract records of {@code io.imageworker}, nothing else; every layer from
 * {@code turns} up may use it. A helper that needs a stage's classes belongs to that stage, not here.
 */
package io.imageworker.support;
