package io.imageworker.messaging.sidetopics;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.imageworker.spend.BudgetLedger;
import java.io.IOException;

/**
 * How a record of the budget log is read: strictly, since anyone who may write the topic writes into every replica's
 * judgement (docs/delivery-semantics.md, Trust model). A record that is not what this version writes is {@link
 * Unusable}, with the reason it is skipped and counted for ({@link SkippedRecords}); what a record that reads may do is
 * the reader's to bound ({@link KafkaBudgetLog}).
 */
final class BudgetRecords {

    /** The longest a claim's id or a writer's id may be: the worker's own are UUIDs and host names. */
    static final int MAX_ID_LENGTH = 256;

    private BudgetRecords() {}

    /**
     * The entry {@code value} holds, read strictly: a JSON object whose {@code kind} is {@code CLAIM} or {@code
     * RELEASE}, whose {@code claim} and {@code replica} are strings of 1 to {@value #MAX_ID_LENGTH} characters,
     * whose {@code window} is a whole number, whose {@code scope}, if any, is a string, and whose {@code secret}, if
     * any, is a string of 1 to {@value #MAX_ID_LENGTH} characters. {@code limit} is not read. A release without a
     * secret reads, and the ledger gives nothing back for it ({@code BudgetLedger}).
     */
    static KafkaBudgetLog.Record read(ObjectMapper json, byte[] value) throws Unusable {
        JsonNode node;
        try {
            node = value == null ? null : json.readTree(value);
        } catch (IOException | RuntimeException e) {
            throw new Unusable(
                    SkippedRecords.Reason.UNREADABLE,
                    "not JSON: " + e.getClass().getSimpleName());
        }
        if (node == null || !node.isObject()) {
            throw new Unusable(SkippedRecords.Reason.UNREADABLE, "not a JSON object");
        }
        String kind = text(node, "kind");
        if (!"CLAIM".equals(kind) && !"RELEASE".equals(kind)) {
            throw new Unusable(SkippedRecords.Reason.UNREADABLE, "kind is neither CLAIM nor RELEASE");
        }
        String claim = text(node, "claim");
        String writer = text(node, "replica");
        JsonNode window = node.path("window");
        if (!window.isIntegralNumber() || !window.canConvertToLong()) {
            throw new Unusable(
                    window.isMissingNode() ? SkippedRecords.Reason.INCOMPLETE : SkippedRecords.Reason.UNREADABLE,
                    "window is not a whole number");
        }
        JsonNode scope = node.path("scope");
        if (!scope.isMissingNode() && !scope.isNull() && !scope.isTextual()) {
            throw new Unusable(SkippedRecords.Reason.UNREADABLE, "scope is not a string");
        }
        String secret = node.has("secret") && !node.get("secret").isNull() ? text(node, "secret") : null;
        return new KafkaBudgetLog.Record(
                BudgetLedger.Kind.valueOf(kind),
                claim,
                window.asLong(),
                0,
                writer,
                scope.isTextual() ? scope.asText() : null,
                secret);
    }

    /** The string field {@code name} of {@code node}: present, a string, 1 to {@value #MAX_ID_LENGTH} long. */
    private static String text(JsonNode node, String name) throws Unusable {
        JsonNode field = node.path(name);
        if (field.isMissingNode()
                || field.isNull()
                || (field.isTextual() && field.asText().isBlank())) {
            throw new Unusable(SkippedRecords.Reason.INCOMPLETE, name + " is missing");
        }
        if (!field.isTextual() || field.asText().length() > MAX_ID_LENGTH) {
            throw new Unusable(
                    SkippedRecords.Reason.UNREADABLE,
                    name + " is not a string of at most " + MAX_ID_LENGTH + " characters");
        }
        return field.asText();
    }

    /** Why a record of the log cannot be applied. */
    static final class Unusable extends Exception {
        final SkippedRecords.Reason reason;

        Unusable(SkippedRecords.Reason reason, String message) {
            super(message, null, false, false);
            this.reason = reason;
        }
    }
}
