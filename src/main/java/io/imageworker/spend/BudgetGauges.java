package io.imageworker.spend;

import io.imageworker.config.ProducerBudgets;
import io.imageworker.contract.ImageRequest;
import io.imageworker.support.WorkerMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * The spend guard's gauges, apart from the guard so that its constructor holds its settings and not its metrics: the
 * fleet's calls used and cap ({@link BudgetGuard#FLEET_WIDE_GAUGES}), the requests held, each named producer's calls,
 * cap and requests held, and whether the budget log's reader stalls. All are exported with a cap or without (0 or NaN),
 * so that every worker has the series the dashboard draws and the alerts name.
 */
final class BudgetGauges {

    private BudgetGauges() {}

    /**
     * The gauges of {@code guard} (its producers' caps {@code budgets}), and its
     * reader's restarts, exported with a cap or without.
     */
    static void register(BudgetGuard guard, ProducerBudgets budgets, MeterRegistry registry) {
        // Strong references (WorkerMetrics.gauge): an alert on a gauge whose object is collected would never fire.
        WorkerMetrics.gauge(
                        BudgetGuard.USED_CALLS,
                        guard,
                        BudgetGuard::used,
                        "Gateway calls claimed in the current window by the whole fleet (every replica reports the"
                                + " same count: take the max over the pods, not the sum); 0 without a cap")
                .register(registry);
        // Exported without a cap too, like the other budget gauges, but as NaN: no line is drawn and no comparison
        // holds, where 0 would read as a cap of zero calls.
        WorkerMetrics.gauge(
                        BudgetGuard.MAX_CALLS,
                        guard,
                        reading -> reading.maxCalls().map(Integer::doubleValue).orElse(Double.NaN),
                        "The cap of gateway calls per window for the whole fleet (IMAGE_WORKER_BUDGET_MAX_CALLS;"
                                + " every replica reports it: take the max over the pods, not the sum); NaN without a"
                                + " cap")
                .register(registry);
        WorkerMetrics.gauge(
                        "image_worker_budget_held_requests",
                        guard,
                        reading -> reading.held(),
                        "Requests the spend guard holds until its window allows another call")
                .register(registry);
        // One series per producer named in the setting, and the default producer; the others (no cap of their own:
        // nothing held, no cap) together as producer="other": the labels stay as few as the setting names, however
        // many producers publish, and the series exist without any producer cap (NaN caps, as the fleet's).
        Set<String> labels = new LinkedHashSet<>(budgets.named().keySet());
        labels.add(ImageRequest.DEFAULT_PRODUCER);
        labels.add(BudgetGuard.OTHERS);
        for (String producer : labels) {
            registerProducerGauges(
                    guard,
                    budgets,
                    registry,
                    producer,
                    BudgetGuard.OTHERS.equals(producer)
                            && budgets.of(BudgetGuard.OTHERS).isEmpty());
        }
        // Exported without a cap too (0, the reader's own counter once it runs), so that every worker has the series
        // the dashboard draws.
        WorkerMetrics.counter(registry, BudgetLog.READER_RESTARTS, BudgetLog.READER_RESTARTS_HELP);
        // Exported without a cap too (0), so that the alert on it names a metric every worker has.
        WorkerMetrics.gauge(
                        "image_worker_budget_reader_stalled",
                        guard,
                        reading -> reading.readerStall().isPresent() ? 1 : 0,
                        "1 while the spend guard cannot decide claims: its budget-log reader is restarting or has"
                                + " not read for too long")
                .register(registry);
    }

    /**
     * The gauges of {@code producer}'s own cap; those of the producers without one ({@code others}) read no calls and
     * no cap.
     */
    private static void registerProducerGauges(
            BudgetGuard guard, ProducerBudgets budgets, MeterRegistry registry, String producer, boolean others) {
        WorkerMetrics.gauge(
                        "image_worker_budget_producer_used_calls",
                        guard,
                        reading -> others ? 0 : reading.used(producer),
                        "Gateway calls claimed in the current window of a producer's own cap"
                                + " (IMAGE_WORKER_BUDGET_PER_PRODUCER) by the whole fleet (every replica reports"
                                + " the same count: take the max over the pods, not the sum); 0 without a cap")
                .tag("producer", producer)
                .register(registry);
        WorkerMetrics.gauge(
                        "image_worker_budget_producer_max_calls",
                        guard,
                        reading -> others
                                ? Double.NaN
                                : budgets.of(producer)
                                        .map(cap -> (double) cap.calls())
                                        .orElse(Double.NaN),
                        "A producer's own cap of gateway calls per window (IMAGE_WORKER_BUDGET_PER_PRODUCER; every"
                                + " replica reports it: take the max over the pods, not the sum); NaN without a"
                                + " cap")
                .tag("producer", producer)
                .register(registry);
        WorkerMetrics.gauge(
                        "image_worker_budget_producer_held_requests",
                        guard,
                        reading -> others ? 0 : reading.held(producer),
                        "Requests of a producer held on this replica until its own cap allows another call:"
                                + " waiting for their call, and read ahead but not taken into progress")
                .tag("producer", producer)
                .register(registry);
    }
}
