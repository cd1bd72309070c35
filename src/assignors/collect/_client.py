"""``assignors collect``'s client: the ``--properties`` file, its secrets, and librdkafka's failures as one line.

- :func:`read_properties` reads a ``--properties`` file as Java's ``Properties`` lines (``key=value``, ``#`` and ``!``
  comments, a ``\\`` at the end of a line continues it) and never prints a value: a malformed line is named by its
  number and its first word only where that word reads as a setting's name.
- :func:`secret_names` and :class:`Redactor`: the values of secret settings (a name holding ``password`` or
  ``secret``, ``sasl.jaas.config``, ``sasl.oauthbearer.config``, ``ssl.key*``) are replaced by ``[hidden]`` (as Kafka
  prints them) in every line ``collect`` prints.
- A Java client's ``sasl.jaas.config`` of ``PlainLoginModule`` or ``ScramLoginModule`` becomes librdkafka's
  ``sasl.username`` and ``sasl.password`` (librdkafka takes no JAAS).
- :class:`ClientEvents` keeps librdkafka's error callbacks and log lines (never printed: they would repeat every
  second); :meth:`ClientEvents.explain` makes of them the one line that says what failed and what to change.
"""

from __future__ import annotations

import logging
import re
import time
from dataclasses import dataclass, field
from typing import Any

from assignors._core.errors import UsageError

__all__ = [
    "HIDDEN",
    "KNOWN_NAMES",
    "ClientEvents",
    "ReadDeniedError",
    "Redactor",
    "client_settings",
    "denied_message",
    "is_secret",
    "read_properties",
]

HIDDEN = "[hidden]"
_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)+")
_JAAS = re.compile(
    r"(?P<module>\w+(?:\.\w+)*)\s+required\b(?P<options>.*?);?\s*$",
    re.DOTALL,
)
_JAAS_OPTION = re.compile(r'(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|(\S+?))(?=\s|;|$)')


def is_secret(name: str) -> bool:
    """Whether a setting's value is never printed: ``*password*``, ``*secret*``, ``sasl.jaas.config``,
    ``sasl.oauthbearer.config``, ``ssl.key*`` (Kafka's ``Password`` settings and librdkafka's sensitive ones)."""
    lowered = name.strip().lower()
    return (
        "password" in lowered
        or "secret" in lowered
        or lowered in {"sasl.jaas.config", "sasl.oauthbearer.config"}
        or lowered.startswith("ssl.key")
    )


class ReadDeniedError(UsageError):
    """The cluster refused to let this principal read ``__consumer_offsets`` (``--via auto`` takes the Admin API)."""


@dataclass
class Redactor:
    """Replaces the values of secret settings by ``[hidden]`` in a text (longest first, so no part is left)."""

    secrets: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, settings: dict[str, str]) -> Redactor:
        values = {value for name, value in settings.items() if is_secret(name) and value}
        for name, value in settings.items():  # the parts of a JAAS line (its password) on their own too
            if name.strip().lower() == "sasl.jaas.config":
                values.update(v for v in _jaas_options(value).values() if v)
                values.update(q or b for _, q, b in _JAAS_OPTION.findall(value) if q or b)  # as written, escaped
        return cls(sorted(values, key=len, reverse=True))

    def __call__(self, text: str) -> str:
        """``text`` with every stretch that is (part of) an occurrence of a secret replaced by ``[hidden]``."""
        covered: list[tuple[int, int]] = []
        for secret in filter(None, self.secrets):
            start = text.find(secret)
            while start != -1:
                covered.append((start, start + len(secret)))
                start = text.find(secret, start + 1)
        if not covered:
            return text
        parts, position = [], 0
        for start, end in _merged(covered):
            parts += [text[position:start], HIDDEN]
            position = end
        return "".join([*parts, text[position:]])


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged


KNOWN_NAMES = frozenset(
    {
        "bootstrap.servers",
        "security.protocol",
        "sasl.mechanism",
        "sasl.mechanisms",
        "sasl.username",
        "sasl.password",
        "sasl.jaas.config",
        "sasl.oauthbearer.config",
        "sasl.oauthbearer.method",
        "sasl.oauthbearer.client.id",
        "sasl.oauthbearer.client.secret",
        "sasl.oauthbearer.token.endpoint.url",
        "sasl.kerberos.service.name",
        "ssl.ca.location",
        "ssl.certificate.location",
        "ssl.key.location",
        "ssl.key.password",
        "ssl.key.pem",
        "ssl.keystore.location",
        "ssl.keystore.password",
        "ssl.truststore.location",
        "ssl.truststore.password",
        "ssl.endpoint.identification.algorithm",
        "client.id",
        "client.dns.lookup",
        "socket.timeout.ms",
        "request.timeout.ms",
    }
)
"""Settings' names a malformed line may be named by (its first word); any other word is not shown."""


