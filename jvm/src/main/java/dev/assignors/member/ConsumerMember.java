package dev.assignors.member;

import java.time.Duration;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.KafkaException;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * One member of a consumer group: kafka-clients' {@link KafkaConsumer} (classic protocol) with Kafka's own
 * cooperative-sticky assignor, for the tests that put it in one group with Python consumers.
 *
 * <p>Arguments, as {@code key=value}: {@code bootstrap}, {@code group}, {@code topic}, {@code name} (the client id,
 * which starts every member id the coordinator gives it), and optionally {@code instance} (group.instance.id:
 * a static member), {@code session_ms}, {@code heartbeat_ms}.
 *
 * <p>It prints one JSON object per line (see {@link Out}): {@code started}; {@code assigned}, {@code revoked},
 * {@code lost} (its rebalance listener, with the partitions); {@code led} and {@code received} (the assignor's
 * view, see {@link LoggingCooperativeStickyAssignor}); {@code record} (partition, offset, key) for each record
 * consumed; {@code committed} (partition to next offset) after each successful commit; {@code closed}. It consumes
 * until SIGTERM, then closes the consumer (committing and leaving the group) within 30 s; SIGKILL is a crash.
 */
public final class ConsumerMember {
    private ConsumerMember() {}

    public static void main(String[] args) throws InterruptedException {
        Map<String, String> options = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            if (eq < 1) {
                throw new IllegalArgumentException("arguments are key=value, got " + arg);
            }
            options.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        String topic = required(options, "topic");
        Properties config = new Properties();
        config.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, required(options, "bootstrap"));
        config.put(ConsumerConfig.GROUP_ID_CONFIG, required(options, "group"));
        config.put(ConsumerConfig.CLIENT_ID_CONFIG, required(options, "name"));
        config.put(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "classic");
        config.put(ConsumerConfig.PARTITION_ASSIGNMENT_STRATEGY_CONFIG, LoggingCooperativeStickyAssignor.class.getName());
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        config.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        config.put(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG, options.getOrDefault("session_ms", "4000"));
        config.put(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG, options.getOrDefault("heartbeat_ms", "500"));
        config.put(ConsumerConfig.MAX_POLL_INTERVAL_MS_CONFIG, "30000");
        config.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        config.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        if (options.containsKey("instance")) {
            config.put(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG, options.get("instance"));
        }

        AtomicBoolean running = new AtomicBoolean(true);
        CountDownLatch done = new CountDownLatch(1);
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            running.set(false);
            consumer.wakeup();
            try {
                done.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException ignored) {
                Thread.currentThread().interrupt();
            }
        }));
        Map<TopicPartition, OffsetAndMetadata> pending = new HashMap<>();
        try {
            consumer.subscribe(List.of(topic), new ConsumerRebalanceListener() {
                @Override
                public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
                    commit(consumer, pending, partitions);  // what it processed of them, before another takes them
                    Out.emit("revoked", Map.of("partitions", Out.partitions(partitions)));
                }

                @Override
                public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
                    Out.emit("assigned", Map.of("partitions", Out.partitions(partitions)));
                }

                @Override
                public void onPartitionsLost(Collection<TopicPartition> partitions) {
                    partitions.forEach(pending::remove);  // no longer ours to commit
                    Out.emit("lost", Map.of("partitions", Out.partitions(partitions)));
                }
            });
            Out.emit("started");
            while (running.get()) {
                ConsumerRecords<String, String> records;
                try {
                    records = consumer.poll(Duration.ofMillis(200));
                } catch (WakeupException stopping) {
                    break;
                }
                for (ConsumerRecord<String, String> record : records) {
                    Map<String, Object> fields = new LinkedHashMap<>();
                    fields.put("p", record.partition());
                    fields.put("o", record.offset());
                    fields.put("k", record.key());
                    Out.emit("record", fields);
                    pending.put(new TopicPartition(record.topic(), record.partition()),
                        new OffsetAndMetadata(record.offset() + 1));
                }
                if (!pending.isEmpty()) {
                    try {
                        commit(consumer, pending, null);
                    } catch (WakeupException stopping) {
                        break;
                    }
                }
            }
        } finally {
            try {
                consumer.close(Duration.ofSeconds(20));
            } finally {
                Out.emit("closed");
                done.countDown();
            }
        }
    }

    /** Commit what was processed (of {@code only}, or all), print it, forget it; a failed commit is printed. */
    private static void commit(KafkaConsumer<String, String> consumer, Map<TopicPartition, OffsetAndMetadata> pending,
                               Collection<TopicPartition> only) {
        Map<TopicPartition, OffsetAndMetadata> offsets = new HashMap<>();
        pending.forEach((tp, offset) -> {
            if (only == null || only.contains(tp)) {
                offsets.put(tp, offset);
            }
        });
        if (offsets.isEmpty()) {
            return;
        }
        try {
            consumer.commitSync(offsets, Duration.ofSeconds(10));
        } catch (WakeupException stopping) {
            throw stopping;
        } catch (KafkaException failed) {
            Out.emit("commit-failed", Map.of("error", failed.getClass().getSimpleName()));
            return;
        }
        Map<String, Object> committed = new TreeMap<>();
        offsets.forEach((tp, offset) -> {
            committed.put(String.valueOf(tp.partition()), offset.offset());
            pending.remove(tp, offset);
        });
        Out.emit("committed", Map.of("offsets", committed));
    }

    private static String required(Map<String, String> options, String key) {
        String value = options.get(key);
        if (value == null || value.isEmpty()) {
            throw new IllegalArgumentException("missing " + key + "=...");
        }
        return value;
    }
}
