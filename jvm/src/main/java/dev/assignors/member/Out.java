package dev.assignors.member;

import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One JSON object per line on stdout, each stamped with {@code t}: CLOCK_MONOTONIC in seconds ({@link
 * System#nanoTime()} on Linux), the clock Python's {@code time.monotonic()} reads, so the events of every member
 * of a test sort into one timeline. Lines not starting with '{' (the clients' own log) are not ours.
 */
final class Out {
    private Out() {}

    static synchronized void emit(String event, Map<String, Object> fields) {
        Map<String, Object> line = new TreeMap<>(fields);
        line.put("e", event);
        line.put("t", System.nanoTime() / 1e9);
        StringBuilder out = new StringBuilder();
        write(out, line);
        System.out.println(out);
        System.out.flush();
    }

    static void emit(String event) {
        emit(event, Map.of());
    }

    private static void write(StringBuilder out, Object value) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof Number || value instanceof Boolean) {
            out.append(value);
        } else if (value instanceof Map<?, ?> map) {
            out.append('{');
            Iterator<? extends Map.Entry<?, ?>> entries = map.entrySet().iterator();
            while (entries.hasNext()) {
                Map.Entry<?, ?> entry = entries.next();
                string(out, String.valueOf(entry.getKey()));
                out.append(':');
                write(out, entry.getValue());
                if (entries.hasNext()) {
                    out.append(',');
                }
            }
            out.append('}');
        } else if (value instanceof Collection<?> items) {
            out.append('[');
            Iterator<?> each = items.iterator();
            while (each.hasNext()) {
                write(out, each.next());
                if (each.hasNext()) {
                    out.append(',');
                }
            }
            out.append(']');
        } else {
            string(out, value.toString());
        }
    }

    private static void string(StringBuilder out, String text) {
        out.append('"');
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    static List<Integer> partitions(Collection<org.apache.kafka.common.TopicPartition> partitions) {
        return partitions.stream().map(org.apache.kafka.common.TopicPartition::partition).sorted().toList();
    }
}
