package dev.assignors.oracle;

import java.nio.ByteBuffer;
import java.util.HashSet;
import java.util.Optional;
import org.apache.kafka.clients.consumer.ConsumerGroupMetadata;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Assignment;
import org.apache.kafka.clients.consumer.ConsumerPartitionAssignor.Subscription;
import org.apache.kafka.clients.consumer.StickyAssignor;
import org.apache.kafka.clients.consumer.internals.ConsumerProtocol;

/** Kafka's {@code ConsumerProtocol} (JoinGroup and SyncGroup bytes) and the sticky assignor's user data. */
final class Wire {
    private Wire() {}

    static ObjectNode subscription(Subscription subscription) {
        ObjectNode result = Json.object();
        ArrayNode topics = Json.array();
        subscription.topics().forEach(topics::add);
        result.set("topics", topics);
        result.set("user_data", Json.hex(subscription.userData()));
        result.set("owned", Json.partitions(subscription.ownedPartitions()));
        result.put("generation", subscription.generationId().orElse(-1));
        result.set("rack", Json.text(subscription.rackId()));
        return result;
    }

    static ObjectNode encodeSubscription(JsonNode request) {
        Subscription subscription = Classic.subscription(Json.required(request, "subscription"));
        short version = (short) Json.required(request, "version").asInt();
        return Json.object().set("hex", Json.hex(ConsumerProtocol.serializeSubscription(subscription, version)));
    }

    static ObjectNode decodeSubscription(JsonNode request) {
        ByteBuffer buffer = ByteBuffer.wrap(Json.hexBytes(Json.required(request, "hex").asText()));
        return Json.object().set("subscription", subscription(ConsumerProtocol.deserializeSubscription(buffer)));
    }

    static ObjectNode encodeAssignment(JsonNode request) {
        JsonNode json = Json.required(request, "assignment");
        Assignment assignment = new Assignment(Json.partitions(json.get("partitions")), Json.bytes(json, "user_data"));
        short version = (short) Json.required(request, "version").asInt();
        return Json.object().set("hex", Json.hex(ConsumerProtocol.serializeAssignment(assignment, version)));
    }

    static ObjectNode decodeAssignment(JsonNode request) {
        ByteBuffer buffer = ByteBuffer.wrap(Json.hexBytes(Json.required(request, "hex").asText()));
        Assignment assignment = ConsumerProtocol.deserializeAssignment(buffer);
        ObjectNode result = Json.object();
        result.set("partitions", Json.partitions(assignment.partitions()));
        result.set("user_data", Json.hex(assignment.userData()));
        return Json.object().set("assignment", result);
    }

    /**
     * The user data a {@code StickyAssignor} member sends after {@code onAssignment} of {@code partitions} at
     * {@code generation}: what a Java client writes (always V1, with the generation).
     */
    static ObjectNode encodeStickyUserData(JsonNode request) {
        StickyAssignor assignor = new StickyAssignor();
        Assignment assignment = new Assignment(Json.partitions(Json.required(request, "partitions")));
        int generation = Json.required(request, "generation").asInt();
        assignor.onAssignment(assignment, new ConsumerGroupMetadata("oracle", generation, "m", Optional.empty()));
        ByteBuffer data = assignor.subscriptionUserData(new HashSet<>());
        return Json.object().set("hex", Json.hex(data));
    }
}
