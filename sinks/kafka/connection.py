"""Kafka connection settings and the helpers every plain confluent-kafka call here shares.

Why modules of their own (this one, topics.py, produce.py, lag.py): the flow (flows/) wires
Bytewax's Kafka connector, but tools and tests need the same broker through plain
confluent-kafka calls, with the same connection settings, explicit timeouts and one error
type (`BrokerError`). Nothing here imports Bytewax.

Broker independence: nothing relies on broker-specific behaviour. In particular topics are
never created implicitly: metadata is always requested for *all* topics, because a metadata
request naming a missing topic auto-creates it on brokers with auto-creation on (Apache
Kafka's default, and Tansu's), and producing to a missing topic is refused rather than left
to the broker.

Each public call logs one JSON line on the ``sinks.kafka.admin`` logger.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field

from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from schemas.errors import BrokerError, ConfigurationError

_log = logging.getLogger("sinks.kafka.admin")

_SECURITY_PROTOCOLS = frozenset({"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"})
# What confluent-kafka's constructors accept; `client_config()` promises plain strings.
ClientConfig = dict[str, str | int | float | bool]


def log_call(op: str, **fields: object) -> None:
    _log.info(json.dumps({"component": "sinks.kafka.admin", "op": op, **fields}, default=str))


@dataclass(frozen=True)
class KafkaConnection:
    """Where the brokers are and how to authenticate; the one input every call here takes.

    The caller resolves secrets (e.g. ``SecretStr.get_secret_value()``) and passes the plain
    value; it is kept out of ``repr`` so it does not leak into logs or tracebacks.

    >>> KafkaConnection("127.0.0.1:19092").client_config()
    {'bootstrap.servers': '127.0.0.1:19092', 'security.protocol': 'PLAINTEXT'}
    """

    bootstrap_servers: str
    security_protocol: str = "PLAINTEXT"
    sasl_mechanism: str | None = None
    sasl_username: str | None = None
    sasl_password: str | None = field(default=None, repr=False)
    ssl_ca_location: str | None = None
    log_level: int | None = None  # librdkafka's stderr log (syslog level); None: its default

    def __post_init__(self) -> None:
        # Fail at start, not at the first produce deep inside a running flow.
        if not self.bootstrap_servers.strip():
            msg = "Kafka bootstrap_servers is empty; set e.g. '127.0.0.1:19092'"
            raise ConfigurationError(msg)
        if self.security_protocol not in _SECURITY_PROTOCOLS:
            msg = f"Kafka security_protocol {self.security_protocol!r} is not one of {sorted(_SECURITY_PROTOCOLS)}"
            raise ConfigurationError(msg)
        uses_sasl = self.security_protocol.startswith("SASL_")
        if uses_sasl and not self.sasl_mechanism:
            msg = f"Kafka security_protocol {self.security_protocol} needs sasl_mechanism"
            raise ConfigurationError(msg)
        has_sasl_fields = any(v is not None for v in (self.sasl_mechanism, self.sasl_username, self.sasl_password))
        if has_sasl_fields and not uses_sasl:
            # Credentials with a non-SASL protocol would be silently ignored by librdkafka.
            msg = (
                f"Kafka SASL settings given but security_protocol is {self.security_protocol}; "
                "use SASL_PLAINTEXT or SASL_SSL"
            )
            raise ConfigurationError(msg)

    def client_config(self) -> dict[str, str]:
        """The librdkafka configuration keys for this connection (no client-role keys)."""
        config = {
            "bootstrap.servers": self.bootstrap_servers,
            "security.protocol": self.security_protocol,
        }
        optional = {
            "sasl.mechanism": self.sasl_mechanism,
            "sasl.username": self.sasl_username,
            "sasl.password": self.sasl_password,
            "ssl.ca.location": self.ssl_ca_location,
            "log_level": None if self.log_level is None else str(self.log_level),
        }
        config.update({k: v for k, v in optional.items() if v is not None})
        return config


def client(conn: KafkaConnection, extra: Mapping[str, str] | None = None) -> ClientConfig:
    """The connection's config plus client-role keys, typed as the clients want it."""
    config: ClientConfig = {**conn.client_config()}
    config.update(extra or {})
    return config


def topic_partitions(admin: AdminClient, topic: str, timeout_s: float) -> list[int]:
    """Partition ids of an existing topic; BrokerError when it is missing or unreadable."""
    try:
        # No topic argument on purpose: naming the topic would auto-create it.
        metadata = admin.list_topics(timeout=timeout_s)
    except KafkaException as exc:
        msg = f"Kafka metadata request failed: {exc}"
        raise BrokerError(msg) from exc
    topic_meta = metadata.topics.get(topic)
    if topic_meta is None:
        msg = f"Kafka topic {topic!r} does not exist; create it first (create_topics)"
        raise BrokerError(msg)
    if topic_meta.error is not None:
        msg = f"Kafka topic {topic!r} metadata error: {topic_meta.error}"
        raise BrokerError(msg)
    return sorted(topic_meta.partitions)
