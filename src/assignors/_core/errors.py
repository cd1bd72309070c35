"""The exceptions raised by :mod:`assignors`.

Every exception the library raises on purpose derives from :class:`AssignorError`,
so one ``except AssignorError`` covers them all. Subclasses also derive from the
builtin they refine, so code that already catches ``ValueError`` or
``LookupError`` keeps working::

    AssignorError
    ├── InvalidSubscriptionError (ValueError)   bad input to an assignor: cluster, member, subscription
    │   ├── ConfigurationError                  a consumer's or an adapter's configuration (assignors, protocol)
    │   ├── EncodingError                       a value that does not fit Kafka's wire format (e.g. INT32)
    │   ├── ScenarioError                       a simulator scenario or snapshot document (JSON) that is not valid
    │   ├── SimulationError                     an event the simulated group cannot apply (unknown member, time)
    │   └── GroupTooLargeError                  more partitions or members than the configured ceiling
    ├── UnknownAssignorError (LookupError)      no assignor with that name
    ├── ProtocolError (ValueError)              bytes that do not decode as Kafka's wire format
    ├── InconsistentGroupProtocolError (ValueError)  members that share no assignor
    ├── CooperativeViolationError               a cooperative assignment that moves a partition in one round
    └── UsageError (ValueError)                 a command-line invocation that cannot run (bad file, option)

The subclasses of :class:`InvalidSubscriptionError` keep that name working for code written
before they existed.
"""

from __future__ import annotations

__all__ = [
    "AssignorError",
    "ConfigurationError",
    "CooperativeViolationError",
    "EncodingError",
    "GroupTooLargeError",
    "InconsistentGroupProtocolError",
    "InvalidSubscriptionError",
    "ProtocolError",
    "ScenarioError",
    "SimulationError",
    "UnknownAssignorError",
    "UsageError",
]


class AssignorError(Exception):
    """Root of every exception that :mod:`assignors` raises deliberately."""


class InvalidSubscriptionError(AssignorError, ValueError):
    """The cluster metadata, a member or its subscription is not valid input.

    The message names the member, topic or field and the offending value.
    """


class ConfigurationError(InvalidSubscriptionError):
    """A consumer's or a client adapter's configuration cannot work: no assignor, no protocol in
    common, a protocol the assignor does not support, a name listed twice."""


class EncodingError(InvalidSubscriptionError):
    """A value does not fit Kafka's wire format (a string or array longer than its length field, an
    INT32 out of range); the message names the field."""


class ScenarioError(InvalidSubscriptionError):
    """A JSON document (a simulator scenario, an ``assignors assign`` snapshot) is not valid.

    Attributes:
        path: where in the document, e.g. ``events[2].topics`` (empty: the whole document).
    """

    def __init__(self, message: str, *, path: str = "") -> None:
        super().__init__(message)
        self.path = path


class SimulationError(InvalidSubscriptionError):
    """An event the simulated group cannot apply: an unknown or duplicate member, a time before the
    simulator's clock, a topic that shrinks."""


class GroupTooLargeError(InvalidSubscriptionError):
    """A group with more partitions or members than the ceiling (:func:`assignors.set_size_limits`, or the
    ``ASSIGNORS_MAX_PARTITIONS`` and ``ASSIGNORS_MAX_MEMBERS`` environment variables), refused before anything
    is allocated for it; a typo in a partition count never turns into minutes of work and a ``MemoryError``.

    Attributes:
        what: ``"partitions"`` or ``"members"``.
        count: how many the group has.
        limit: the ceiling in force.
    """

    def __init__(self, message: str, *, what: str, count: int, limit: int) -> None:
        super().__init__(message)
        self.what = what
        self.count = count
        self.limit = limit


class UsageError(AssignorError, ValueError):
    """A command-line invocation that cannot run: a missing or unreadable file, a bad option value.
    The ``assignors`` command prints its message as one line and exits with status 2."""


class UnknownAssignorError(AssignorError, LookupError):
    """No assignor is registered under the requested name."""


class ProtocolError(AssignorError, ValueError):
    """Bytes that do not decode as Kafka's consumer protocol.

    Attributes:
        field: the field being decoded when the input ran out or was invalid.
        offset: the byte offset at which that field starts.
    """

    def __init__(self, message: str, *, field: str = "", offset: int = -1) -> None:
        super().__init__(message)
        self.field = field
        self.offset = offset


class InconsistentGroupProtocolError(AssignorError, ValueError):
    """The members of a group have no assignor name in common, so the coordinator cannot pick one.

    Attributes:
        member: the member whose preferences leave no candidate (the first in member-id order
            whose list misses every name another member offers).
    """

    def __init__(self, message: str, *, member: str) -> None:
        super().__init__(message)
        self.member = member


class CooperativeViolationError(AssignorError):
    """A COOPERATIVE assignment gives a partition to a new owner while another member still owns it.

    Attributes:
        partition: the partition, as ``"topic-partition"``.
        previous_owner: the member that owns it and has not revoked it yet.
        new_owner: the member the assignment gives it to.
    """

    def __init__(self, message: str, *, partition: str, previous_owner: str, new_owner: str) -> None:
        super().__init__(message)
        self.partition = partition
        self.previous_owner = previous_owner
        self.new_owner = new_owner
