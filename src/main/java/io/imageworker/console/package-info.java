/**
 * The console (issue 52): a page served by the worker under {@code /console}, off by default ({@code
 * IMAGE_WORKER_CONSOLE_ENABLED}), on in the local run. It shows the last requests of the whole fleet, read from the
 * result topics and the status topic by a consumer of its own ({@link io.imageworker.console.ConsoleReader}) into a feed
 * bounded in entries and bytes ({@link io.imageworker.console.ConsoleFeed}), their images streamed from the store, and
 * the queue as this replica holds it ({@link io.imageworker.console.QueueView}); with {@code
 * IMAGE_WORKER_CONSOLE_ACTIONS} it cancels a request and sends one ({@link io.imageworker.console.ConsoleActions}). Its
 * routes are Vert.x routes ({@link io.imageworker.console.ConsoleRoutes}), registered only while it is on, behind a token
 * when one is set ({@link io.imageworker.console.ConsoleAccess}); where producers are authenticated, a producer's status
 * credential admits it to its own requests only. Its settings are {@link io.imageworker.console.ConsoleSettings},
 * checked at start-up by {@link io.imageworker.console.ConsoleSettingsCheck}, whether it is on or not.
 *
 * <p>It is the top layer: it may use every package below it, and none uses it.
 */
package io.imageworker.console;
