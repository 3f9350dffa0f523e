package io.imageworker.testing.faults;

import com.fasterxml.jackson.databind.JsonNode;
import io.imageworker.testing.faults.FaultRun.Happened;
import io.imageworker.testing.faults.FaultRun.Outcome;
import io.imageworker.testing.faults.FaultRun.StoredObject;
import io.imageworker.testing.faults.FaultScenario.Incident;
import io.imageworker.testing.gateway.Fault;
import io.imageworker.testing.gateway.RecordedCall;
import io.imageworker.testing.launch.PipelineClient;
import io.imageworker.testing.launch.PipelineClient.Result;
import java.io.PrintStream;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The figures of a fault run, computed only from what can be observed from outside the worker: the terminal events
 * on the result topics, the gateway simulator's record of every call (attributed to a request by the request id at
 * the end of its prompt; calls refused before the body is read, 401 and the cap's 429, cannot be attributed), and
 * the objects in the store. A figure marked "must be 0" that is not makes the run fail.
 *
 * <p>Causes: a billed call beyond a request's first is explained by the call before it (a hung call or a truncated
 * answer, whose outcome the worker cannot know and retries once), or by a SIGKILL between the two (the request was
 * redelivered); anything else is unexplained. A repeated terminal event is explained by a SIGKILL or a broker restart
 * between the two events (the record was delivered again and answered from its result document).
 */
public final class FaultReport {

    /** A call cut off by a SIGKILL ends, at the simulator, within this time of the kill. */
    private static final Duration CUT_OFF_WITHIN = Duration.ofSeconds(10);

    /**
     * How long after the kill's instant (read just before the signal is sent) the killed worker may still send a call:
     * the signal is on its way, and a busy machine widens that window. The next worker takes seconds to start, so no
     * call of its own arrives this soon.
     */
    private static final Duration SIGNAL_IN_FLIGHT = Duration.ofSeconds(1);

    /** A redelivery after a broker restart happens within this time of it (a rebalance, a lost commit). */
    private static final Duration REBALANCE_WITHIN = Duration.ofSeconds(60);

    private final Outcome outcome;
    private final List<Row> rows = new ArrayList<>();
    private final List<String> violations = new ArrayList<>();
    private final Map<String, Long> figures = new LinkedHashMap<>();
    private final Map<String, Long> mustBeZero = new LinkedHashMap<>();

    private FaultReport(Outcome outcome) {
        this.outcome = outcome;
    }

    /** The figures of {@code outcome}. */
    public static FaultReport of(Outcome outcome) {
        FaultReport report = new FaultReport(outcome);
        report.compute();
        return report;
    }

    /** The must-be-zero figures that are not, in words; empty when the run passed. */
    public List<String> violations() {
        return List.copyOf(violations);
    }

    /** The figures marked "must be 0", by key, whatever their value. */
    public Map<String, Long> mustBeZero() {
        return Map.copyOf(mustBeZero);
    }

    /** A figure by its key (see {@link #print}); 0 when absent. */
    public long figure(String key) {
        return figures.getOrDefault(key, 0L);
    }

