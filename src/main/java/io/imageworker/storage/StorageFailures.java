package io.imageworker.storage;

import io.netty.handler.codec.http.HttpResponseStatus;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.awscore.exception.AwsServiceException;

/**
 * A storage failure in words for an {@code image-failed} message: the store's status with its reason phrase, and its
 * error code and message when its answer had a body. The SDK's own message depends on its HTTP stack (Netty's carries
 * the status line's reason phrase, the AWS Common Runtime's does not), and a HEAD's answer has no body: without this,
 * a lookup refused with 403 would read "(Service: S3, Status Code: 403, Request ID: null)".
 */
final class StorageFailures {

    private StorageFailures() {}

    /** {@code error} described for whoever reads the failed event. */
    static String describe(Throwable error) {
        if (!(error instanceof AwsServiceException service) || service.statusCode() <= 0) {
            return String.valueOf(error.getMessage());
        }
        StringBuilder text = new StringBuilder("the store answered ")
                .append(service.statusCode())
                .append(' ')
                .append(HttpResponseStatus.valueOf(service.statusCode()).reasonPhrase());
        AwsErrorDetails details = service.awsErrorDetails();
        String code = details == null ? null : details.errorCode();
        String message = details == null ? null : details.errorMessage();
        if (code != null || message != null) {
            text.append(" (");
            if (code != null) {
                text.append(code);
            }
            if (message != null) {
                text.append(code != null ? ": " : "").append(message);
            }
            text.append(')');
        }
        return text.toString();
    }
}
