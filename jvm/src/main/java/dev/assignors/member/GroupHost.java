package dev.assignors.member;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Several members of one consumer group in one JVM, each Kafka's own {@link KafkaConsumer} in its own thread:
 * the calibration runner's Java side (calibration/, {@code make calibrate}). One JVM for many members keeps the
 * start-up cost (and the CPU it takes from the members' timing) to one JVM per group; a member that must crash
 * gets a JVM of its own, which the runner kills.
 *
 * <p>Arguments, as {@code key=value}: {@code bootstrap}, {@code group}, {@code control} (a file of commands the
 * host reads every 100 ms), {@code protocol} ({@code classic}, the default, or {@code consumer}: KIP-848),
 * {@code strategy} (classic: {@code range}, {@code roundrobin}, {@code sticky} or {@code cooperative-sticky},
 * Kafka's Java assignors; consumer: the broker's assignor, {@code group.remote.assignor}: {@code uniform} or
 * {@code range}), and optionally {@code session_ms}, {@code heartbeat_ms} (classic only: under KIP-848 both are
 * the broker's), {@code metadata_ms} ({@code metadata.max.age.ms}), {@code poll_ms}.
 *
 * <p>Commands, one per line: {@code start NAME TOPIC[,TOPIC...] [INSTANCE]} (a new member, client id NAME, static
 * when INSTANCE is given), {@code subscribe NAME TOPIC[,TOPIC...]}, {@code stop NAME} (close: it leaves the group),
 * {@code exit} (stop every member, then exit).
 *
 * <p>It prints one JSON object per line (see {@link Out}), each with {@code m}, the member's name:
 * {@code started}; {@code assigned}, {@code revoked}, {@code lost} (its rebalance listener, with
 * {@code partitions} as {@code [topic, partition]} pairs, {@code member_id} and {@code gen}); {@code fetched} (the
 * partitions one poll returned records of); {@code closed}.
 */
public final class GroupHost {
    private static final Map<String, String> CLASSIC = Map.of(
        "range", RangeAssignor.class.getName(),
        "roundrobin", RoundRobinAssignor.class.getName(),
        "sticky", StickyAssignor.class.getName(),
        "cooperative-sticky", CooperativeStickyAssignor.class.getName());

    private final Map<String, String> options;
    private final Map<String, Member> members = new ConcurrentHashMap<>();

    private GroupHost(Map<String, String> options) {
        this.options = options;
    }

    public static void main(String[] args) throws InterruptedException, IOException {
        Map<String, String> options = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq < 1) {
                throw new IllegalArgumentException("arguments are key=value, got " + arg);
            }
            options.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        GroupHost host = new GroupHost(options);
        host.config("check");  // a bad protocol or strategy fails here, before any member starts
        Runtime.getRuntime().addShutdownHook(new Thread(host::stopAll));
        Path control = Path.of(required(options, "control"));
        long read = 0;
        Out.emit("host", Map.of("group", required(options, "group")));
        while (true) {
            byte[] data = Files.readAllBytes(control);
            String text = new String(data, (int) read, data.length - (int) read, StandardCharsets.UTF_8);
            int end = text.lastIndexOf('\n') + 1;
            read += text.substring(0, end).getBytes(StandardCharsets.UTF_8).length;
            for (String line : text.substring(0, end).split("\n")) {
                String[] words = line.trim().split("\\s+");
                if (words.length == 0 || words[0].isEmpty()) {
                    continue;
                }
                if (words[0].equals("exit")) {
                    host.stopAll();
                    return;
                }
                host.command(words);
            }
            Thread.sleep(100);
        }
    }

    private void command(String[] words) {
        switch (words[0]) {
            case "start" -> {
                Member member = new Member(words[1], topics(words[2]), words.length > 3 ? words[3] : null);
                members.put(member.name, member);
                member.thread.start();
            }
            case "subscribe" -> members.get(words[1]).resubscribe = topics(words[2]);
            case "stop" -> {
                Member member = members.remove(words[1]);
                if (member != null) {
                    member.stop();
                }
            }
            default -> throw new IllegalArgumentException("unknown command " + String.join(" ", words));
        }
    }

    private void stopAll() {
        List<Member> all = new ArrayList<>(members.values());
        members.clear();
        all.forEach(Member::stop);
        for (Member member : all) {
            try {
                member.thread.join(30_000);
            } catch (InterruptedException interrupted) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static List<String> topics(String listed) {
        return Arrays.asList(listed.split(","));
    }

    private Properties config(String name) {
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, required(options, "bootstrap"));
        config.put(ConsumerConfig.GROUP_ID_CONFIG, required(options, "group"));
        config.put(ConsumerConfig.CLIENT_ID_CONFIG, name);
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "true");
        config.put(ConsumerConfig.AUTO_COMMIT_INTERVAL_MS_CONFIG, "1000");
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "latest");
        config.put(ConsumerConfig.METADATA_MAX_AGE_CONFIG, options.getOrDefault("metadata_ms", "300000"));
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
        String protocol = options.getOrDefault("protocol", "classic");
        String strategy = required(options, "strategy");
        if (protocol.equals("consumer")) {
            if (!strategy.equals("uniform") && !strategy.equals("range")) {
                throw new IllegalArgumentException("group.remote.assignor is uniform or range, got " + strategy);
            }
            config.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
            config.put(ConsumerConfig.GROUP_REMOTE_ASSIGNOR_CONFIG, strategy);
        } else if (protocol.equals("classic")) {
            String assignor = CLASSIC.get(strategy);
            if (assignor == null) {
                throw new IllegalArgumentException("classic strategy is one of " + new TreeSet<>(CLASSIC.keySet())
                    + ", got " + strategy);
            }
            config.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
            config.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, assignor);
            config.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, options.getOrDefault("session_ms", "45000"));
            config.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, options.getOrDefault("heartbeat_ms", "3000"));
        } else {
            throw new IllegalArgumentException("protocol is classic or consumer, got " + protocol);
        }
        return config;
    }

    private static List<List<Object>> pairs(Collection<TopicPartition> partitions) {
        return partitions.stream()
            .sorted((a, b) -> a.topic().equals(b.topic())
                ? Integer.compare(a.partition(), b.partition()) : a.topic().compareTo(b.topic()))
            .map(tp -> List.<Object>of(tp.topic(), tp.partition()))
            .toList();
    }

    private final class Member {
        final String name;
        final Thread thread;
        volatile boolean running = true;
        volatile List<String> resubscribe;
        volatile KafkaConsumer<byte[], byte[]> consumer;

        Member(String name, List<String> topics, String instance) {
            this.name = name;
            this.thread = new Thread(() -> run(topics, instance), "member-" + name);
        }

        void stop() {
            running = false;
            KafkaConsumer<byte[], byte[]> current = consumer;
            if (current != null) {
                current.wakeup();
            }
        }

        private void emit(String event, Collection<TopicPartition> partitions, KafkaConsumer<byte[], byte[]> c) {
            Map<String, Object> fields = new LinkedHashMap<>();
            fields.put("m", name);
            fields.put("partitions", pairs(partitions));
            if (c != null) {
                fields.put("member_id", c.groupMetadata().memberId());
                fields.put("gen", c.groupMetadata().generationId());
            }
            Out.emit(event, fields);
        }

        private void run(List<String> topics, String instance) {
            Properties config = config(name);
            if (instance != null) {
                config.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, instance);
            }
            long pollMs = Long.parseLong(options.getOrDefault("poll_ms", "100"));
            KafkaConsumer<byte[], byte[]> c = new KafkaConsumer<>(config);
            consumer = c;
            ConsumerRebalanceListener listener = new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    emit("revoked", partitions, c);
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    emit("assigned", partitions, c);
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> partitions) {
                    emit("lost", partitions, c);
                }
            };
            try {
                c.subscribe(topics, listener);
                Out.emit("started", Map.of("m", name));
                while (running) {
                    List<String> changed = resubscribe;
                    if (changed != null) {
                        resubscribe = null;
                        c.subscribe(changed, listener);
                    }
                    ConsumerRecords<byte[], byte[]> records;
                    try {
                        records = c.poll(Duration.ofMillis(pollMs));
                    } catch (WakeupException stopping) {
                        break;
                    }
                    if (!records.isEmpty()) {
                        emit("fetched", records.partitions(), null);
                    }
                }
            } catch (RuntimeException failed) {
                Out.emit("failed", Map.of("m", name, "error", String.valueOf(failed)));
            } finally {
                try {
                    c.close(Duration.ofSeconds(20));
                } finally {
                    Out.emit("closed", Map.of("m", name));
                }
            }
        }
    }

    private static String required(Map<String, String> options, String key) {
        String value = options.get(key);
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("missing " + key + "=...");
        }
        return value;
    }
}