    private void compute() {
        Set<String> published = outcome.publishedIds();
        List<Instant> kills = outcome.happened().stream()
                .filter(Happened::killedWorker)
                .map(Happened::start)
                .sorted()
                .toList();
        Map<String, List<Result>> events = outcome.events().stream()
                .sorted(Comparator.comparing(Result::createdAt).thenComparingLong(Result::receivedNanos))
                .collect(Collectors.groupingBy(Result::requestId, LinkedHashMap::new, Collectors.toList()));
        Map<String, List<RecordedCall>> calls = PipelineClient.byRequest(outcome.calls(), published);
        int unattributed = outcome.calls().size()
                - calls.values().stream().mapToInt(List::size).sum();
        calls.values().forEach(list -> list.sort(Comparator.comparing(RecordedCall::arrivedAt)));

        // Requests and their terminal events.
        int unpublished = outcome.requestIds().size() - published.size();
        put(
                "requests",
                "requests published",
                published.size(),
                false,
                unpublished == 0 ? "" : unpublished + " could not be published");
        if (unpublished > 0) {
            violations.add(unpublished + " request(s) could not be published (the run itself failed)");
        }
        put("events", "terminal events", outcome.events().size(), false, "");
        long missing = published.stream().filter(id -> !events.containsKey(id)).count();
        mustBeZero("missing", "requests with no terminal event", missing, "");

        Map<String, Long> duplicateCauses = new TreeMap<>();
        List<String> repeated = new ArrayList<>();
        long both = 0;
        long conflicting = 0;
        for (List<Result> list : events.values()) {
            Result first = list.get(0);
            for (Result repeat : list.subList(1, list.size())) {
                duplicateCauses.merge(duplicateCause(first, repeat, kills), 1L, Long::sum);
                repeated.add(first.requestId() + " (" + first.createdAt() + ", again " + repeat.createdAt() + ")");
            }
            boolean completed = list.stream().anyMatch(Result::completed);
            boolean failed = list.stream().anyMatch(result -> !result.completed());
            if (completed && failed) {
                both++;
            }
            if (list.stream().map(FaultReport::essence).distinct().count() > 1) {
                conflicting++;
            }
        }
        long duplicates =
                duplicateCauses.values().stream().mapToLong(Long::longValue).sum();
        // Results go out in transactions with their offsets: a read_committed consumer sees each request end once.
        mustBeZero(
                "duplicates",
                "duplicate terminal events (read_committed)",
                duplicates,
                causes(duplicateCauses)
                        + (repeated.isEmpty()
                                ? ""
                                : "; e.g. " + String.join(", ", repeated.subList(0, Math.min(3, repeated.size())))));
        Map<String, Long> uncommittedCount = new HashMap<>();
        outcome.uncommittedEvents().forEach(result -> uncommittedCount.merge(result.requestId(), 1L, Long::sum));
        put(
                "duplicates-uncommitted",
                "  seen by a read_uncommitted consumer",
                uncommittedCount.values().stream().mapToLong(count -> count - 1).sum(),
                false,
                "events of transactions left open by a kill, aborted");
        mustBeZero("both", "requests with completed AND failed events", both, "a contract break");
        mustBeZero("conflicting", "requests whose repeated events differ", conflicting, "");

        Map<String, Long> failedByCode = new TreeMap<>();
        long completedRequests = 0;
        for (List<Result> list : events.values()) {
            if (list.get(0).completed()) {
                completedRequests++;
            } else {
                failedByCode.merge(String.valueOf(list.get(0).errorCode()), 1L, Long::sum);
            }
        }
        long failedRequests =
                failedByCode.values().stream().mapToLong(Long::longValue).sum();
        put("completed", "completed (first event)", completedRequests, false, "");
        put("failed", "image-failed (first event)", failedRequests, false, causes(failedByCode));
        long unauthorized = outcome.events().stream()
                .filter(result -> "UNAUTHORIZED".equals(result.errorCode()))
                .count();
        mustBeZero("unauthorized", "UNAUTHORIZED events", unauthorized, "the default pause holds requests back");

        // The 401 storm.
        List<Happened> revocations = happened(Incident.TokenRevoked.class);
        List<Happened> caps = happened(Incident.RateLimitCap.class);
        long answered401 =
                outcome.calls().stream().filter(call -> call.status() == 401).count();
        if (!revocations.isEmpty()) {
            long cohort = 0;
            long cohortCompleted = 0;
            long completedAfterRestore = 0;
            Map<String, Long> cohortFailed = new TreeMap<>();
            long unexplained = 0;
            for (Map.Entry<String, List<Result>> entry : events.entrySet()) {
                Result first = entry.getValue().get(0);
                Instant started = timing(first, "startedAt");
                Instant ended = timing(first, "completedAt");
                if (started == null || ended == null) {
                    continue;
                }
                Happened window = revocations.stream()
                        .filter(r -> !started.isAfter(r.end()) && !ended.isBefore(r.start()))
                        .findFirst()
                        .orElse(null);
                if (window == null) {
                    continue;
                }
                cohort++;
                if (first.completed()) {
                    cohortCompleted++;
                    if (!ended.isBefore(window.end())) {
                        completedAfterRestore++;
                    }
                } else {
                    cohortFailed.merge(first.errorCode(), 1L, Long::sum);
                    boolean ownFault = calls.getOrDefault(entry.getKey(), List.of()).stream()
                            .anyMatch(call -> call.fault() != null);
                    boolean capStorm =
                            caps.stream().anyMatch(c -> !started.isAfter(c.end()) && !ended.isBefore(c.start()));
                    if (!ownFault && !capStorm) {
                        unexplained++;
                    }
                }
            }
            put("401-answers", "401 storm: calls answered 401", answered401, false, "none billed");
            put(
                    "storm-requests",
                    "401 storm: requests in progress",
                    cohort,
                    false,
                    cohortCompleted + " completed (" + completedAfterRestore + " after the token was restored)"
                            + (cohortFailed.isEmpty() ? "" : "; failed " + causes(cohortFailed)));
            mustBeZero(
                    "storm-failed",
                    "401 storm: image-failed not due to a fault",
                    unexplained,
                    "failures whose own calls took no injected fault");
        }

        // Gateway calls and billing.
        long answered429 =
                outcome.calls().stream().filter(call -> call.status() == 429).count();
        long capped = outcome.calls().stream()
                .filter(call -> call.status() == 429 && call.fault() == null)
                .count();
        put(
                "calls",
                "gateway image calls",
                outcome.calls().size(),
                false,
                (outcome.calls().size() - unattributed) + " attributed to a request; 401: " + answered401 + ", 429: "
                        + answered429 + " (" + capped + " by the concurrency cap)");
        long billed = outcome.calls().stream().filter(RecordedCall::billed).count();
        put("billed", "billed calls", billed, false, "");
        Map<String, Long> billedCauses = new TreeMap<>();
        long afterEnd = 0;
        for (Map.Entry<String, List<RecordedCall>> entry : calls.entrySet()) {
            List<RecordedCall> billedCalls =
                    entry.getValue().stream().filter(RecordedCall::billed).toList();
            for (int i = 1; i < billedCalls.size(); i++) {
                billedCauses.merge(billedCause(billedCalls.get(i - 1), billedCalls.get(i), kills), 1L, Long::sum);
            }
            List<Result> list = events.get(entry.getKey());
            if (list != null) {
                Instant end = list.get(0).createdAt();
                afterEnd += entry.getValue().stream()
                        .filter(call -> call.arrivedAt().isAfter(end))
                        .count();
            }
        }
        long beyond = billedCauses.values().stream().mapToLong(Long::longValue).sum();
        long unexplainedBilled = billedCauses.getOrDefault(UNEXPLAINED, 0L);
        put("billed-beyond-one", "billed calls beyond one per request", beyond, false, causes(billedCauses));
        mustBeZero("billed-unexplained", "  of them unexplained", unexplainedBilled, "");
        mustBeZero("calls-after-end", "calls after the request's terminal event", afterEnd, "");
        long cutOff =
                outcome.calls().stream().filter(call -> cutByKill(call, kills)).count();
        put(
                "cut-off",
                "calls cut off by a SIGKILL",
                cutOff,
                false,
                "their fate is unknown: a real gateway may bill them");

        long compared = 0;
        long disagreements = 0;
        List<String> disagreeing = new ArrayList<>();
        for (Map.Entry<String, List<Result>> entry : events.entrySet()) {
            List<RecordedCall> own = calls.getOrDefault(entry.getKey(), List.of());
            Result first = entry.getValue().get(0);
            if (!singleRun(first, own, kills)) {
                continue;
            }
            compared++;
            JsonNode billing = first.body() == null ? null : first.body().path("billing");
            long expectedBilled = own.stream().filter(FaultReport::billedAnswer).count();
            long expectedUnknown =
                    own.stream().filter(FaultReport::unknownOutcome).count();
            if (billing == null
                    || billing.path("billed").asLong(-1) != expectedBilled
                    || billing.path("unknown").asLong(-1) != expectedUnknown
                    || billing.path("calls").asLong(-1) < own.size()) {
                disagreements++;
                if (disagreeing.size() < 5) {
                    disagreeing.add(entry.getKey() + " " + billing + " vs gateway billed " + expectedBilled
                            + ", unknown " + expectedUnknown + ", calls >= " + own.size());
                }
            }
        }
        mustBeZero(
                "billing-disagreements",
                "events whose billing disagrees with the gateway",
                disagreements,
                "of " + compared + " requests run once" + (disagreeing.isEmpty() ? "" : ": " + disagreeing));

        // Stored objects.
        long checked = 0;
        long objectsMissing = 0;
        Set<String> mismatched = new java.util.TreeSet<>();
        for (Result result : outcome.events()) {
            if (!result.completed()) {
                continue;
            }
            checked++;
            String where = result.text("image", "bucket") + "/" + result.imageKey();
            StoredObject object = outcome.objects().get(where);
            if (object == null || !object.present()) {
                objectsMissing++;
            } else if (!Objects.equals(object.sha256(), result.sha256())
                    || object.bytes()
                            != result.body().path("image").path("bytes").asLong(-1)) {
                mismatched.add(where);
            }
        }
        put(
                "objects",
                "stored objects read back",
                outcome.objects().size(),
                false,
                checked + " completed events checked");
        mustBeZero("objects-missing", "completed events without their object", objectsMissing, "");
        mustBeZero(
                "sha-mismatches",
                "objects whose sha256 disagrees with their event",
                mismatched.size(),
                mismatched.isEmpty() ? "" : mismatched.toString());

        // Limits and health.
        int limit = outcome.scenario().concurrency();
        // The limit is each worker process's: a killed worker's call ends when it dies, though the gateway may count
        // it a while longer (until it notices the connection gone) while the next worker makes its own calls.
        long peak = peakPerWorker(outcome.calls(), kills);
        put(
                "peak",
                "peak concurrent image calls",
                peak,
                false,
                "limit " + limit
                        + (outcome.peak() > peak ? "; " + outcome.peak() + " as the gateway counted them" : ""));
        figures.put("limit", (long) limit);
        if (peak > limit) {
            violations.add("a worker had " + peak + " calls at once, above the limit " + limit);
        }
        long livenessRestarts = happened(Incident.LivenessRestart.class).size();
        mustBeZero(
                "liveness-restarts",
                "restarts by the liveness supervisor",
                livenessRestarts,
                "a worker that did not recover by itself");
        put("starts", "worker starts", outcome.workerStarts(), false, kills.size() + " SIGKILL");
        figures.put("uncommitted", outcome.allCommitted() ? 0L : 1L);
        rows.add(new Row("every request record committed", outcome.allCommitted() ? "yes" : "NO", false, ""));
        if (!outcome.allCommitted()) {
            violations.add("the worker did not commit every request record by the end");
        }
        if (!outcome.readyAtEnd()) {
            violations.add("the worker was not ready at the end");
        }
        outcome.unreadyWhileStoreDown().ifPresent(unready -> {
            if (!unready) {
                violations.add("the worker stayed ready while the store was down");
            }
            figures.put("unready-while-store-down", unready ? 1L : 0L);
            rows.add(new Row("worker not ready while the store was down", unready ? "yes" : "NO", false, ""));
        });
        figures.put("ready", outcome.readyAtEnd() ? 1L : 0L);
        rows.add(new Row("worker ready at the end", outcome.readyAtEnd() ? "yes" : "NO", false, ""));

        Map<String, Long> taken = outcome.calls().stream()
                .filter(call -> call.fault() != null)
                .collect(Collectors.groupingBy(call -> faultName(call.fault()), TreeMap::new, Collectors.counting()));
        put(
                "faults",
                "faults taken by calls",
                taken.values().stream().mapToLong(Long::longValue).sum(),
                false,
                causes(taken));
    }

