package io.imageworker.storage;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import org.junit.jupiter.api.Test;
import software.amazon.awssdk.awscore.exception.AwsErrorDetails;
import software.amazon.awssdk.core.exception.SdkClientException;
import software.amazon.awssdk.services.s3.model.S3Exception;

class StorageFailuresTest {

    @Test
    void anAnswerWithoutABodySaysItsStatusAndReason() {
        // A HEAD refused: what the AWS Common Runtime's stack gives, no reason phrase and no error body.
        S3Exception refused =
                (S3Exception) S3Exception.builder().statusCode(403).build();

        assertThat(StorageFailures.describe(refused)).isEqualTo("the store answered 403 Forbidden");
    }

    @Test
    void anAnswerWithAnErrorBodySaysItsCodeAndMessageToo() {
        S3Exception refused = (S3Exception) S3Exception.builder()
                .statusCode(403)
                .awsErrorDetails(AwsErrorDetails.builder()
                        .errorCode("AccessDenied")
                        .errorMessage("Access Denied")
                        .build())
                .build();

        assertThat(StorageFailures.describe(refused))
                .isEqualTo("the store answered 403 Forbidden (AccessDenied: Access Denied)");
    }

    @Test
    void aFailureWithNoAnswerKeepsItsOwnMessage() {
        assertThat(StorageFailures.describe(SdkClientException.create("Unable to execute HTTP request: timed out")))
                .isEqualTo("Unable to execute HTTP request: timed out");
        assertThat(StorageFailures.describe(new IOException("connection reset")))
                .isEqualTo("connection reset");
    }
}
