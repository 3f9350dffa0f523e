/**
 * Pure rules about images, with no I/O: {@link io.imageworker.image.ImageInspector} reads an image's real format
 * ({@link io.imageworker.image.ImageFormat}), stored size and EXIF orientation from its bytes into an {@link
 * io.imageworker.image.ImageInfo}, with bounded readers that never decode pixels; {@link
 * io.imageworker.image.SizePolicy} turns a request's {@code size} into the explicit {@code WIDTHxHEIGHT} to send, or a
 * refusal ({@link io.imageworker.image.SizeDecision}), within the gateway's hard limits ({@link
 * io.imageworker.image.SizeLimits}).
 *
 * <p>It may use {@code support}, {@code config} and the contract records of {@code io.imageworker} (it uses none of
 * them), and is used from {@code gateway} up. Being pure, every rule here is unit-tested without a server.
 */
package io.imageworker.image;