    private static final String UNEXPLAINED = "unexplained";

    /** Why {@code next}, a billed call, was made after {@code previous}, a billed call of the same request. */
    private static String billedCause(RecordedCall previous, RecordedCall next, List<Instant> kills) {
        if (cutByKill(previous, kills)) {
            return "redelivery after SIGKILL (call cut off)";
        }
        Fault.Kind kind = previous.fault() == null ? null : previous.fault().kind();
        if (kind == Fault.Kind.HANG) {
            return "retry after a timeout (hung call)";
        }
        if (kind == Fault.Kind.TRUNCATED_BODY) {
            return "retry after a truncated answer";
        }
        if (kills.stream().anyMatch(kill -> kill.isAfter(previous.arrivedAt()) && !kill.isAfter(next.arrivedAt()))) {
            return "redelivery after SIGKILL (answered, not yet recorded)";
        }
        return UNEXPLAINED;
    }

    /** The most image calls in flight at once from one worker process: a call ends at the latest when its worker died. */
    public static long peakPerWorker(List<RecordedCall> calls, List<Instant> kills) {
        TreeMap<Instant, Integer> changes = new TreeMap<>();
        for (RecordedCall call : calls) {
            Instant end = call.finishedAt() == null ? Instant.MAX : call.finishedAt();
            for (Instant kill : kills) {
                if (kill.isAfter(call.arrivedAt()) && kill.isBefore(end)) {
                    end = kill;
                }
            }
            changes.merge(call.arrivedAt(), 1, Integer::sum);
            changes.merge(end, -1, Integer::sum);
        }
        long now = 0;
        long most = 0;
        for (int change : changes.values()) {
            now += change;
            most = Math.max(most, now);
        }
        return most;
    }

