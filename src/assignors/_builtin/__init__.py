"""The built-in classic assignors (range, roundrobin, sticky, cooperative-sticky) and their registry.

Imports :mod:`assignors._core` and :mod:`assignors._wire` (the sticky user data).
"""
