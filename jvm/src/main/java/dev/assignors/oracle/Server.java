package dev.assignors.oracle;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.coordinator.group.api.assignor.GroupAssignment;
import org.apache.kafka.coordinator.group.api.assignor.GroupSpec;
import org.apache.kafka.coordinator.group.api.assignor.MemberAssignment;
import org.apache.kafka.coordinator.group.api.assignor.MemberSubscription;
import org.apache.kafka.coordinator.group.api.assignor.PartitionAssignor;
import org.apache.kafka.coordinator.group.api.assignor.SubscribedTopicDescriber;
import org.apache.kafka.coordinator.group.api.assignor.SubscriptionType;
import org.apache.kafka.coordinator.group.assignor.RangeAssignor;
import org.apache.kafka.coordinator.group.assignor.UniformAssignor;

/**
 * The group coordinator's assignors (KIP-848), unmodified, through their public {@code GroupSpec} /
 * {@code SubscribedTopicDescriber} API, with topic ids.
 *
 * <p>The spec, describer and member records are this project's implementations of Kafka's public interfaces (the
 * coordinator's own {@code GroupSpecImpl} changes its constructor between versions), built the way the coordinator
 * builds its own: members in a {@code HashMap}, topic ids and partitions in {@code HashSet}s (a previous target's
 * partitions as {@code Assignment.fromRecord} reads them: {@code new HashSet<>(list)}), the subscription type
 * {@code HOMOGENEOUS} exactly when every member subscribes to the same topic names (Kafka's
 * {@code ModernGroup.subscriptionType}), a member's subscribed topic ids only for topics with metadata.
 *
 * <p>The group JSON is the classic one (see {@link Classic}) plus {@code topic_ids}: topic name to [msb, lsb];
 * {@code owned} is each member's previous target; racks feed {@code racksForPartition}.
 */
final class Server {
    private Server() {}

    record Member(Optional<String> rackId, Optional<String> instanceId, Set<Uuid> subscribedTopicIds)
            implements MemberSubscription {}

    record Partitions(Map<Uuid, Set<Integer>> partitions) implements MemberAssignment {}

    static final class Spec implements GroupSpec {
        final Map<String, Member> members = new HashMap<>();
        final Map<String, Partitions> assignments = new HashMap<>();
        final Map<Uuid, Map<Integer, String>> owners = new HashMap<>();
        SubscriptionType type = SubscriptionType.HOMOGENEOUS;

        @Override
        public Collection<String> memberIds() {
            return members.keySet();
        }

        @Override
        public SubscriptionType subscriptionType() {
            return type;
        }

        @Override
        public boolean isPartitionAssigned(Uuid topicId, int partitionId) {
            Map<Integer, String> partitions = owners.get(topicId);
            return partitions != null && partitions.containsKey(partitionId);
        }

        // In GroupSpec from Kafka 4.1 (share groups); no @Override so that 3.9 and 4.0 compile too.
        public boolean isPartitionAssignable(Uuid topicId, int partitionId) {
            return true;
        }

        @Override
        public MemberSubscription memberSubscription(String memberId) {
            Member member = members.get(memberId);
            if (member == null) {
                throw new IllegalArgumentException("no member " + memberId);
            }
            return member;
        }

        @Override
        public MemberAssignment memberAssignment(String memberId) {
            Partitions partitions = assignments.get(memberId);
            return partitions == null ? new Partitions(Collections.unmodifiableMap(new HashMap<>())) : partitions;
        }
    }

    static final class Describer implements SubscribedTopicDescriber {
        final Map<Uuid, Integer> counts = new HashMap<>();
        final Map<Uuid, Map<Integer, Set<String>>> racks = new HashMap<>();

        @Override
        public int numPartitions(Uuid topicId) {
            return counts.getOrDefault(topicId, -1);
        }

        @Override
        public Set<String> racksForPartition(Uuid topicId, int partition) {
            return racks.getOrDefault(topicId, Collections.emptyMap()).getOrDefault(partition, Collections.emptySet());
        }
    }

    /** One group's input, and the way back from topic ids to names. */
    static final class Input {
        final Spec spec = new Spec();
        final Describer describer = new Describer();
        final Map<String, Uuid> ids = new HashMap<>();
        final Map<Uuid, String> names = new HashMap<>();
        final Map<String, List<String>> topicsOf = new HashMap<>();
        final Map<String, Optional<String>> racksOf = new HashMap<>();
        final Map<String, Optional<String>> instancesOf = new HashMap<>();

        Uuid id(String topic) {
            Uuid id = ids.get(topic);
            if (id == null) {
                throw new IllegalArgumentException("no topic id for '" + topic + "' in topic_ids");
            }
            return id;
        }

        void setTarget(String member, Map<Uuid, Set<Integer>> target) {
            // Kafka's builders take the previous target as an unmodifiable map (AssignorHelpers.isImmutableMap).
            spec.assignments.put(member, new Partitions(Collections.unmodifiableMap(target)));
            for (Map.Entry<Uuid, Set<Integer>> entry : target.entrySet()) {
                Map<Integer, String> owners = spec.owners.computeIfAbsent(entry.getKey(), k -> new HashMap<>());
                for (Integer partition : entry.getValue()) {
                    owners.put(partition, member);
                }
            }
        }
    }

