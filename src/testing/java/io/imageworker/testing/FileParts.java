package io.imageworker.testing;

import static org.assertj.core.api.Assertions.tuple;

import io.imageworker.testing.gateway.RecordedCall;
import org.assertj.core.groups.Tuple;

/**
 * The files of a recorded edit call as AssertJ tuples, for {@code extracting(...)}. Kept out of the simulator's package:
 * the simulator runs in the demo image on the worker's runtime dependencies, which have no AssertJ.
 */
public final class FileParts {

    private FileParts() {}

    /** As uploaded: the field, the file name, the declared type, the type of its bytes, whether it was used. */
    public static Tuple upload(RecordedCall.FilePart part) {
        return tuple(part.fieldName(), part.filename(), part.declaredContentType(), part.realType(), part.used());
    }

    /** Where it went: the field, the file name, both types, its size and its position among the images used. */
    public static Tuple placement(RecordedCall.FilePart part) {
        return tuple(
                part.fieldName(),
                part.filename(),
                part.declaredContentType(),
                part.realType(),
                part.width(),
                part.height(),
                part.usedPosition());
    }
}
