"""The responder at run time: async answering beside the dataflow, the Kafka service around it.

May import: `schemas`, `state`, `sinks.http`, `sinks.store`, `sinks.kafka`, `sinks.models`.
"""
