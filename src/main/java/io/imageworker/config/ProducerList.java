package io.imageworker.config;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The form the settings per producer share ({@link ProducerWeights}, {@link ProducerBudgets}): {@code
 * name=value,...}, spaces around names, values and commas ignored, each name a producer's and named once.
 */
final class ProducerList {

    /** The rule of a producer's name (contract v1.2), as {@code ImageRequest.PRODUCER}. */
    static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");

    private ProducerList() {}

    /**
     * Each producer of {@code text} with its value, read by {@code value} (given the name and the value's text; it
     * throws {@code invalid}'s exception for a value it refuses), in the setting's order.
     *
     * @param form the form of one entry, in messages ({@code name=weight})
     * @param invalid the exception for the setting, given why it is refused
     */
    static <T> Map<String, T> parse(
            String text,
            String form,
            Function<String, IllegalArgumentException> invalid,
            BiFunction<String, String, T> value) {
        Map<String, T> values = new LinkedHashMap<>();
        for (String part : text.split(",", -1)) {
            String entry = part.trim();
            int equals = entry.indexOf('=');
            if (equals < 0) {
                throw invalid.apply("'" + entry + "' is not " + form);
            }
            String name = entry.substring(0, equals).trim();
            if (!NAME.matcher(name).matches()) {
                throw invalid.apply("'" + name + "' is not a producer name (1 to 64 characters of [A-Za-z0-9._-])");
            }
            T read = value.apply(name, entry.substring(equals + 1).trim());
            if (values.put(name, read) != null) {
                throw invalid.apply(name + " is named twice");
            }
        }
        return values;
    }

    /** {@code text} as a whole number, or 0 when it is none. */
    static int wholeNumber(String text) {
        try {
            return Integer.parseInt(text);
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
