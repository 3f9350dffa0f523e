package io.imageworker.contract;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * An image given to an edit: either {@code uri} ({@code s3://bucket/key} or {@code https://host/path}) or inline
 * {@code base64} with a declared {@code contentType}. The real format is always read from the bytes.
 */
@JsonIgnoreProperties(ignoreUnknown = true)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record ImageSource(String uri, String base64, String contentType) {}
