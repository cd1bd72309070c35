package dev.assignors.oracle;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import org.apache.kafka.common.TopicPartition;

/** The oracle's JSON vocabulary: partitions as [topic, number] pairs, bytes as lowercase hex, absent as null. */
final class Json {
    private static final HexFormat HEX = HexFormat.of();

    private Json() {}

    static ObjectNode object() {
        return new ObjectNode();
    }

    static ArrayNode array() {
        return new ArrayNode();
    }

    static JsonNode required(JsonNode node, String field) {
        JsonNode value = node.get(field);
        if (value == null) {
            throw new IllegalArgumentException("request has no field '" + field + "': " + node);
        }
        return value;
    }

    static List<String> strings(JsonNode node) {
        List<String> result = new ArrayList<>();
        if (node != null && !node.isNull()) {
            for (JsonNode item : node) {
                result.add(item.asText());
            }
        }
        return result;
    }

    static List<TopicPartition> partitions(JsonNode node) {
        List<TopicPartition> result = new ArrayList<>();
        if (node != null && !node.isNull()) {
            for (JsonNode pair : node) {
                result.add(new TopicPartition(pair.get(0).asText(), pair.get(1).asInt()));
            }
        }
        return result;
    }

    static ArrayNode partitions(List<TopicPartition> partitions) {
        ArrayNode result = array();
        for (TopicPartition tp : partitions) {
            result.add(array().add(tp.topic()).add(tp.partition()));
        }
        return result;
    }

    static Optional<String> optionalText(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || value.isNull() ? Optional.empty() : Optional.of(value.asText());
    }

    static ByteBuffer bytes(JsonNode node, String field) {
        JsonNode value = node.get(field);
        return value == null || value.isNull() ? null : ByteBuffer.wrap(HEX.parseHex(value.asText()));
    }

    static byte[] hexBytes(String hex) {
        return HEX.parseHex(hex);
    }

    static JsonNode hex(ByteBuffer buffer) {
        if (buffer == null) {
            return JsonNode.NULL;
        }
        ByteBuffer copy = buffer.duplicate();
        byte[] raw = new byte[copy.remaining()];
        copy.get(raw);
        return JsonNode.text(HEX.formatHex(raw));
    }

    static JsonNode text(Optional<String> value) {
        return JsonNode.text(value.orElse(null));
    }
}
