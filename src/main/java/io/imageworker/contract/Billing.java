package io.imageworker.contract;

/**
 * What one request cost at the gateway: {@code calls} sent, of which {@code billed} were answered after the gateway
 * did the work and {@code unknown} have an unknowable fate. The rest were refused before any work.
 */
public record Billing(int calls, int billed, int unknown) {

    /** A request refused locally: no call. */
    public static final Billing NONE = new Billing(0, 0, 0);

    /** This billing plus one more call of the given class. */
    public Billing plus(CallCost cost) {
        return switch (cost) {
            case NOT_SENT -> this;
            case REFUSED -> new Billing(calls + 1, billed, unknown);
            case BILLED -> new Billing(calls + 1, billed + 1, unknown);
            case UNKNOWN -> new Billing(calls + 1, billed, unknown + 1);
        };
    }

    /** This billing and {@code other} together. */
    public Billing plus(Billing other) {
        return new Billing(calls + other.calls, billed + other.billed, unknown + other.unknown);
    }

    /** What a gateway call cost, by what its outcome says about the work the gateway did. */
    public enum CallCost {
        /** Never reached the gateway (connect failure, local refusal). */
        NOT_SENT,
        /** Refused before any work (401, 404, 429). */
        REFUSED,
        /** The gateway did the work (2xx, moderation and parameter refusals). */
        BILLED,
        /** Fate unknown (timeout after sending, reset, 5xx). */
        UNKNOWN
    }
}