    private String duplicateCause(Result first, Result repeat, List<Instant> kills) {
        if (kills.stream().anyMatch(kill -> kill.isAfter(first.createdAt()) && !kill.isAfter(repeat.createdAt()))) {
            return "redelivery after SIGKILL";
        }
        boolean afterBrokerRestart = happened(Incident.BrokerOutage.class).stream()
                .anyMatch(outage -> !outage.end().isAfter(repeat.createdAt())
                        && outage.end().isAfter(first.createdAt().minus(REBALANCE_WITHIN)));
        return afterBrokerRestart ? "redelivery after the broker restart" : "other";
    }

    /** A call the worker could not see the end of because it was killed: no answer, ended just after a kill. */
    private static boolean cutByKill(RecordedCall call, List<Instant> kills) {
        return call.status() == 0
                && call.finishedAt() != null
                && kills.stream()
                        .anyMatch(kill -> call.arrivedAt().isBefore(kill.plus(SIGNAL_IN_FLIGHT))
                                && !call.finishedAt().isBefore(kill)
                                && call.finishedAt().isBefore(kill.plus(CUT_OFF_WITHIN)));
    }

    /**
     * Whether the request's event accounts for all of its calls: every call and the event within one worker's life,
     * none cut off by a kill.
     */
    private static boolean singleRun(Result first, List<RecordedCall> calls, List<Instant> kills) {
        int life = lifeOf(first.createdAt(), kills);
        return calls.stream().noneMatch(call -> cutByKill(call, kills) || lifeOf(call.arrivedAt(), kills) != life);
    }

