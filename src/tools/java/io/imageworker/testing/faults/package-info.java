/**
 * The fault suite ({@code src/tools/java}): the packaged worker under faults, and the figures that show nothing is lost and nothing is wrongly
 * billed.
 *
 * <ul>
 *   <li>{@link io.imageworker.testing.faults.FaultSuite}, {@code ./mvnw -Pfaults}: 300 requests over 150 s at
 *       concurrency 16 ({@link io.imageworker.testing.faults.FaultScenario#full()}), about three minutes; sizes with
 *       {@code -Dfaults.requests=...} and the others listed there.
 *   <li>{@code io.imageworker.it.FaultSuiteIT}, part of {@code ./mvnw verify}: the same engine on 60 requests
 *       ({@link io.imageworker.testing.faults.FaultScenario#ci()}), about a minute and a half.
 * </ul>
 *
 * <p>{@link io.imageworker.testing.faults.FaultRun} runs a scenario: an embedded broker and store, the gateway
 * simulator, the worker as a child process; requests published on a timeline, a {@link
 * io.imageworker.testing.faults.FaultMix} of injected faults, and the scenario's incidents (SIGKILL, broker and store
 * outages, a revoked token, 429 storms). {@link io.imageworker.testing.faults.FaultReport} computes the figures from
 * what is observable from outside the worker only: the result topics, the simulator's record of every call and the
 * stored objects; it never trusts the worker's own account, except to compare it with the gateway's.
 */
package io.imageworker.testing.faults;
