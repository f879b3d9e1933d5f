"""The RecallFlow exception tree.

    RecallFlowError                      root: catch this to catch everything of ours
    ├── ConfigurationError               bad settings, missing model, unknown backend: fail at start
    │   └── LexiconError                 a lexicon, dictionary or term file is missing or malformed
    ├── InputError                       one bad input record: dead-letter it, keep the flow going
    │   ├── MalformedEventError          not UTF-8, not JSON, not a JSON object, too deep
    │   ├── OversizedEventError          raw bytes or text over the configured limit
    │   ├── UnsupportedVersionError      schema_version we do not understand
    │   └── EventValidationError         valid JSON that does not match the schema
    ├── ModelError                       an embedder or tagger failed to load or run
    └── SinkError                        the outside world failed (retried in sinks only)
        ├── StoreError                   vector store write/read failed
        ├── StateMirrorError             Redis mirror write/read failed
        └── BrokerError                  Kafka admin/produce failed

Each class says when it is raised and what the caller should do.
"""

from __future__ import annotations


class RecallFlowError(Exception):
    """Root of every error RecallFlow raises on purpose."""


class ConfigurationError(RecallFlowError):
    """Raised while building the flow when settings are invalid; fix the settings and restart."""


class LexiconError(ConfigurationError):
    """Raised when a lexicon, entity dictionary or term file cannot be read or parsed.

    At start it fails the flow (fix the file and restart); on a hot reload the caller logs it
    and keeps using the last good version.
    """


class InputError(RecallFlowError):
    """Raised for one bad input record; the caller turns it into a DeadLetter and moves on."""

    error_type: str = "input_error"


class MalformedEventError(InputError):
    """Raised when the raw bytes are not UTF-8, not JSON, or not a JSON object."""

    error_type = "malformed"


class OversizedEventError(InputError):
    """Raised when the raw record or its text exceeds the configured size limit."""

    error_type = "oversized"


class UnsupportedVersionError(InputError):
    """Raised when `schema_version` names a version this build cannot read."""

    error_type = "unsupported_version"


class EventValidationError(InputError):
    """Raised when JSON does not match the event schema (missing session id, wrong types)."""

    error_type = "validation"


class ModelError(RecallFlowError):
    """Raised when a model cannot be loaded or fails on input; check the model path."""


class SinkError(RecallFlowError):
    """Raised by an adapter in sinks/ after its retry policy gave up; the flow fails or degrades."""


class StoreError(SinkError):
    """Raised when the vector store rejects or cannot complete an operation."""


class StateMirrorError(SinkError):
    """Raised when the Redis state mirror cannot be read or written."""


class BrokerError(SinkError):
    """Raised when a Kafka admin or produce operation fails."""