    static Input input(JsonNode group) {
        Input input = new Input();
        Iterator<Map.Entry<String, JsonNode>> ids = Json.required(group, "topic_ids").fields();
        while (ids.hasNext()) {
            Map.Entry<String, JsonNode> entry = ids.next();
            Uuid id = new Uuid(entry.getValue().get(0).asLong(), entry.getValue().get(1).asLong());
            input.ids.put(entry.getKey(), id);
            input.names.put(id, entry.getKey());
        }
        Iterator<Map.Entry<String, JsonNode>> topics = Json.required(group, "topics").fields();
        while (topics.hasNext()) {
            Map.Entry<String, JsonNode> topic = topics.next();
            int count = topic.getValue().asInt();
            if (count > 0) { // a KRaft topic has at least one partition: zero is a topic without metadata
                input.describer.counts.put(input.id(topic.getKey()), count);
            }
        }
        JsonNode racks = group.get("racks");
        if (racks != null && !racks.isNull()) {
            for (JsonNode triple : racks) {
                input.describer.racks.computeIfAbsent(input.id(triple.get(0).asText()), k -> new HashMap<>())
                        .put(triple.get(1).asInt(), new HashSet<>(Json.strings(triple.get(2))));
            }
        }
        Set<Set<String>> distinct = new HashSet<>();
        Iterator<Map.Entry<String, JsonNode>> members = Json.required(group, "members").fields();
        while (members.hasNext()) {
            Map.Entry<String, JsonNode> entry = members.next();
            String member = entry.getKey();
            JsonNode json = entry.getValue();
            List<String> names = Json.strings(json.get("topics"));
            distinct.add(new HashSet<>(names));
            Optional<String> rack = Json.optionalText(json, "rack");
            Optional<String> instance = Json.optionalText(json, "instance");
            input.topicsOf.put(member, names);
            input.racksOf.put(member, rack);
            input.instancesOf.put(member, instance);
            input.spec.members.put(member, new Member(rack, instance, subscribedIds(input, names)));
            // The coordinator reads a previous target from its record (Assignment.fromRecord): topics put into a
            // HashMap in the record's order (here the owned pairs' order: two topic ids in one bucket iterate in it),
            // one new HashSet<>(list) per topic, whose table size (hence iteration order) follows the list's length.
            Map<Uuid, List<Integer>> lists = new LinkedHashMap<>();
            for (JsonNode pair : json.path("owned")) {
                lists.computeIfAbsent(input.id(pair.get(0).asText()), k -> new ArrayList<>()).add(pair.get(1).asInt());
            }
            Map<Uuid, Set<Integer>> target = new HashMap<>();
            lists.forEach((topicId, partitions) -> target.put(topicId, new HashSet<>(partitions)));
            input.setTarget(member, target);
        }
        input.spec.type = distinct.size() <= 1 ? SubscriptionType.HOMOGENEOUS : SubscriptionType.HETEROGENEOUS;
        return input;
    }

    private static Set<Uuid> subscribedIds(Input input, List<String> names) {
        // The coordinator resolves a member's HashSet of subscribed topic names (TopicIds), in that set's order.
        Set<Uuid> result = new HashSet<>();
        for (String name : new HashSet<>(names)) {
            Uuid id = input.ids.get(name);
            if (id != null && input.describer.counts.containsKey(id)) {
                result.add(id);
            }
        }
        return result;
    }

    static PartitionAssignor assignor(String name) {
        switch (name) {
            case "uniform":
                return new UniformAssignor();
            case "range":
                return new RangeAssignor();
            default:
                throw new IllegalArgumentException("unknown server assignor '" + name + "'");
        }
    }

    static GroupAssignment assign(String name, Input input) {
        return assignor(name).assign(input.spec, input.describer);
    }

    static ObjectNode result(Input input, GroupAssignment assignment) {
        ObjectNode members = Json.object();
        for (String member : new TreeSet<>(assignment.members().keySet())) {
            ArrayNode pairs = Json.array();
            for (Map.Entry<Uuid, Set<Integer>> entry : assignment.members().get(member).partitions().entrySet()) {
                String topic = input.names.get(entry.getKey());
                for (Integer partition : entry.getValue()) {
                    pairs.add(Json.array().add(topic).add(partition));
                }
            }
            members.set(member, pairs);
        }
        return Json.object().set("assignments", members);
    }

    /** {@code server_assign}: one target assignment of the group with the named coordinator assignor. */
    static ObjectNode assign(JsonNode request) {
        Input input = input(Json.required(request, "group"));
        return result(input, assign(Json.required(request, "assignor").asText(), input));
    }

    /**
     * {@code server_bench}: the assignor timed warm; {@code round: 2} starts from its own first target, otherwise
     * the members' {@code owned} partitions are the previous target (a 2nd round from the caller's first one).
     */
    static ObjectNode bench(JsonNode request) {
        String name = Json.required(request, "assignor").asText();
        Input input = input(Json.required(request, "group"));
        if (request.path("round").asInt(1) == 2) {
            GroupAssignment first = assign(name, input);
            String fresh = new TreeSet<>(input.spec.members.keySet()).first();
            input.spec.owners.clear();
            for (Map.Entry<String, MemberAssignment> entry : first.members().entrySet()) {
                input.setTarget(entry.getKey(),
                        entry.getKey().equals(fresh) ? new HashMap<>() : copy(entry.getValue().partitions()));
            }
        }
        return Bench.time(request, () -> { }, () -> assign(name, input), Server::assigned,
                result -> result(input, result));
    }

    private static Map<Uuid, Set<Integer>> copy(Map<Uuid, Set<Integer>> partitions) {
        Map<Uuid, Set<Integer>> result = new HashMap<>();
        for (Map.Entry<Uuid, Set<Integer>> entry : partitions.entrySet()) {
            result.put(entry.getKey(), new HashSet<>(new ArrayList<>(entry.getValue()))); // as fromRecord reads it
        }
        return result;
    }

    private static int assigned(GroupAssignment assignment) {
        int total = 0;
        for (MemberAssignment member : assignment.members().values()) {
            for (Set<Integer> partitions : member.partitions().values()) {
                total += partitions.size();
            }
        }
        return total;
    }
}
