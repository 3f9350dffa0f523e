package io.imageworker.config;

import java.util.Collections;
import java.util.Map;
import java.util.Optional;

/**
 * The shares of gateway slots among producers with waiting work (contract v1.2, {@code IMAGE_WORKER_PRODUCER_WEIGHTS}):
 * {@code name=weight,...}, each weight a whole number from 1 to {@value #MAX_WEIGHT}; a producer not named weighs 1, and
 * an empty setting weighs every producer 1. With {@code catalogue=1,edits=4}, edits gets 4 slots for each one catalogue
 * gets while both wait.
 */
public final class ProducerWeights {

    /** The setting's name, in messages. */
    public static final String SETTING = "IMAGE_WORKER_PRODUCER_WEIGHTS";

    /** The largest weight: one producer may get at most this many slots for another's one. */
    public static final int MAX_WEIGHT = 1000;

    /** Every producer weighs 1. */
    public static final ProducerWeights EQUAL = new ProducerWeights(Map.of());

    private final Map<String, Integer> weights;

    private ProducerWeights(Map<String, Integer> weights) {
        this.weights = weights;
    }

    /** The weights of a setting; absent or blank: {@link #EQUAL}. */
    public static ProducerWeights of(Optional<String> setting) {
        return setting.isEmpty() ? EQUAL : parse(setting.get());
    }

    /**
     * The weights {@code text} gives ({@code catalogue=1,edits=4}; spaces around names, weights and commas ignored).
     *
     * @throws IllegalArgumentException naming the setting and the part at fault: a part without {@code =}, a name
     *     that is not a producer's ({@code [A-Za-z0-9._-]}, 1 to 64), a weight that is not a whole number from 1 to
     *     {@value #MAX_WEIGHT}, or a name given twice
     */
    public static ProducerWeights parse(String text) {
        if (text == null || text.isBlank()) {
            return EQUAL;
        }
        Map<String, Integer> weights =
                ProducerList.parse(text, "name=weight", why -> invalid(text, why), (name, weight) -> {
                    int value = ProducerList.wholeNumber(weight);
                    if (value < 1 || value > MAX_WEIGHT) {
                        throw invalid(
                                text,
                                "the weight of " + name + ", '" + weight + "', is not a whole number from 1 to "
                                        + MAX_WEIGHT);
                    }
                    return value;
                });
        return new ProducerWeights(Collections.unmodifiableMap(weights));
    }

    private static IllegalArgumentException invalid(String text, String why) {
        return new IllegalArgumentException(SETTING + "=" + text + " is not a list of name=weight: " + why
                + " (e.g. catalogue=1,edits=4; a producer not named weighs 1)");
    }

    /** The weight of {@code producer}: its own, or 1. */
    public int of(String producer) {
        return weights.getOrDefault(producer, 1);
    }

    /** The producers named, with their weights, in the setting's order. */
    public Map<String, Integer> named() {
        return weights;
    }

    @Override
    public String toString() {
        return weights.isEmpty() ? "every producer 1" : weights + ", others 1";
    }
}
