package io.imageworker.console;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.imageworker.api.ProducerLines;
import io.imageworker.api.RequestStates;
import io.imageworker.config.ProducerBudgets;
import io.imageworker.gateway.GatewayGuard;
import io.imageworker.spend.BudgetGuard;
import io.imageworker.spend.BudgetSettings;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * The queue as this replica holds it, for the console: what {@code GET /requests/{requestId}} knows of each request,
 * for all of them at once. Each producer's line in each lane and how many wait in it, the first requests of each line
 * with their positions, the requests whose call has left, the rate of calls, the partitions owned, whether intake is
 * paused and why, and the spend against each cap in its current window (as far as this replica has read the shared
 * budget). Read from memory only, in one pass over the requests waiting.
 *
 * <p>A producer's view ({@link ConsoleAccess.Viewer}) holds only what is its own: its lines, each with the rate at
 * which its requests left it by their first call lately (what its status estimates rest on), its requests waiting
 * and calling, its cap and the requests of it the spend guard holds; not the counts of the whole replica (in progress,
 * read ahead), its calls per second, nor the fleet's cap, which tell of the other producers' requests. The partitions
 * owned stay (the replica's, not a producer's), and so do the reasons intake is paused that are not another
 * producer's: the gateway's pause, the spend guard's reader, and its own requests held for its own cap.
 */
final class QueueView {

    /** How many of each line's first requests are listed. */
    static final int PER_LINE = 20;
    /** How many of the requests whose call has left are listed. */
    static final int CALLING = 100;

    private final RequestStates states;
    private final GatewayGuard gateway;
    private final BudgetGuard budget;
    private final BudgetSettings config;

    QueueView(RequestStates states, GatewayGuard gateway, BudgetGuard budget, BudgetSettings config) {
        this.states = states;
        this.gateway = gateway;
        this.budget = budget;
        this.config = config;
    }

    /** The queue now, as the operator sees it. */
    Queue now() {
        return now(ConsoleAccess.OPERATOR);
    }

    /** The queue now, as {@code viewer} sees it. */
    Queue now(ConsoleAccess.Viewer viewer) {
        List<Line> lines = new ArrayList<>();
        for (ProducerLines.LineCount line : states.lines()) {
            if (!viewer.sees(line.producer())) {
                continue;
            }
            OptionalDouble own = states.ownCallsPerSecond(line.lane(), line.producer());
            lines.add(new Line(
                    line.lane().name().toLowerCase(Locale.ROOT),
                    line.producer(),
                    line.waiting(),
                    budget.holds(line.producer()),
                    own.isPresent() ? rounded(own.getAsDouble()) : null));
        }
        lines.sort(Comparator.comparing(Line::lane).thenComparing(Line::producer));
        List<Queued> queued = new ArrayList<>();
        for (ProducerLines.Queued request : states.firstInLines(PER_LINE)) {
            if (!viewer.sees(request.producer())) {
                continue;
            }
            // In topic mode a request waits under <producer>/<requestId> (RequestsInProgress.name): its id is after the
            // '/',
            // which no requestId holds.
            String name = request.requestId();
            queued.add(new Queued(
                    name.substring(name.indexOf('/') + 1),
                    request.lane().name().toLowerCase(Locale.ROOT),
                    request.producer(),
                    request.position()));
        }
        queued.sort(Comparator.comparing(Queued::lane)
                .thenComparing(Queued::producer)
                .thenComparingLong(Queued::position));
        List<String> reasons = new ArrayList<>();
        if (!gateway.isOpen()) {
            reasons.add("the gateway refuses the token or the address is wrong (" + gateway.pausedBy()
                    + "): intake resumes by itself when it answers again");
        }
        int held = viewer.operator() ? budget.held() : budget.held(viewer.producer());
        if (held > 0) {
            reasons.add(held + " request(s) held by the spend guard until its next window");
        }
        budget.readerStall().ifPresent(stall -> reasons.add("the spend guard's budget reader: " + stall));
        Optional<RequestStates.Owned> owned = states.owned();
        return new Queue(
                owned.map(RequestStates.Owned::owned).orElse(null),
                owned.map(RequestStates.Owned::total)
                        .filter(total -> total >= 0)
                        .orElse(null),
                viewer.operator() && states.callsPerSecond().isPresent()
                        ? rounded(states.callsPerSecond().getAsDouble())
                        : null,
                viewer.operator() ? states.size() : null,
                viewer.operator() ? states.waitingCount() : null,
                lines,
                queued,
                viewer.operator()
                        ? states.calling(CALLING)
                        : states.calling(CALLING, name -> name.startsWith(viewer.producer() + "/")).stream()
                                .map(name -> name.substring(name.indexOf('/') + 1))
                                .toList(),
                new Intake(!reasons.isEmpty(), reasons),
                spend(viewer));
    }

    private static double rounded(double perSecond) {
        return Math.round(perSecond * 100) / 100.0;
    }

    private List<Cap> spend(ConsoleAccess.Viewer viewer) {
        List<Cap> caps = new ArrayList<>();
        BudgetSettings fleet = config;
        if (viewer.operator()) {
            fleet.maxCalls()
                    .ifPresent(max -> caps.add(
                            new Cap(null, max, budget.used(), fleet.window().toString(), budget.held())));
        }
        ProducerBudgets producers = budget.producerBudgets();
        producers.named().entrySet().stream()
                .filter(named -> viewer.sees(named.getKey()))
                .forEach(named -> caps.add(new Cap(
                        named.getKey(),
                        named.getValue().calls(),
                        budget.used(named.getKey()),
                        named.getValue().window().toString(),
                        budget.held(named.getKey()))));
        return caps;
    }

    /** The queue of this replica. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Queue(
            Integer partitionsOwned,
            Integer partitionsTotal,
            Double callsPerSecond,
            Integer inProgress,
            Integer readAhead,
            List<Line> lines,
            List<Queued> queued,
            List<String> calling,
            Intake intake,
            List<Cap> spend) {}

    /**
     * A producer's line in a lane; with producers taken from their topics, the rate at which its requests left it by
     * their first call lately ({@code callsPerSecond}, absent without one).
     */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Line(String lane, String producer, long waiting, boolean overCap, Double callsPerSecond) {}

    /** A request waiting in its line. */
    record Queued(String requestId, String lane, String producer, long position) {}

    /** Whether intake is paused, and why. */
    record Intake(boolean paused, List<String> reasons) {}

    /** A cap (the fleet's when {@code producer} is null): calls allowed and used in its current window. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Cap(String producer, int maxCalls, int usedCalls, String window, int held) {}
}
