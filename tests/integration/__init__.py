"""Integration tests against librdkafka's mock cluster."""
