package io.imageworker.testing.gateway;

import java.util.Locale;
import java.util.Optional;

/** The token's quota: remaining units, or unlimited; and what has been billed. */
final class Ledger {

    /** new-api skips the pre-charge when the balance is above $10 (its "trust" bypass). */
    private static final long TRUST_BYPASS_UNITS = 10 * SimulatorSettings.UNITS_PER_DOLLAR;

    private boolean unlimited;
    private long remaining;
    private long billedTotal;

    synchronized void reset(SimulatorSettings settings) {
        unlimited = settings.unlimitedQuota();
        remaining = unlimited ? 0 : settings.quota();
        billedTotal = 0;
    }

    /** A token at or below zero answers 401, like new-api's {@code RemainQuota <= 0}. */
    synchronized boolean exhausted() {
        return !unlimited && remaining <= 0;
    }

    synchronized long remaining() {
        return unlimited ? Long.MAX_VALUE : remaining;
    }

    synchronized void remaining(long units) {
        unlimited = false;
        remaining = units;
    }

    synchronized void unlimited() {
        unlimited = true;
    }

    synchronized long billedTotal() {
        return billedTotal;
    }

    /** Charges {@code units}; the balance may go below zero (the next call then gets 401). */
    synchronized void charge(long units) {
        billedTotal += units;
        if (!unlimited) {
            remaining -= units;
        }
    }

    /** new-api's 403 when a positive balance cannot cover the pre-charge, unless the trust bypass applies. */
    synchronized Optional<String> preChargeRefusal(long cost) {
        if (unlimited || remaining > TRUST_BYPASS_UNITS || remaining >= cost) {
            return Optional.empty();
        }
        return Optional.of("token quota is not enough, token remain quota: " + dollars(remaining) + ", need quota: "
                + dollars(cost));
    }

    private static String dollars(long units) {
        return String.format(Locale.ROOT, "＄%.6f", (double) units / SimulatorSettings.UNITS_PER_DOLLAR);
    }
}
