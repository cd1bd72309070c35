"""Kafka's classic group protocol (JoinGroup/SyncGroup): the EAGER/COOPERATIVE rules, the round engine, the
simulator's events and its timeline. Imports :mod:`assignors._core`, :mod:`assignors._wire` and
:mod:`assignors._builtin`."""
