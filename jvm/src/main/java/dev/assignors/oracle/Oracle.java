package dev.assignors.oracle;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;

/**
 * Kafka's own assignors and wire format as a live oracle: one JSON request per line on stdin, one JSON answer per
 * line on stdout, until stdin closes.
 *
 * <p>Every request has an {@code op} ({@code assign}, {@code server_assign}, {@code encode_subscription},
 * {@code decode_subscription}, {@code encode_assignment}, {@code decode_assignment},
 * {@code encode_sticky_user_data}, {@code bench}, {@code server_bench}, {@code version}). An answer is either the
 * op's result or {@code {"error": "Class: message", "trace": "..."}} when Kafka's code threw: that is an answer too
 * (Kafka refusing an input), not a failure of the oracle. The first line out is {@code {"ready": VERSION}}. Logging
 * goes to stderr, never stdout.
 */
public final class Oracle {
    private Oracle() {}

    static ObjectNode handle(JsonNode request) {
        String op = Json.required(request, "op").asText();
        switch (op) {
            case "version":
                return Json.object().put("version", kafkaVersion());
            case "assign":
                return Classic.assign(request);
            case "bench":
                return Classic.bench(request);
            case "server_assign":
                return Server.assign(request);
            case "server_bench":
                return Server.bench(request);
            case "encode_subscription":
                return Wire.encodeSubscription(request);
            case "decode_subscription":
                return Wire.decodeSubscription(request);
            case "encode_assignment":
                return Wire.encodeAssignment(request);
            case "decode_assignment":
                return Wire.decodeAssignment(request);
            case "encode_sticky_user_data":
                return Wire.encodeStickyUserData(request);
            default:
                throw new IllegalArgumentException("unknown op '" + op + "'");
        }
    }

    /** The version of the Kafka clients jar on the classpath (its kafka/kafka-version.properties). */
    static String kafkaVersion() {
        java.util.Properties props = new java.util.Properties();
        try (java.io.InputStream in = Oracle.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            props.load(in);
        } catch (java.io.IOException | NullPointerException e) {
            return "unknown";
        }
        return props.getProperty("version", "unknown");
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false,
                StandardCharsets.UTF_8);
        System.setOut(System.err); // nothing but answers on the protocol's stream
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 20);
        out.println(Json.object().put("ready", kafkaVersion()).toString());
        out.flush();
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            ObjectNode answer;
            try {
                answer = handle(JsonNode.parse(line));
            } catch (Exception | StackOverflowError e) {
                StringWriter trace = new StringWriter();
                e.printStackTrace(new PrintWriter(trace));
                answer = Json.object().put("error", e.getClass().getName() + ": " + e.getMessage())
                        .put("trace", trace.toString());
            }
            out.println(answer.toString());
            out.flush();
        }
    }
}
