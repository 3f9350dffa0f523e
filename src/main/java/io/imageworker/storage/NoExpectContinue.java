package io.imageworker.storage;

import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;
import software.amazon.awssdk.http.SdkHttpRequest;

/**
 * Sends a PUT's body with its headers. The S3 client asks for {@code Expect: 100-continue} on every upload, which makes
 * each PUT wait one more round trip for the store's go-ahead before the body leaves; it saves sending a body the store
 * would refuse on sight (a bad signature), which a worker with valid credentials does not send. Two PUTs a request (the
 * image, the result document) are two round trips saved.
 */
final class NoExpectContinue implements ExecutionInterceptor {

    @Override
    public SdkHttpRequest modifyHttpRequest(Context.ModifyHttpRequest context, ExecutionAttributes attributes) {
        SdkHttpRequest request = context.httpRequest();
        return request.firstMatchingHeader("Expect").isPresent()
                ? request.toBuilder().removeHeader("Expect").build()
                : request;
    }
}
