"""``assignors collect``'s ``--properties``: read as Java's properties files are, and no secret value ever printed.

Pure functions, no cluster: the properties reader, the JAAS translation, the redaction of every printed line, and
librdkafka's failures turned into one line (from the errors a real broker gave, as recorded in the secured tests).
"""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from assignors import UsageError
from assignors.collect._client import (
    HIDDEN,
    KNOWN_NAMES,
    ClientEvents,
    Redactor,
    client_settings,
    is_secret,
    read_properties,
)

SECRET_NAMES = ("sasl.password", "ssl.key.password", "ssl.keystore.password", "sasl.oauthbearer.client.secret")
PLAIN_NAMES = ("security.protocol", "sasl.mechanism", "sasl.username", "client.id")
WHERE = "--properties client.properties"
VOCABULARY = " ".join(
    [
        WHERE,
        *KNOWN_NAMES,
        "line is not key=value (the line is not shown) ...",
        "a setting named as a secret is not one librdkafka knows",
        "0123456789",
    ]
)
"""Every word a message of the reader may hold besides the secrets: a secret inside it is not a leak."""

secret_values = st.text(
    st.characters(codec="utf-8", exclude_characters="\n\r\\\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"), min_size=6
).filter(lambda v: v.strip() == v and v not in VOCABULARY)


@st.composite
def property_files(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A properties file of good lines, comments, continued values and malformed lines, with the secrets in it."""
    secrets: list[str] = []
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 8))):
        kind = draw(st.sampled_from(["secret", "plain", "comment", "continued", "spaced", "glued", "alone", "colon"]))
        name = draw(st.sampled_from(SECRET_NAMES))
        value = draw(secret_values)
        if kind == "plain":
            lines.append(f"{draw(st.sampled_from(PLAIN_NAMES))}=PLAIN")
            continue
        if kind == "comment":
            lines.append("# a comment")
            continue
        secrets.append(value)
        lines += {
            "secret": [f"{name}={value}"],
            "continued": [f"{name}=\\", f"    {value}"],
            "spaced": [f"{name} {value}"],
            "glued": [f"{name}{value}"],
            "alone": [value],
            "colon": [f"{name}: {value}"],
        }[kind]
    return "\n".join(lines) + "\n", secrets


@given(property_files())
def test_no_message_of_the_reader_holds_a_secret_value(case: tuple[str, list[str]]) -> None:
    """A malformed line is named by its number and, at most, a known setting's name: never by a value."""
    text, secrets = case
    assume(not any(secret in VOCABULARY for secret in secrets))
    try:
        settings = read_properties(text, WHERE)
    except UsageError as error:
        message = str(error)
        assert message.startswith(f"{WHERE} line ")
        assert not [secret for secret in secrets if secret in message], message
    else:
        # a secret run into its setting's name is refused (the name would be printed); a line alone is a key
        assert {name for name in settings if is_secret(name)} <= set(SECRET_NAMES)


@given(st.lists(secret_values, min_size=1, max_size=4), st.lists(st.text(max_size=12), max_size=6))
def test_a_redacted_line_holds_no_secret(secrets: list[str], fillers: list[str]) -> None:
    """Secrets anywhere in a line, overlapping or repeated: each occurrence is inside a ``[hidden]``."""
    pieces = [piece for pair in zip(fillers, secrets * 3, strict=False) for piece in pair]
    line = "".join(pieces) + "".join(secrets)
    redact = Redactor.of({f"x{n}.password": secret for n, secret in enumerate(secrets)})
    shown = redact(line)
    assert not [s for s in secrets if s in shown.replace(HIDDEN, "\0")], shown
    assert redact("nothing secret here") == "nothing secret here"


def test_which_settings_are_secret() -> None:
    secret = ["sasl.password", "ssl.key.password", "ssl.keystore.password", "ssl.key.pem", "sasl.jaas.config"]
    secret += ["sasl.oauthbearer.client.secret", "SASL.PASSWORD", "ssl.keystore.location", "sasl.oauthbearer.config"]
    assert all(is_secret(name) for name in secret)
    assert not [n for n in ("sasl.username", "security.protocol", "ssl.ca.location", "client.id") if is_secret(n)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("security.protocol\n", "line 1: 'security.protocol' is not key=value"),
        ("# c\n\nsasl.password hunter2-secret\n", "line 3: 'sasl.password ...' is not key=value"),
        ("sasl.password: hunter2-secret\n", "line 1: 'sasl.password ...' is not key=value"),
        ("sasl.passwordhunter2\n", "line 1: is not key=value (the line is not shown)"),
        ("hunter2-secret\n", "line 1: is not key=value (the line is not shown)"),
        ("a=1\nsasl.password=\\\n  hunter2\nb\n", "line 4: is not key=value (the line is not shown)"),
        ("=value\n", "line 1: is not key=value (the line is not shown)"),
        ("sasl.password hunter=2\n", "line 1: 'sasl.password ...' is not key=value"),
        (
            "sasl.passwordhunter=2\n",
            "line 1: a setting named as a secret is not one librdkafka knows (the line is not shown)",
        ),
    ],
)
def test_a_malformed_line_is_named_by_its_number(text: str, message: str) -> None:
    with pytest.raises(UsageError) as raised:
        read_properties(text, WHERE)
    assert str(raised.value) == f"{WHERE} {message}"


