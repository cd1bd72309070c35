package dev.assignors.oracle;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.GroupSubscription;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.clients.consumer.RangeAssignor;
import org.apache.kafka.clients.consumer.RoundRobinAssignor;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.common.Cluster;
import org.apache.kafka.common.Node;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;

/**
 * The classic (client-side) assignors, unmodified, through {@code ConsumerPartitionAssignor.assign(Cluster,
 * GroupSubscription)}: the entry point a Java consumer group leader calls.
 *
 * <p>The group JSON: {@code topics} (name to partition count; zero partitions is no metadata, as in a real
 * {@code Cluster}), {@code racks} ([topic, partition, [rack...]] triples: one replica on each rack, a partition not
 * listed has one replica on a broker without a rack), and {@code members} (member id to {@code topics},
 * {@code user_data} hex, {@code owned} [topic, partition] pairs in order, {@code generation}, {@code rack},
 * {@code instance}). Subscriptions go in a {@code HashMap}, as the leader's {@code ConsumerCoordinator} builds it.
 */
final class Classic {
    private Classic() {}

    static ConsumerPartitionAssignor assignor(String name) {
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

    static Cluster cluster(JsonNode group) {
        Node rackless = new Node(0, "127.0.0.1", 9092);
        Map<String, Node> rackNodes = new TreeMap<>();
        Map<TopicPartition, List<String>> racks = new HashMap<>();
        JsonNode listed = group.get("racks");
        if (listed != null && !listed.isNull()) {
            for (JsonNode triple : listed) {
                List<String> names = new ArrayList<>(new TreeSet<>(Json.strings(triple.get(2))));
                racks.put(new TopicPartition(triple.get(0).asText(), triple.get(1).asInt()), names);
                for (String rack : names) {
                    rackNodes.computeIfAbsent(rack, r -> new Node(rackNodes.size() + 1, "127.0.0.1", 9092, r));
                }
            }
        }
        List<PartitionInfo> infos = new ArrayList<>();
        Iterator<Map.Entry<String, JsonNode>> topics = Json.required(group, "topics").fields();
        while (topics.hasNext()) {
            Map.Entry<String, JsonNode> topic = topics.next();
            int count = topic.getValue().asInt();
            for (int p = 0; p < count; p++) {
                List<String> names = racks.get(new TopicPartition(topic.getKey(), p));
                Node[] replicas;
                if (names == null || names.isEmpty()) {
                    replicas = new Node[] {rackless};
                } else {
                    replicas = new Node[names.size()];
                    for (int i = 0; i < replicas.length; i++) {
                        replicas[i] = rackNodes.get(names.get(i));
                    }
                }
                infos.add(new PartitionInfo(topic.getKey(), p, replicas[0], replicas, replicas));
            }
        }
        List<Node> nodes = new ArrayList<>();
        nodes.add(rackless);
        nodes.addAll(rackNodes.values());
        return new Cluster("oracle", nodes, infos, Collections.emptySet(), Collections.emptySet());
    }

    static Subscription subscription(JsonNode member) {
        JsonNode generation = member.get("generation");
        Subscription subscription = new Subscription(
                Json.strings(member.get("topics")),
                Json.bytes(member, "user_data"),
                Json.partitions(member.get("owned")),
                generation == null || generation.isNull() ? -1 : generation.asInt(),
                Json.optionalText(member, "rack"));
        subscription.setGroupInstanceId(Json.optionalText(member, "instance"));
        return subscription;
    }

    static Map<String, Subscription> subscriptions(JsonNode group) {
        Map<String, Subscription> result = new HashMap<>();
        Iterator<Map.Entry<String, JsonNode>> members = Json.required(group, "members").fields();
        while (members.hasNext()) {
            Map.Entry<String, JsonNode> member = members.next();
            result.put(member.getKey(), subscription(member.getValue()));
        }
        return result;
    }

    static Map<String, Assignment> assign(String name, Cluster cluster, Map<String, Subscription> subscriptions) {
        return assignor(name).assign(cluster, new GroupSubscription(subscriptions)).groupAssignment();
    }

    static ObjectNode result(Map<String, Assignment> assignments) {
        ObjectNode members = Json.object();
        for (String member : new TreeSet<>(assignments.keySet())) {
            Assignment assignment = assignments.get(member);
            members.set(member, Json.object()
                    .set("partitions", Json.partitions(assignment.partitions()))
                    .set("user_data", Json.hex(assignment.userData())));
        }
        return Json.object().set("assignments", members);
    }

    /** {@code assign}: one rebalance of the group with the named assignor. */
    static ObjectNode assign(JsonNode request) {
        String name = Json.required(request, "assignor").asText();
        JsonNode group = Json.required(request, "group");
        return result(assign(name, cluster(group), subscriptions(group)));
    }

    /**
     * The next round after {@code assignments}, as each member's client sends it: it owns what it got (but for
     * {@code fresh}, a member that restarted), at {@code generation}; its user data is what the assignor's own
     * {@code onAssignment} then {@code subscriptionUserData} produce (the sticky assignors' previous assignment and
     * generation).
     */
    static Map<String, Subscription> nextRound(
            String name, Map<String, Subscription> previous, Map<String, Assignment> assignments, int generation,
            String fresh) {
        Map<String, Subscription> result = new HashMap<>();
        for (Map.Entry<String, Subscription> entry : previous.entrySet()) {
            String member = entry.getKey();
            Subscription before = entry.getValue();
            List<TopicPartition> owned = member.equals(fresh)
                    ? Collections.emptyList()
                    : assignments.get(member).partitions();
            ConsumerPartitionAssignor client = assignor(name);
            java.nio.ByteBuffer userData = null;
            if (!member.equals(fresh)) {
                client.onAssignment(new Assignment(owned),
                        new ConsumerGroupMetadata("oracle", generation, member, before.groupInstanceId()));
                userData = client.subscriptionUserData(new HashSet<>(before.topics()));
            }
            Subscription next = new Subscription(before.topics(), userData, owned,
                    member.equals(fresh) ? -1 : generation, before.rackId());
            next.setGroupInstanceId(before.groupInstanceId());
            result.put(member, next);
        }
        return result;
    }

    /**
     * What each member's client sends with {@code subscriptions}' owned partitions: a member with a generation and
     * no user data gets the user data its assignor's own {@code onAssignment} then {@code subscriptionUserData}
     * produce after owning them at that generation (the sticky assignors' previous assignment and generation; the
     * eager {@code StickyAssignor} reads a member's previous assignment from it alone).
     */
    static Map<String, Subscription> withClientUserData(String name, Map<String, Subscription> subscriptions) {
        Map<String, Subscription> result = new HashMap<>();
        for (Map.Entry<String, Subscription> entry : subscriptions.entrySet()) {
            String member = entry.getKey();
            Subscription before = entry.getValue();
            Subscription next = before;
            if (before.userData() == null && before.generationId().isPresent()) {
                int generation = before.generationId().get();
                ConsumerPartitionAssignor client = assignor(name);
                client.onAssignment(new Assignment(before.ownedPartitions()),
                        new ConsumerGroupMetadata("oracle", generation, member, before.groupInstanceId()));
                next = new Subscription(before.topics(), client.subscriptionUserData(new HashSet<>(before.topics())),
                        before.ownedPartitions(), generation, before.rackId());
                next.setGroupInstanceId(before.groupInstanceId());
            }
            result.put(member, next);
        }
        return result;
    }

    /**
     * {@code bench}: Kafka's assignor timed warm. {@code round: 2} times the round after Java's own first one;
     * {@code client_user_data: true} gives members the user data their clients would send with the owned
     * partitions the request gives them (a 2nd round from the caller's first one).
     */
    static ObjectNode bench(JsonNode request) {
        String name = Json.required(request, "assignor").asText();
        JsonNode group = Json.required(request, "group");
        Cluster cluster = cluster(group);
        Map<String, Subscription> subscriptions = subscriptions(group);
        if (request.path("client_user_data").asBoolean(false)) {
            subscriptions = withClientUserData(name, subscriptions);
        }
        if (request.path("round").asInt(1) == 2) {
            Map<String, Assignment> first = assign(name, cluster, subscriptions);
            String fresh = new TreeSet<>(subscriptions.keySet()).first();
            subscriptions = nextRound(name, subscriptions, first, 1, fresh);
        }
        final Map<String, Subscription> input = subscriptions;
        Runnable rewind = () -> {
            for (Subscription subscription : input.values()) {
                if (subscription.userData() != null) {
                    subscription.userData().rewind();
                }
            }
        };
        return Bench.time(request, rewind, () -> assign(name, cluster, input), Bench::assigned, Classic::result);
    }
}
