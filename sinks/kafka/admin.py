"""The Kafka tools' public names in one place: connection settings, topic admin, JSONL
produce, consumer lag and whole-topic reads (each in its own module beside this one)."""

from __future__ import annotations

from sinks.kafka.connection import KafkaConnection
from sinks.kafka.lag import consumer_lag
from sinks.kafka.produce import ProduceReport, produce_jsonl
from sinks.kafka.topics import create_topics, read_topic

__all__ = [
    "KafkaConnection",
    "ProduceReport",
    "consumer_lag",
    "create_topics",
    "produce_jsonl",
    "read_topic",
]
