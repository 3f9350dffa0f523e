package io.imageworker.reference;

import java.util.List;

/**
 * Everything an edit sends besides its text fields.
 *
 * @param references the references in the request's order; the first is the image edited
 * @param mask the mask, or null
 */
public record EditInputs(List<LoadedImage> references, LoadedImage mask) {}