    private static int lifeOf(Instant at, List<Instant> kills) {
        return (int) kills.stream().filter(kill -> !kill.isAfter(at)).count();
    }

    /** A call the worker must count as billed: an image answered (a later failed download included). */
    private static boolean billedAnswer(RecordedCall call) {
        return call.billed() && !unknownOutcome(call);
    }

    /** A call the worker must count as of unknown outcome: it hung, its answer was cut, or it got a 5xx. */
    private static boolean unknownOutcome(RecordedCall call) {
        Fault.Kind kind = call.fault() == null ? null : call.fault().kind();
        return kind == Fault.Kind.HANG
                || kind == Fault.Kind.TRUNCATED_BODY
                || kind == Fault.Kind.SERVER_ERROR
                || call.status() >= 500;
    }

    /** What two events of one request must agree on: the outcome, and the object or the error code. */
    private static String essence(Result result) {
        return result.completed()
                ? "completed " + result.imageKey() + " " + result.sha256()
                : "failed " + result.errorCode();
    }

    private static Instant timing(Result result, String field) {
        if (result.body() == null) {
            return null;
        }
        try {
            return Instant.parse(result.body().path("timings").path(field).asText());
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    private static String faultName(Fault fault) {
        return switch (fault.kind()) {
            case RATE_LIMITED -> fault.retryAfterSeconds() > 0 ? "429+Retry-After" : "429";
            case SERVER_ERROR -> "5xx";
            case HANG -> "hang";
            case TRUNCATED_BODY -> "truncated";
            case EXPIRED_URL -> "expired URL";
            default -> fault.kind().name().toLowerCase(java.util.Locale.ROOT);
        };
    }

    private List<Happened> happened(Class<? extends Incident> kind) {
        return outcome.happened().stream()
                .filter(happened -> kind.isInstance(happened.incident()))
                .toList();
    }

    private static String causes(Map<String, Long> counts) {
        if (counts.isEmpty()) {
            return "";
        }
        return counts.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .map(entry -> entry.getValue() + " " + entry.getKey())
                .collect(Collectors.joining(", "));
    }

    private void put(String key, String label, long value, boolean mustBeZero, String note) {
        figures.put(key, value);
        rows.add(new Row(label, Long.toString(value), mustBeZero, note));
    }

    private void mustBeZero(String key, String label, long value, String note) {
        put(key, label, value, true, note);
        mustBeZero.put(key, value);
        if (value != 0) {
            violations.add(label.strip() + ": " + value + (note.isEmpty() ? "" : " (" + note + ")"));
        }
    }

    /** Prints the timeline as it happened and the figures, then the verdict. */
    public void print(PrintStream out) {
        String rule = "=".repeat(100);
        FaultScenario scenario = outcome.scenario();
        out.println(rule);
        out.printf(
                " image-worker fault suite: %s, %d requests over %d s, concurrency %d, gateway %d-%d ms, seed %d%n",
                scenario.name(),
                scenario.requests(),
                scenario.publishOver().toSeconds(),
                scenario.concurrency(),
                scenario.latency().min().toMillis(),
                scenario.latency().max().toMillis(),
                scenario.seed());
        out.println(" timeline, as it happened (seconds from the first request):");
        for (Happened happened : outcome.happened().stream()
                .sorted(Comparator.comparing(Happened::start))
                .toList()) {
            out.printf(
                    "   %6.1f - %6.1f  %s%n",
                    seconds(happened.start()),
                    seconds(happened.end()),
                    happened.incident().describe());
        }
        out.println("-".repeat(100));
        for (Row row : rows) {
            out.printf(
                    " %-48s %6s  %s%s%n",
                    row.label(),
                    row.value(),
                    row.mustBeZero() ? "must be 0" + (row.note().isEmpty() ? "" : "; ") : "",
                    row.note());
        }
        out.printf(" %-48s %6d  s%n", "wall time", outcome.wall().toSeconds());
        out.println(" worker log: " + outcome.workerLog());
        out.println("-".repeat(100));
        if (violations.isEmpty()) {
            out.println(" RESULT: ok");
        } else {
            out.println(" RESULT: FAILED");
            violations.forEach(violation -> out.println("   - " + violation));
        }
        out.println(rule);
        out.flush();
    }

    private double seconds(Instant at) {
        return Duration.between(outcome.origin(), at).toMillis() / 1e3;
    }

    private record Row(String label, String value, boolean mustBeZero, String note) {}
}
