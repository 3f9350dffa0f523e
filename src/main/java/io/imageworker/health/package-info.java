/**
 * Whether the worker may start, and whether it is ready: {@link io.imageworker.health.StartupCheck} refuses to start,
 * one line per problem, without the settings it cannot guess, with settings that contradict each other ({@code
 * health.ConfigurationCheck}, plus the gateway address's shape and the memory budget, and the settings of the layers
 * above, which their owner checks: {@link io.imageworker.health.SettingsCheck}), or with a
 * gateway address that answers its probe as a wrong one does; {@link io.imageworker.health.PauseReadiness} is not
 * ready while intake pauses by design (the gateway guard, the spend guard) or the spend guard's reader stalls; {@link
 * io.imageworker.health.StorageReadiness} is not ready while the bucket cannot be reached. Kafka's own checks come from
 * SmallRye.
 *
 * <p>It may use every package below it ({@code api}, whose settings it checks, {@code processing}, {@code reference}, {@code storage}, {@code gateway}, {@code
 * spend}, {@code memory}, {@code image}, {@code support}, {@code config} and the contract records of {@code io.imageworker}); only {@code messaging}
 * (whose consumer starts after the start-up check) and the console (whose settings' check is a {@link
 * io.imageworker.health.SettingsCheck}) may use it.
 */
package io.imageworker.health;
