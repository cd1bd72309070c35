package dev.assignors.oracle;

import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.ToIntFunction;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;

/**
 * Warm timing, as a JMH run does it in one JVM: warm-up calls until {@code warmup_s} seconds and at least
 * {@code warmup} calls have passed (the JIT compiles the hot paths meanwhile), then {@code runs} timed calls, or
 * fewer, at least {@code min_runs}, once the timed calls have taken {@code budget_s} seconds (a call of Kafka's
 * that takes tens of seconds).
 *
 * <p>The answer: {@code nanos} (one per timed call), {@code cpu_nanos} (the JVM's CPU time during each),
 * {@code warmup_calls}, {@code assigned} (partitions in the last timed call's result), {@code jvm} and, when the
 * request asks {@code "result": true}, that result itself ({@code assignments}, as {@code assign} /
 * {@code server_assign} answer it) so that the caller checks it as it checks its own.
 */
final class Bench {
    private Bench() {}

    static int assigned(Map<String, Assignment> result) {
        int total = 0;
        for (Assignment assignment : result.values()) {
            total += assignment.partitions().size();
        }
        return total;
    }

    /** The JVM's CPU time (every thread: the call's, the JIT's, the collector's), or -1 where it does not tell. */
    static long processCpuNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }

    /**
     * Times {@code call}; {@code reset} runs before each call, untimed (Kafka's assignors read the members' user data
     * buffers, moving their position: a real leader deserializes fresh ones for every rebalance).
     */
    static <T> ObjectNode time(JsonNode request, Runnable reset, Supplier<T> call, ToIntFunction<T> count,
            Function<T, ObjectNode> describe) {
        double warmupSeconds = request.path("warmup_s").asDouble(2.0);
        int warmupCalls = request.path("warmup").asInt(3);
        int runs = request.path("runs").asInt(5);
        int minRuns = request.path("min_runs").asInt(runs);
        double budgetSeconds = request.path("budget_s").asDouble(Double.POSITIVE_INFINITY);
        long start = System.nanoTime();
        int warmed = 0;
        T last = null;
        while (warmed < warmupCalls || System.nanoTime() - start < warmupSeconds * 1e9) {
            reset.run();
            last = call.get();
            warmed++;
        }
        ArrayNode nanos = Json.array();
        ArrayNode cpuNanos = Json.array();
        long timed = System.nanoTime();
        for (int i = 0; i < runs && (i < minRuns || System.nanoTime() - timed < budgetSeconds * 1e9); i++) {
            reset.run();
            long beforeCpu = processCpuNanos();
            long before = System.nanoTime();
            last = call.get();
            nanos.add(System.nanoTime() - before);
            cpuNanos.add(processCpuNanos() - beforeCpu);
        }
        ObjectNode answer = Json.object()
                .set("nanos", nanos)
                .set("cpu_nanos", cpuNanos)
                .put("warmup_calls", warmed)
                .put("assigned", count.applyAsInt(last))
                .put("jvm", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
        if (request.path("result").asBoolean(false)) {
            answer.set("assignments", describe.apply(last).get("assignments"));
        }
        return answer;
    }
}
