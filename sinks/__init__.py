"""Everything that touches the outside world, one subpackage per kind: `kafka`, `store` (Qdrant),
`redis`, `models` (embedders, tagger, ASR), `http` (vLLM client, verifiers), `files` (JSONL),
`metrics` (exporters, chart), `respond` (the responder at run time).

May import: `schemas`, `state` and other `sinks` packages; never `operators` or `flows`.
"""
