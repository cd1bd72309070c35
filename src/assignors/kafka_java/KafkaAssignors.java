import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * Kafka's own classic assignors, unmodified, for {@code assignors.kafka_java}: a leader's
 * {@code ConsumerPartitionAssignor.assign(Cluster, GroupSubscription)} per request, over stdin and stdout.
 *
 * <p>Run as a single-file source program (JEP 330, Java 11 and later) on a classpath with Kafka's
 * {@code kafka-clients} jar and its {@code slf4j-api}: {@code java -cp JARS KafkaAssignors.java}. It first writes
 * one frame holding the kafka-clients version it runs. Every frame is an INT32 size then its bytes; strings are an
 * INT32 length then UTF-8.
 *
 * <p>A request: the assignor ({@code range}, {@code roundrobin}, {@code sticky}, {@code cooperative-sticky}); the
 * topics (count, then name and partition count each); the partitions with replica racks (count, then topic,
 * partition and its racks); the members (count, then member id, group instance id or an empty string, and the
 * subscription as {@code ConsumerProtocol.serializeSubscription} writes it). The subscriptions go in a
 * {@code HashMap} in the order given, as the leader's {@code ConsumerCoordinator} builds it from the JoinGroup
 * response. The answer: status 0, then each member (sorted) and its {@code ConsumerProtocol.serializeAssignment}
 * bytes; or status 1 and what Kafka's code threw (its class, message and stack trace).
 */
public final class KafkaAssignors {
    private KafkaAssignors() {}

    public static void main(String[] args) throws IOException {
        // The frames own the process's standard output; whatever else writes to System.out (the logging backend a
        // Kafka installation's libs carry, Kafka's own warnings) goes to standard error, set before any of it loads.
        DataOutputStream out = new DataOutputStream(
                new BufferedOutputStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), 1 << 16));
        System.setOut(System.err);
        DataInputStream in = new DataInputStream(new BufferedInputStream(System.in, 1 << 16));
        ByteArrayOutputStream hello = new ByteArrayOutputStream();
        writeString(new DataOutputStream(hello), kafkaVersion());
        frame(out, hello.toByteArray());
        while (true) {
            int size;
            try {
                size = in.readInt();
            } catch (EOFException closed) {
                return;
            }
            byte[] request = new byte[size];
            in.readFully(request);
            frame(out, answer(request));
        }
    }

    /** The kafka-clients version, from the properties file its jar carries (as Kafka's own AppInfoParser reads it). */
    private static String kafkaVersion() throws IOException {
        java.util.Properties properties = new java.util.Properties();
        try (java.io.InputStream resource =
                ConsumerProtocol.class.getClassLoader().getResourceAsStream("kafka/kafka-version.properties")) {
            if (resource != null) {
                properties.load(resource);
            }
        }
        return properties.getProperty("version", "unknown");
    }

    private static void frame(DataOutputStream out, byte[] body) throws IOException {
        out.writeInt(body.length);
        out.write(body);
        out.flush();
    }

    private static byte[] answer(byte[] request) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        try {
            Map<String, Assignment> assigned = assign(new DataInputStream(new java.io.ByteArrayInputStream(request)));
            out.writeByte(0);
            out.writeInt(assigned.size());
            for (Map.Entry<String, Assignment> entry : new TreeMap<>(assigned).entrySet()) {
                writeString(out, entry.getKey());
                ByteBuffer encoded = ConsumerProtocol.serializeAssignment(entry.getValue());
                byte[] raw = new byte[encoded.remaining()];
                encoded.get(raw);
                out.writeInt(raw.length);
                out.write(raw);
            }
        } catch (RuntimeException thrown) {
            bytes.reset();
            StringWriter trace = new StringWriter();
            thrown.printStackTrace(new PrintWriter(trace));
            out.writeByte(1);
            writeString(out, thrown.toString());
            writeString(out, trace.toString());
        }
        out.flush();
        return bytes.toByteArray();
    }

    private static ConsumerPartitionAssignor assignor(String name) {
        switch (name) {
            case "range":
                return new RangeAssignor();
            case "roundrobin":
                return new RoundRobinAssignor();
            case "sticky":
                return new StickyAssignor();
            case "cooperative-sticky":
                return new CooperativeStickyAssignor();
            default:
                throw new IllegalArgumentException("unknown classic assignor '" + name + "'");
        }
    }

    private static Map<String, Assignment> assign(DataInputStream in) throws IOException {
        ConsumerPartitionAssignor assignor = assignor(readString(in));
        Map<String, Integer> counts = new TreeMap<>();
        int topics = in.readInt();
        for (int i = 0; i < topics; i++) {
            String topic = readString(in);
            counts.put(topic, in.readInt());
        }
        Map<TopicPartition, List<String>> racks = new HashMap<>();
        Map<String, Node> rackNodes = new TreeMap<>();
        int placed = in.readInt();
        for (int i = 0; i < placed; i++) {
            TopicPartition partition = new TopicPartition(readString(in), in.readInt());
            int count = in.readInt();
            TreeSet<String> names = new TreeSet<>();
            for (int r = 0; r < count; r++) {
                names.add(readString(in));
            }
            racks.put(partition, new ArrayList<>(names));
            for (String rack : names) {
                rackNodes.computeIfAbsent(rack, name -> new Node(rackNodes.size() + 1, "127.0.0.1", 9092, name));
            }
        }
        Map<String, Subscription> subscriptions = new HashMap<>();
        int members = in.readInt();
        for (int i = 0; i < members; i++) {
            String member = readString(in);
            String instance = readString(in);
            byte[] raw = new byte[in.readInt()];
            in.readFully(raw);
            Subscription subscription = ConsumerProtocol.deserializeSubscription(ByteBuffer.wrap(raw));
            subscription.setGroupInstanceId(instance.isEmpty() ? java.util.Optional.empty()
                    : java.util.Optional.of(instance));
            subscriptions.put(member, subscription);
        }
        Cluster cluster = cluster(counts, racks, rackNodes);
        return assignor.assign(cluster, new GroupSubscription(subscriptions)).groupAssignment();
    }

    private static Cluster cluster(Map<String, Integer> counts, Map<TopicPartition, List<String>> racks,
                                   Map<String, Node> rackNodes) {
        Node rackless = new Node(0, "127.0.0.1", 9092);
        List<PartitionInfo> infos = new ArrayList<>();
        for (Map.Entry<String, Integer> topic : counts.entrySet()) {
            for (int p = 0; p < topic.getValue(); p++) {
                List<String> names = racks.get(new TopicPartition(topic.getKey(), p));
                Node[] replicas;
                if (names == null || names.isEmpty()) {
                    replicas = new Node[] {rackless};
                } else {
                    replicas = new Node[names.size()];
                    for (int r = 0; r < replicas.length; r++) {
                        replicas[r] = rackNodes.get(names.get(r));
                    }
                }
                infos.add(new PartitionInfo(topic.getKey(), p, replicas[0], replicas, replicas));
            }
        }
        List<Node> nodes = new ArrayList<>();
        nodes.add(rackless);
        nodes.addAll(rackNodes.values());
        return new Cluster("assignors", nodes, infos, Collections.emptySet(), Collections.emptySet());
    }

    private static String readString(DataInputStream in) throws IOException {
        byte[] raw = new byte[in.readInt()];
        in.readFully(raw);
        return new String(raw, StandardCharsets.UTF_8);
    }

    private static void writeString(DataOutputStream out, String text) throws IOException {
        byte[] raw = text.getBytes(StandardCharsets.UTF_8);
        out.writeInt(raw.length);
        out.write(raw);
    }
}
