package dev.assignors.member;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.CooperativeStickyAssignor;
import org.apache.kafka.common.Cluster;

/**
 * Kafka's own {@link CooperativeStickyAssignor}, unchanged, that also prints what it decoded: as leader, every
 * member's subscription (topics, owned partitions, generation, rack, instance id) and the assignment it made; as
 * any member, the assignment it received. Same name ("cooperative-sticky"), same bytes, same decisions.
 */
public class LoggingCooperativeStickyAssignor extends CooperativeStickyAssignor {

    @Override
    public GroupAssignment assign(Cluster metadata, GroupSubscription groupSubscription) {
        Map<String, Object> subscriptions = new TreeMap<>();
        groupSubscription.groupSubscription().forEach((member, subscription) -> {
            Map<String, Object> decoded = new LinkedHashMap<>();
            decoded.put("topics", subscription.topics().stream().sorted().toList());
            decoded.put("owned", Out.partitions(subscription.ownedPartitions()));
            decoded.put("generation", subscription.generationId().orElse(null));
            decoded.put("rack", subscription.rackId().orElse(null));
            decoded.put("instance", subscription.groupInstanceId().orElse(null));
            subscriptions.put(member, decoded);
        });
        GroupAssignment result = super.assign(metadata, groupSubscription);
        Map<String, Object> assignment = new TreeMap<>();
        result.groupAssignment().forEach((member, assigned) -> assignment.put(member, Out.partitions(assigned.partitions())));
        Out.emit("led", Map.of("subscriptions", subscriptions, "assignment", assignment));
        return result;
    }

    @Override
    public void onAssignment(Assignment assignment, ConsumerGroupMetadata metadata) {
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("partitions", Out.partitions(assignment.partitions()));
        fields.put("generation", metadata.generationId());
        fields.put("member", metadata.memberId());
        Out.emit("received", fields);
        super.onAssignment(assignment, metadata);
    }
}