def _line_word(line: str) -> str:
    """The first word of a malformed line when it is a known setting's name followed by a space, a ``:`` or nothing
    (``sasl.password``), else empty: no other part of the line is ever shown."""
    text = line.strip()
    found = _NAME.match(text)
    if found is None or found.group(0).lower() not in KNOWN_NAMES:
        return ""
    rest = text[found.end() :]
    return found.group(0) if not rest or rest[0].isspace() or rest[0] == ":" else ""


def read_properties(text: str, where: str) -> dict[str, str]:
    """``key=value`` lines as Java's ``Properties`` file has them; a bad line is named without its value.

    Raises:
        UsageError: a line that is not ``key=value``, or a key that is empty: ``where line N: ...``, naming the
            line's first word only where it reads as a setting's name, so no value is ever printed.
    """
    settings: dict[str, str] = {}
    logical: list[tuple[int, str]] = []
    pending: tuple[int, str] | None = None
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.lstrip()
        if pending is None and (not line or line.startswith(("#", "!"))):
            continue
        start, so_far = pending if pending is not None else (number, "")
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:  # an odd number of backslashes: the line goes on
            pending = (start, so_far + line[:-1])
            continue
        pending = None
        logical.append((start, so_far + line))
    if pending is not None:
        logical.append(pending)
    for number, line in logical:
        name, sep, value = line.partition("=")
        name = name.strip()
        if not sep or not name or any(c.isspace() for c in name):
            word = _line_word(line)
            shown = f"{word!r} " if word and word == line.strip() else (f"'{word} ...' " if word else "")
            msg = f"{where} line {number}: {shown}is not key=value" + ("" if word else " (the line is not shown)")
            raise UsageError(msg)
        if is_secret(name) and name.lower() not in KNOWN_NAMES:
            # a secret's name run into its value ("sasl.passwordhunter2=..."): the name would print part of it
            msg = f"{where} line {number}: a setting named as a secret is not one librdkafka knows"
            msg += " (the line is not shown)"
            raise UsageError(msg)
        settings[name] = value.strip()
    return settings


def _jaas_options(text: str) -> dict[str, str]:
    found = _JAAS.match(text.strip())
    if found is None:
        return {}
    return {
        key: (quoted if quoted is not None else bare).replace('\\"', '"')
        for key, quoted, bare in _JAAS_OPTION.findall(found.group("options"))
    }


def client_settings(bootstrap: str, given: dict[str, str], where: str = "--properties") -> dict[str, str]:
    """librdkafka's settings from ``--bootstrap-servers`` and the ``--properties`` read.

    A Java client's ``sasl.jaas.config`` (``PlainLoginModule`` or ``ScramLoginModule``) becomes ``sasl.username``
    and ``sasl.password``; another login module is refused naming librdkafka's own settings.
    """
    settings = {"bootstrap.servers": bootstrap, **given}
    jaas = settings.pop("sasl.jaas.config", None)
    if jaas is not None:
        found = _JAAS.match(jaas.strip())
        module = found.group("module") if found is not None else ""
        options = _jaas_options(jaas)
        if module.rsplit(".", 1)[-1] not in {"PlainLoginModule", "ScramLoginModule"} or "username" not in options:
            msg = (
                f"{where}: sasl.jaas.config of a login module librdkafka has no equivalent for here (the value is "
                "not shown): give librdkafka's sasl.mechanism, sasl.username and sasl.password (or sasl.oauthbearer.*)"
            )
            raise UsageError(msg)
        settings.setdefault("sasl.username", options["username"])
        settings.setdefault("sasl.password", options.get("password", ""))
    return settings


