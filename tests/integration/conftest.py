"""Fixtures for tests against real services (Kafka broker, Redis).

These fixtures fail, never skip, when a service does not answer: an integration run that
silently skips everything looks green while testing nothing. Start the services with
`infra/services.sh up` (or point the variables below at your own).

    RECALLFLOW_KAFKA__BOOTSTRAP_SERVERS   default 127.0.0.1:19092
    RECALLFLOW_REDIS__URL                 default redis://127.0.0.1:6379/15
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Callable

import pytest
import redis
from confluent_kafka import KafkaException
from confluent_kafka.admin import AdminClient

from sinks.kafka.admin import KafkaConnection

_DEFAULT_BOOTSTRAP = "127.0.0.1:19092"
_DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/15"
_PROBE_TIMEOUT_S = 10.0


@pytest.fixture(scope="session")
def kafka_bootstrap() -> str:
    """Bootstrap servers of a broker that answers a metadata request."""
    bootstrap = os.environ.get("RECALLFLOW_KAFKA__BOOTSTRAP_SERVERS", _DEFAULT_BOOTSTRAP)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    problem = None
    try:
        admin.list_topics(timeout=_PROBE_TIMEOUT_S)
    except KafkaException as exc:
        problem = str(exc)
    if problem is not None:  # failing outside `except` keeps the report to one clear message
        pytest.fail(
            f"no Kafka broker answers at {bootstrap} within {_PROBE_TIMEOUT_S} s ({problem}); "
            "run `infra/services.sh up` or set RECALLFLOW_KAFKA__BOOTSTRAP_SERVERS",
            pytrace=False,
        )
    return bootstrap


@pytest.fixture(scope="session")
def kafka_conn(kafka_bootstrap: str) -> KafkaConnection:
    """A plaintext connection to the test broker."""
    return KafkaConnection(bootstrap_servers=kafka_bootstrap)


@pytest.fixture
def topic_name() -> Callable[[str], str]:
    """Factory of unique topic names, so reruns against a persistent broker never collide."""

    def make(prefix: str = "it") -> str:
        return f"recallflow-{prefix}-{uuid.uuid4().hex[:12]}"

    return make


@pytest.fixture(scope="session")
def redis_url() -> str:
    """URL of a Redis that answers PING (database 15 by default, away from real data)."""
    url = os.environ.get("RECALLFLOW_REDIS__URL", _DEFAULT_REDIS_URL)
    client = redis.Redis.from_url(url, socket_timeout=_PROBE_TIMEOUT_S)
    problem = None
    try:
        client.ping()
    except redis.RedisError as exc:
        problem = str(exc)
    finally:
        client.close()
    if problem is not None:
        pytest.fail(
            f"no Redis answers at {url} ({problem}); run `infra/services.sh up` or set RECALLFLOW_REDIS__URL",
            pytrace=False,
        )
    return url
