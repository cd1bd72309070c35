package dev.assignors.oracle;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON tree, parser and writer: the oracle's protocol needs no more, and it keeps the oracle off the
 * Jackson version each Kafka release brings (only at runtime scope, and a pinned one would break the 3.9 broker's
 * Scala module).
 */
class JsonNode implements Iterable<JsonNode> {
    static final JsonNode NULL = new JsonNode(null);
    static final JsonNode MISSING = new JsonNode(null);

    final Object value; // null, String, Long, Double, Boolean (ObjectNode and ArrayNode hold their own)

    JsonNode(Object value) {
        this.value = value;
    }

    static JsonNode text(String text) {
        return text == null ? NULL : new JsonNode(text);
    }

    JsonNode get(String field) {
        return null;
    }

    JsonNode get(int index) {
        return null;
    }

    JsonNode path(String field) {
        JsonNode found = get(field);
        return found == null ? MISSING : found;
    }

    boolean isNull() {
        return value == null && !(this instanceof ObjectNode) && !(this instanceof ArrayNode);
    }

    String asText() {
        return value == null ? "null" : value instanceof Double d && d == Math.rint(d) ? Long.toString(d.longValue())
                : value.toString();
    }

    long asLong() {
        if (value instanceof Number n) {
            return n.longValue();
        }
        throw new IllegalArgumentException("not a number: " + this);
    }

    int asInt() {
        long v = asLong();
        if (v != (int) v) {
            throw new IllegalArgumentException("not an INT32: " + v);
        }
        return (int) v;
    }

    int asInt(int otherwise) {
        return value instanceof Number ? asInt() : otherwise;
    }

    boolean asBoolean(boolean otherwise) {
        return value instanceof Boolean b ? b : otherwise;
    }

    double asDouble(double otherwise) {
        return value instanceof Number n ? n.doubleValue() : otherwise;
    }

    Iterator<Map.Entry<String, JsonNode>> fields() {
        return Collections.emptyIterator();
    }

    @Override
    public Iterator<JsonNode> iterator() {
        return Collections.emptyIterator();
    }