def test_lines_are_read_as_java_reads_a_properties_file() -> None:
    text = (
        "# client.properties\n! also a comment\n  security.protocol = SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
        '    username="alice" \\\n    password="p=w\\"d";\n'
    )
    given_settings = read_properties(text, WHERE)
    assert given_settings["security.protocol"] == "SASL_SSL"
    settings = client_settings("h:9093", given_settings)
    assert settings == {
        "bootstrap.servers": "h:9093",
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.username": "alice",
        "sasl.password": 'p=w"d',
    }
    redact = Redactor.of(given_settings)
    assert redact('password="p=w\\"d" or p=w"d') == f'password="{HIDDEN}" or {HIDDEN}'


def test_a_jaas_line_of_another_login_module_is_refused_without_its_value() -> None:
    jaas = 'com.sun.security.auth.module.Krb5LoginModule required keyTab="/k" principal="kafka@X" secret="s3cr3t";'
    with pytest.raises(UsageError) as raised:
        client_settings("h:1", {"sasl.jaas.config": jaas})
    assert "s3cr3t" not in str(raised.value)
    assert "sasl.jaas.config of a login module librdkafka has no equivalent" in str(raised.value)


class _Error:
    def __init__(self, name: str, text: str) -> None:
        self._name, self._text = name, text

    def name(self) -> str:
        return self._name

    def str(self) -> str:
        return self._text


@pytest.mark.parametrize(
    ("errors", "logs", "settings", "expected"),
    [
        (
            [("_TRANSPORT", "h:1/bootstrap: Connect to ipv4#127.0.0.1:1 failed: Connection refused (after 0ms)")],
            [],
            {},
            "cannot reach h:1: connection refused (is the address right, and the broker up?)",
        ),
        (
            [("_TRANSPORT", "h:1/bootstrap: Failed to resolve 'nowhere:9092': Name or service not known")],
            [],
            {},
            "cannot reach h:1: the host name does not resolve",
        ),
        ([], [], {}, "cannot reach h:1: no answer within 4 s"),
    ],
    ids=["refused", "unresolved", "silent"],
)  # fmt: skip
def test_what_librdkafka_said_becomes_one_line(
    errors: list[tuple[str, str]], logs: list[str], settings: dict[str, str], expected: str
) -> None:
    events = ClientEvents()
    for name, text in errors:
        events._error(_Error(name, text))
    events.logs += logs
    assert events.explain({"bootstrap.servers": "h:1", **settings}, 4) == expected
