"""Kafka: connection settings, topic admin and lag, whole-topic reads, the typed sink and the replay source.

May import: `schemas`, `state`.
"""
