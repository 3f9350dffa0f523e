/**
 * Admission by bytes: {@link io.imageworker.memory.MemoryBudget} is the worker's byte budget, from which every large
 * buffer a request holds (an answer being read, a decoded image, an image on its way to the store, an edit's
 * references) is leased, so that a request waits for memory instead of taking it.
 *
 * <p>It may use {@code support}, {@code config} and the contract records of {@code io.imageworker}; every layer from
 * {@code gateway} up may use it.
 */
package io.imageworker.memory;