    void write(StringBuilder out) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String s) {
            quote(s, out);
        } else {
            out.append(value);
        }
    }

    @Override
    public String toString() {
        StringBuilder out = new StringBuilder();
        write(out);
        return out.toString();
    }

    static void quote(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20 || Character.isSurrogate(c)) { // surrogates escaped: a lone one stays intact
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    /** Parses one JSON document; anything malformed is an IllegalArgumentException with the offset. */
    static JsonNode parse(String text) {
        Parser parser = new Parser(text);
        JsonNode result = parser.value();
        parser.space();
        if (parser.at < text.length()) {
            throw parser.error("trailing characters");
        }
        return result;
    }

    private static final class Parser {
        final String s;
        int at;

        Parser(String s) {
            this.s = s;
        }

        IllegalArgumentException error(String what) {
            return new IllegalArgumentException("bad JSON at offset " + at + ": " + what);
        }

        void space() {
            while (at < s.length() && Character.isWhitespace(s.charAt(at))) {
                at++;
            }
        }

        void expect(char c) {
            space();
            if (at >= s.length() || s.charAt(at) != c) {
                throw error("expected '" + c + "'");
            }
            at++;
        }

        JsonNode value() {
            space();
            if (at >= s.length()) {
                throw error("unexpected end");
            }
            char c = s.charAt(at);
            if (c == '{') {
                at++;
                ObjectNode object = new ObjectNode();
                space();
                if (at < s.length() && s.charAt(at) == '}') {
                    at++;
                    return object;
                }
                while (true) {
                    space();
                    String key = string();
                    expect(':');
                    object.set(key, value());
                    space();
                    if (at < s.length() && s.charAt(at) == ',') {
                        at++;
                        continue;
                    }
                    expect('}');
                    return object;
                }
            }
            if (c == '[') {
                at++;
                ArrayNode array = new ArrayNode();
                space();
                if (at < s.length() && s.charAt(at) == ']') {
                    at++;
                    return array;
                }
                while (true) {
                    array.add(value());
                    space();
                    if (at < s.length() && s.charAt(at) == ',') {
                        at++;
                        continue;
                    }
                    expect(']');
                    return array;
                }
            }
            if (c == '"') {
                return new JsonNode(string());
            }
            if (s.startsWith("null", at)) {
                at += 4;
                return NULL;
            }
            if (s.startsWith("true", at)) {
                at += 4;
                return new JsonNode(Boolean.TRUE);
            }
            if (s.startsWith("false", at)) {
                at += 5;
                return new JsonNode(Boolean.FALSE);
            }
            int start = at;
            while (at < s.length() && "+-0123456789.eE".indexOf(s.charAt(at)) >= 0) {
                at++;
            }
            String number = s.substring(start, at);
            if (number.isEmpty()) {
                throw error("unexpected '" + c + "'");
            }
            try {
                return number.matches("-?\\d+") ? new JsonNode(Long.parseLong(number))
                        : new JsonNode(Double.parseDouble(number));
            } catch (NumberFormatException e) {
                throw error("bad number " + number);
            }
        }

        String string() {
            if (at >= s.length() || s.charAt(at) != '"') {
                throw error("expected a string");
            }
            at++;
            StringBuilder out = new StringBuilder();
            while (true) {
                if (at >= s.length()) {
                    throw error("unterminated string");
                }
                char c = s.charAt(at++);
                if (c == '"') {
                    return out.toString();
                }
                if (c != '\\') {
                    out.append(c);
                    continue;
                }
                if (at >= s.length()) {
                    throw error("unterminated escape");
                }
                char e = s.charAt(at++);
                switch (e) {
                    case 'n' -> out.append('\n');
                    case 'r' -> out.append('\r');
                    case 't' -> out.append('\t');
                    case 'b' -> out.append('\b');
                    case 'f' -> out.append('\f');
                    case 'u' -> {
                        if (at + 4 > s.length()) {
                            throw error("short \\u escape");
                        }
                        out.append((char) Integer.parseInt(s.substring(at, at + 4), 16));
                        at += 4;
                    }
                    default -> out.append(e);
                }
            }
        }
    }
}

final class ObjectNode extends JsonNode {
    final Map<String, JsonNode> fields = new LinkedHashMap<>();

    ObjectNode() {
        super(null);
    }

    @Override
    JsonNode get(String field) {
        return fields.get(field);
    }

    ObjectNode set(String field, JsonNode value) {
        fields.put(field, value == null ? NULL : value);
        return this;
    }

    ObjectNode put(String field, String value) {
        return set(field, text(value));
    }

    ObjectNode put(String field, long value) {
        return set(field, new JsonNode(value));
    }

    @Override
    Iterator<Map.Entry<String, JsonNode>> fields() {
        return fields.entrySet().iterator();
    }

    @Override
    void write(StringBuilder out) {
        out.append('{');
        boolean first = true;
        for (Map.Entry<String, JsonNode> entry : fields.entrySet()) {
            if (!first) {
                out.append(',');
            }
            first = false;
            quote(entry.getKey(), out);
            out.append(':');
            entry.getValue().write(out);
        }
        out.append('}');
    }
}

final class ArrayNode extends JsonNode {
    final List<JsonNode> items = new ArrayList<>();

    ArrayNode() {
        super(null);
    }

    @Override
    JsonNode get(int index) {
        return index < items.size() ? items.get(index) : null;
    }

    ArrayNode add(JsonNode value) {
        items.add(value);
        return this;
    }

    ArrayNode add(String value) {
        return add(text(value));
    }

    ArrayNode add(long value) {
        return add(new JsonNode(value));
    }

    @Override
    public Iterator<JsonNode> iterator() {
        return items.iterator();
    }

    @Override
    void write(StringBuilder out) {
        out.append('[');
        for (int i = 0; i < items.size(); i++) {
            if (i > 0) {
                out.append(',');
            }
            items.get(i).write(out);
        }
        out.append(']');
    }
}
