package io.imageworker.contract;

import java.util.Optional;

/** What a request asks of the gateway. */
public enum Operation {
    /** Text to image: {@code POST /v1/images/generations}. */
    GENERATE("generate"),
    /** Image to image: {@code POST /v1/images/edits}. */
    EDIT("edit");

    private final String wireName;

    Operation(String wireName) {
        this.wireName = wireName;
    }

    /** The name used in events. */
    public String wireName() {
        return wireName;
    }

    /** The operation named {@code name} in a request; absent means {@link #GENERATE}. */
    public static Optional<Operation> fromWire(String name) {
        if (name == null) {
            return Optional.of(GENERATE);
        }
        for (Operation op : values()) {
            if (op.wireName.equals(name)) {
                return Optional.of(op);
            }
        }
        return Optional.empty();
    }
}
