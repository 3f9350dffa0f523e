package io.imageworker.processing;

import io.imageworker.contract.ErrorCode;
import io.imageworker.contract.RequestFailure;
import io.imageworker.support.AbandonedException;
import io.imageworker.support.Shutdown;
import io.quarkus.logging.Log;
import io.smallrye.mutiny.Uni;
import java.util.function.BiFunction;
import software.amazon.awssdk.core.exception.SdkException;

/**
 * How a stage's failure ends a request or one of its variants, in one place: a {@link RequestFailure} is its outcome,
 * logged by its code (an operator's problem, {@code STORAGE_ERROR}, as an error; a producer's at INFO); anything else
 * is a defect, reported as such, not hidden; after the shutdown grace a failure is most likely the shutdown's own
 * doing (clients closing), and is left to {@link RequestProcessor}'s end (the request is abandoned).
 */
final class Endings {

    private Endings() {}

    /** {@code work}, or what {@code ending} makes of the code and message of a stage's refusal or of a defect. */
    static <T> Uni<T> orEnding(
            Uni<T> work, String requestId, Shutdown shutdown, BiFunction<ErrorCode, String, T> ending) {
        return work.onFailure(RequestFailure.class)
                .recoverWithItem(error -> {
                    RequestFailure failure = (RequestFailure) error;
                    if (failure.code() == ErrorCode.STORAGE_ERROR) {
                        Log.errorf("[%s] %s", requestId, failure.getMessage());
                    } else {
                        Log.infof("[%s] refused: %s", requestId, failure.getMessage());
                    }
                    return ending.apply(failure.code(), failure.getMessage());
                })
                .onFailure(error -> !(error instanceof AbandonedException) && !shutdown.abandoned())
                .recoverWithItem(error -> {
                    // Every expected failure is already an outcome: this is a defect, reported as such.
                    Log.errorf(error, "[%s] unexpected failure", requestId);
                    ErrorCode code = error instanceof SdkException ? ErrorCode.STORAGE_ERROR : ErrorCode.UPSTREAM_ERROR;
                    return ending.apply(code, "unexpected failure: " + error);
                });
    }
}