class ClientEvents:
    """librdkafka's errors and log lines of one client, kept for :meth:`explain` (never printed).

    Give :meth:`config` to the client; librdkafka hands both over when the client is polled.
    """

    def __init__(self) -> None:
        self.errors: list[tuple[str, str]] = []
        """(librdkafka's error name, its text), in order."""
        self.logs: list[str] = []
        self.down_since: float | None = None
        """When librdkafka last said every broker is down (cleared by :meth:`alive`)."""
        self._logger = logging.Logger("assignors.collect.librdkafka", logging.DEBUG)  # noqa: LOG001 - one per client, kept
        self._logger.propagate = False
        self._logger.addHandler(_Keep(self.logs))

    def config(self) -> dict[str, Any]:
        return {"error_cb": self._error, "logger": self._logger}

    def _error(self, error: Any) -> None:
        name, text = str(error.name()), str(error.str())
        self.errors.append((name, text))
        del self.errors[:-200]
        if name == "_ALL_BROKERS_DOWN" and self.down_since is None:
            self.down_since = time.monotonic()

    def alive(self) -> None:
        """The cluster answered (a record, the end of a partition, metadata): what went wrong before is over."""
        self.down_since = None
        if self.errors or self.logs:
            self.errors.clear()
            self.logs.clear()

    def decisive(self) -> bool:
        """Whether an error so far will not go away by waiting (a refused login, an untrusted certificate, TLS
        spoken to a listener without it)."""
        return any(name in {"_AUTHENTICATION", "_SSL"} or "SSL handshake failed" in text for name, text in self.errors)

    def explain(self, settings: dict[str, str], waited: float) -> str:  # noqa: PLR0911 - one answer per cause
        """One line: what failed on the way to the cluster, and which setting to change."""
        server = settings.get("bootstrap.servers", "")
        protocol = settings.get("security.protocol", "plaintext").upper()
        texts = [text for _, text in self.errors] + self.logs
        auth = next((text for name, text in self.errors if name == "_AUTHENTICATION"), None)
        if auth is not None:
            user, mechanism = settings.get("sasl.username", ""), settings.get("sasl.mechanism", "GSSAPI").upper()
            reason = _after(auth, "SASL authentication error: ")
            return (
                f"cannot log in to {server}: the broker refused the SASL {mechanism} login of user {user!r} "
                f"({reason}); check sasl.mechanism, sasl.username and sasl.password in --properties"
            )
        untrusted = next((t for t in texts if "certificate verify failed" in t), None)
        if untrusted is not None:
            return (
                f"cannot connect to {server} over TLS: the broker's certificate is not trusted (certificate verify "
                "failed); give the certificate authority that signed it with ssl.ca.location=CA.pem in --properties"
            )
        if any("connecting to a PLAINTEXT broker listener" in t for t in texts):
            return (
                f"cannot connect to {server} over TLS (security.protocol={protocol}): the listener does not speak TLS; "
                "set security.protocol=PLAINTEXT (or SASL_PLAINTEXT) in --properties, or give the TLS listener's port"
            )
        handshake = next((t for t in texts if "SSL handshake failed" in t), None)
        if handshake is not None:
            return f"cannot connect to {server} over TLS: {_after(handshake, 'SSL handshake failed: ')}"
        if any("Connection refused" in t for t in texts):
            return f"cannot reach {server}: connection refused (is the address right, and the broker up?)"
        closed = [t for t in texts if "connection closed by peer" in t or "Disconnected" in t]
        if closed and "SSL" not in protocol and any("APIVERSION_QUERY" in t for t in closed):
            return (
                f"cannot connect to {server} with security.protocol={protocol}: the listener closed the connection at "
                "the first request, as a TLS listener does; set security.protocol=SSL (or SASL_SSL) and "
                "ssl.ca.location in --properties"
            )
        if closed and "SASL" not in protocol:
            return (
                f"cannot connect to {server} with security.protocol={protocol}: the listener closed the connection "
                "after its first answer, as a SASL listener does to a client that does not log in; set "
                "security.protocol=SASL_PLAINTEXT (or SASL_SSL), sasl.mechanism, sasl.username and sasl.password "
                "in --properties"
            )
        if any("resolve" in t.lower() for t in texts):
            return f"cannot reach {server}: the host name does not resolve"
        last = f" (last: {_after(texts[-1], ': ')})" if texts else ""
        return f"cannot reach {server}: no answer within {waited:g} s{last}"


def _after(text: str, marker: str) -> str:
    """The part of a librdkafka message after ``marker`` (which names the broker), without the timing."""
    part = text.split(marker, 1)[-1]
    return re.sub(r"\s*\(after \d+ms in state \w+\)", "", part).strip()


class _Keep(logging.Handler):
    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.DEBUG)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record.getMessage())
        del self.into[:-200]


def denied_message(topic: str, settings: dict[str, str]) -> str:
    """The one line for READ refused on ``topic``: the ACL to ask for, and the Admin route."""
    user = settings.get("sasl.username")
    principal = f"User:{user}" if user else "User:<your principal>"
    server = settings.get("bootstrap.servers", "HOST:PORT")
    return (
        f"not allowed to read {topic} as {principal} (TOPIC_AUTHORIZATION_FAILED): ask for the ACL "
        f"'ALLOW {principal} READ on TOPIC {topic}' (kafka-acls.sh --bootstrap-server {server} --add "
        f"--allow-principal {principal} --operation Read --topic {topic}), or collect through the Admin API: "
        "--via admin (needs only DESCRIBE on the groups; --via auto takes it when READ is refused)"
    )
