package io.imageworker.testing.gateway;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.UncheckedIOException;
import java.util.UUID;

/** The gateway's answer bodies, byte for byte as the open-source gateway writes them (gateway contract §2, §7). */
final class Envelopes {

    static final ObjectMapper JSON = new ObjectMapper();

    private Envelopes() {}

    /**
     * Envelope A, a gateway-side abort: keys sorted, no {@code param}, request id appended to the message.
     *
     * <pre>{"error":{"code":"","message":"Invalid token (request id: ...)","type":"new_api_error"}}</pre>
     */
    static String gatewayAbort(String message, String code, String requestId) {
        ObjectNode error = JSON.createObjectNode();
        error.put("code", code);
        error.put("message", withRequestId(message, requestId));
        error.put("type", "new_api_error");
        return wrap(error);
    }

    /** Envelope B, a relay-side error: {@code message,type,param,code}, request id appended. */
    static String relayError(String message, String code, String requestId) {
        ObjectNode error = JSON.createObjectNode();
        error.put("message", withRequestId(message, requestId));
        error.put("type", "new_api_error");
        error.put("param", "");
        error.put("code", code);
        return wrap(error);
    }

    /** Envelope C, an upstream error passed through: no request id; {@code code} may be {@code null}. */
    static String upstreamError(String message, String type, String param, String code) {
        ObjectNode error = JSON.createObjectNode();
        error.put("message", message);
        error.put("type", type);
        error.put("param", param == null ? "" : param);
        if (code == null) {
            error.putNull("code");
        } else {
            error.put("code", code);
        }
        return wrap(error);
    }

    /** The 404 of any unmatched API path, OpenAI's wording with {@code ""} for param and code. */
    static String invalidUrl(String method, String path) {
        ObjectNode error = JSON.createObjectNode();
        error.put("message", "Invalid URL (" + method + " " + path + ")");
        error.put("type", "invalid_request_error");
        error.put("param", "");
        error.put("code", "");
        return wrap(error);
    }

    /** OpenAI's moderation refusal as new-api relays it: extra fields dropped, the help domain masked. */
    static String moderationRefusal() {
        return upstreamError(
                "Your request was rejected by the safety system. If you believe this is an error, contact us at"
                        + " ***.***.com and include the request ID " + UUID.randomUUID()
                        + ". safety_violations=[sexual].",
                "image_generation_user_error",
                "",
                "moderation_blocked");
    }

    /** An upstream 429 relayed. */
    static String upstreamRateLimit(String model) {
        return upstreamError(
                "Rate limit reached for " + model + " on images per minute. Please try again later.",
                "requests",
                "",
                "rate_limit_exceeded");
    }

    /** What new-api answers when the upstream error body is not JSON (an HTML 502/504/524 from upstream). */
    static String badResponseStatusCode() {
        return upstreamError("openai_error", "bad_response_status_code", "", "bad_response_status_code");
    }

    /** The web console's index page, served for any path outside the API in stock new-api. */
    static String consolePage() {
        return "<!doctype html><html lang=\"zh\"><head><meta charset=\"utf-8\" />"
                + "<link rel=\"icon\" href=\"/logo.png\" />"
                + "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1.0\" />"
                + "<meta name=\"description\" content=\"OpenAI 接口聚合管理，支持多种渠道\" />"
                + "<title>New API</title>"
                + "<script type=\"module\" crossorigin src=\"/assets/index-sim.js\"></script>"
                + "<link rel=\"stylesheet\" crossorigin href=\"/assets/index-sim.css\"></head>"
                + "<body><noscript>You need to enable JavaScript to run this app.</noscript>"
                + "<div id=\"root\"></div></body></html>\n";
    }

    /** A reverse proxy's error page: nginx for 502/504 and most others, Cloudflare for 52x. */
    static String proxyPage(int status) {
        if (status >= 520 && status <= 527) {
            String reason = status == 524 ? "A timeout occurred" : "Web server returned an unknown error";
            return "<!DOCTYPE html>\n<!--[if lt IE 7]> <html class=\"no-js ie6 oldie\" lang=\"en-US\"> <![endif]-->\n"
                    + "<html class=\"no-js\" lang=\"en-US\"><head><title>gateway.example | " + status + ": " + reason
                    + "</title><meta charset=\"UTF-8\" /></head><body><div id=\"cf-wrapper\">"
                    + "<h1><span class=\"inline-block\">" + reason + "</span> <span class=\"code-label\">Error code "
                    + status + "</span></h1><p>The origin web server timed out responding to this request.</p>"
                    + "<p>Cloudflare Ray ID: <strong>8c1f00simulator</strong></p></div></body></html>\n";
        }
        String reason =
                switch (status) {
                    case 502 -> "Bad Gateway";
                    case 503 -> "Service Temporarily Unavailable";
                    case 504 -> "Gateway Time-out";
                    default -> "Error";
                };
        return "<html>\r\n<head><title>" + status + " " + reason + "</title></head>\r\n<body>\r\n<center><h1>" + status
                + " " + reason + "</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n";
    }

    static String withRequestId(String message, String requestId) {
        return message + " (request id: " + requestId + ")";
    }

    static String write(Object node) {
        try {
            return JSON.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String wrap(ObjectNode error) {
        ObjectNode root = JSON.createObjectNode();
        root.set("error", error);
        return write(root);
    }
}
