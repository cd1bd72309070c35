"""Kafka's ``StickyAssignor`` and ``CooperativeStickyAssignor``: the assignor classes (``assignor``), the engine
(``core``) and its passes (``claims``, ``uniform``, ``general``, ``racks``, ``balance``, ``exchange`` and its
negative-cycle search ``cycles``)."""
