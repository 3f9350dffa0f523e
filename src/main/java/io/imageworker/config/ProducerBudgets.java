package io.imageworker.config;

import java.time.Duration;
import java.util.Collections;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The caps of single producers (contract v1.2, {@code IMAGE_WORKER_BUDGET_PER_PRODUCER}): {@code name=calls/window,...}
 * ({@code catalogue=5000/1h,edits=200/10m}), each the most gateway calls that may be billed for that producer's
 * requests in one window of its own length (aligned on the epoch, as the fleet's), for the whole fleet, on top of the
 * fleet's cap. A producer not named has no cap of its own; an empty setting caps none. Windows are written as a whole
 * number and a unit: {@code ms}, {@code s}, {@code m}, {@code h} or {@code d}.
 */
public final class ProducerBudgets {

    /** The setting's name, in messages. */
    public static final String SETTING = "IMAGE_WORKER_BUDGET_PER_PRODUCER";

    /** No producer has a cap of its own. */
    public static final ProducerBudgets NONE = new ProducerBudgets(Map.of());

    /** The shortest window: a cap per shorter window would only add records to the budget log. */
    public static final Duration MIN_WINDOW = Duration.ofSeconds(1);

    private static final Pattern WINDOW = Pattern.compile("([0-9]{1,9})(ms|s|m|h|d)");

    /** One producer's cap: at most {@code calls} per {@code window}. */
    public record Cap(int calls, Duration window) {}

    private final Map<String, Cap> caps;

    private ProducerBudgets(Map<String, Cap> caps) {
        this.caps = caps;
    }

    /** The caps of a setting; absent or blank: {@link #NONE}. */
    public static ProducerBudgets of(Optional<String> setting) {
        return setting.isEmpty() ? NONE : parse(setting.get());
    }

    /**
     * The caps of a setting, or {@link #NONE} when it is malformed: for the beans built at start, which must not fail
     * before the start-up check names the problem and stops the worker ({@code health.ConfigurationCheck}).
     */
    public static ProducerBudgets orNone(Optional<String> setting) {
        try {
            return of(setting);
        } catch (IllegalArgumentException malformed) {
            return NONE;
        }
    }

    /**
     * The caps {@code text} gives ({@code catalogue=5000/1h}; spaces around the parts ignored).
     *
     * @throws IllegalArgumentException naming the setting and the part at fault: a part without {@code =} or {@code
     *     /}, a name that is not a producer's ({@code [A-Za-z0-9._-]}, 1 to 64), calls that are not a whole number
     *     from 1, a window that is not a whole number and a unit of at least a second, or a name given twice
     */
    public static ProducerBudgets parse(String text) {
        if (text == null || text.isBlank()) {
            return NONE;
        }
        Map<String, Cap> caps =
                ProducerList.parse(text, "name=calls/window", why -> invalid(text, why), (name, value) -> {
                    int slash = value.indexOf('/');
                    if (slash < 0) {
                        throw invalid(text, "'" + name + "=" + value + "' is not name=calls/window");
                    }
                    String calls = value.substring(0, slash).trim();
                    String window = value.substring(slash + 1).trim();
                    int cap = ProducerList.wholeNumber(calls);
                    if (cap < 1) {
                        throw invalid(
                                text, "the calls of " + name + ", '" + calls + "', are not a whole number from 1");
                    }
                    Duration length = window(window);
                    if (length == null || length.compareTo(MIN_WINDOW) < 0) {
                        throw invalid(
                                text,
                                "the window of " + name + ", '" + window
                                        + "', is not a whole number and a unit (ms, s, m, h, d) of at least 1s");
                    }
                    return new Cap(cap, length);
                });
        return new ProducerBudgets(Collections.unmodifiableMap(caps));
    }

    private static Duration window(String text) {
        Matcher matcher = WINDOW.matcher(text);
        if (!matcher.matches()) {
            return null;
        }
        long amount = Long.parseLong(matcher.group(1));
        return switch (matcher.group(2)) {
            case "ms" -> Duration.ofMillis(amount);
            case "s" -> Duration.ofSeconds(amount);
            case "m" -> Duration.ofMinutes(amount);
            case "h" -> Duration.ofHours(amount);
            default -> Duration.ofDays(amount);
        };
    }

    private static IllegalArgumentException invalid(String text, String why) {
        return new IllegalArgumentException(SETTING + "=" + text + " is not a list of name=calls/window: " + why
                + " (e.g. catalogue=5000/1h,edits=200/10m; a producer not named has no cap of its own)");
    }

    /** The cap of {@code producer}, if it has one. */
    public Optional<Cap> of(String producer) {
        return Optional.ofNullable(caps.get(producer));
    }

    /** The producers named, with their caps, in the setting's order. */
    public Map<String, Cap> named() {
        return caps;
    }

    /** Whether no producer has a cap. */
    public boolean isEmpty() {
        return caps.isEmpty();
    }

    @Override
    public String toString() {
        return caps.isEmpty() ? "no producer capped" : caps.toString();
    }
}
