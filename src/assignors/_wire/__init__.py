"""Kafka's bytes: the primitive readers and writers, and the flexible-version (tagged fields) codec.

Imports only :mod:`assignors._core`.
"""
