/**
 * The inputs of an edit: {@link io.imageworker.reference.ReferenceLoader} reads its references and mask, one after the
 * other in the request's order, from {@code s3://} (through the store), {@code https://} or inline base64, and refuses
 * whatever the gateway must not be sent (not png, jpeg or webp, over 25 MB) before any call, into {@link
 * io.imageworker.reference.EditInputs} of {@link io.imageworker.reference.LoadedImage}s. {@link
 * io.imageworker.reference.HttpsReferenceFetcher} fetches an {@code https://} reference under the SSRF rules (allowed
 * hosts, public addresses only by {@link io.imageworker.reference.AddressPolicy}, every redirect checked, size and time
 * capped). A refusal is a {@link io.imageworker.reference.ReferenceRefusedException} ({@code INVALID_REFERENCE}), a
 * store that cannot be read a {@link io.imageworker.reference.ReferenceStoreException} ({@code STORAGE_ERROR}).
 *
 * <p>It may use {@code storage}, {@code gateway}, {@code image}, {@code support}, {@code config} and the contract
 * records of {@code io.imageworker}; {@code processing}, {@code health} and {@code messaging} may use it.
 */
package io.imageworker.reference;
