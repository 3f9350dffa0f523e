/**
 * Fetching from an address the worker did not choose, safely: {@link io.imageworker.net.GuardedFetcher} resolves the
 * name, checks every address against {@link io.imageworker.net.AddressPolicy} (no loopback, link-local or cloud
 * metadata, private ranges only for hosts listed), connects to the address it checked, and does so again on every
 * redirect ({@link io.imageworker.net.AddressChecks}, {@link io.imageworker.net.Redirects}), within a size cap and
 * a timeout. Edit references ({@code reference}) and the gateway's {@code url} answers
 * ({@code gateway.ImageDownloader}) both go through it. {@link io.imageworker.net.HostResolver} lets tests map names.
 *
 * <p>It may use {@code image}, {@code support} and {@code config} below it; {@code gateway} and {@code reference} use
 * it.
 */
package io.imageworker.net;
