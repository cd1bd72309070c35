package dev.assignors.oracle;

import java.util.Map;
import java.util.function.IntSupplier;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;

/**
 * Warm timing, as a JMH run does it in one JVM: warm-up calls until {@code warmup_s} seconds and at least
 * {@code warmup} calls have passed (the JIT compiles the hot paths meanwhile), then {@code runs} timed calls.
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

    static ObjectNode time(JsonNode request, IntSupplier call, IntSupplier count) {
        double warmupSeconds = request.path("warmup_s").asDouble(2.0);
        int warmupCalls = request.path("warmup").asInt(3);
        int runs = request.path("runs").asInt(5);
        long start = System.nanoTime();
        int warmed = 0;
        while (warmed < warmupCalls || System.nanoTime() - start < warmupSeconds * 1e9) {
            call.getAsInt();
            warmed++;
        }
        ArrayNode nanos = Json.array();
        for (int i = 0; i < runs; i++) {
            long before = System.nanoTime();
            call.getAsInt();
            nanos.add(System.nanoTime() - before);
        }
        return Json.object()
                .set("nanos", nanos)
                .put("warmup_calls", warmed)
                .put("assigned", count.getAsInt());
    }
}
