package dev.assignors;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** Prints the version of the Kafka clients jar on the classpath: the build's smoke check. */
public final class Version {
    private Version() {}

    public static void main(String[] args) throws IOException {
        Properties props = new Properties();
        try (InputStream in = Version.class.getResourceAsStream("/kafka/kafka-version.properties")) {
            if (in == null) {
                throw new IllegalStateException("no kafka/kafka-version.properties on the classpath");
            }
            props.load(in);
        }
        System.out.println(props.getProperty("version"));
    }
}
