"""Everything that touches the outside world: stores, Redis, Kafka, model runtimes, HTTP."""
