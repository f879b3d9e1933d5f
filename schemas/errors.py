"""The RecallFlow exception tree.

    RecallFlowError                      root: catch this to catch everything of ours
    ├── ConfigurationError               bad settings, missing model, unknown backend: fail at start
    │   └── ResourceFileError            a data file (lexicon, table, calendar) is missing or invalid
    │       ├── TransitionTableError     a task transition table names unknown stages/actions/modes
    │       └── LexiconError             a lexicon, dictionary or term file is missing or malformed
    ├── InputError                       one bad input record: dead-letter it, keep the flow going
    │   ├── MalformedEventError          not UTF-8, not JSON, not a JSON object, too deep
    │   ├── OversizedEventError          raw bytes or text over the configured limit
    │   ├── UnsupportedVersionError      schema_version we do not understand
    │   └── EventValidationError         valid JSON that does not match the schema
    ├── CyclePatternError                a validity cycle_pattern that cannot be evaluated
    ├── ModelError                       an embedder or tagger failed to load or run
    ├── CalculationError                 a numeric question cannot be computed safely (route to the LLM)
    └── SinkError                        the outside world failed (retried in sinks only)
        ├── StoreError                   vector store write/read failed
        │   └── StoreUnavailableError    the store cannot be opened now (held by another process, server down)
        ├── StateMirrorError             Redis mirror write/read failed
        ├── BrokerError                  Kafka admin/produce failed
        ├── ChatEndpointError            chat endpoint down, slow or garbage after its retry (use the fallback)
        ├── VerifierError                a fact verifier (HTTP) failed, timed out or answered garbage
        ├── MetricsExportError           Redis/Prometheus metrics export failed
        └── TranscriptionError           an audio file could not be decoded or transcribed

Each class says when it is raised and what the caller should do.
"""

from __future__ import annotations


class RecallFlowError(Exception):
    """Root of every error RecallFlow raises on purpose."""


class ConfigurationError(RecallFlowError):
    """Raised while building the flow when settings are invalid; fix the settings and restart."""


class ResourceFileError(ConfigurationError):
    """Raised when a data file (lexicon, dictionary, transition table, calendar) cannot be read or
    parsed. At start this fails the build; on a hot reload the loader logs it and keeps serving the
    previous good version, so fix the file and it is picked up on the next check."""


class TransitionTableError(ResourceFileError):
    """Raised when a task transition table refers to an unknown stage, action or mode, or misses
    a required section; fix the table (see docs/task-state-machine.md)."""


class CyclePatternError(RecallFlowError):
    """Raised when a `cycle_pattern` is not one of the evaluable forms (every_monday, daily,
    weekdays, weekends, monthly_day_N, during_promotion[:ID]); the caller treats the memory as
    not currently applicable and should fix the lexicon that produced it."""


class LexiconError(ResourceFileError):
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


class CalculationError(RecallFlowError):
    """Raised when a question routed to the calculator has no safe arithmetic reading (division by
    zero, an operator without operands, a result out of range); the caller answers via the LLM."""


class SinkError(RecallFlowError):
    """Raised by an adapter in sinks/ after its retry policy gave up; the flow fails or degrades."""


class StoreError(SinkError):
    """Raised when the vector store rejects or cannot complete an operation."""


class StoreUnavailableError(StoreError):
    """Raised by the HTTP API's store lease (flows/api/store_lease.py) when the store cannot be
    opened right now: an embedded store is held by another process (a replay is writing it) or a
    store server does not answer. The API answers 503 with Retry-After; retry later."""


class StateMirrorError(SinkError):
    """Raised when the Redis state mirror cannot be read or written."""


class BrokerError(SinkError):
    """Raised when a Kafka admin or produce operation fails."""


class ChatEndpointError(SinkError):
    """Raised by the chat client when the endpoint is down, too slow, or answers garbage after its
    one retry; `reason` is one of endpoint_down, timeout, http_error, garbage. The responder
    catches it and answers from the cue-grounded fallback template."""

    def __init__(self, reason: str, message: str, *, attempts: int = 0) -> None:
        super().__init__(message)
        self.reason = reason
        self.attempts = attempts


class VerifierError(SinkError):
    """Raised by a verifier in sinks/http/verifiers.py when its call fails, times out, is refused
    (HTTP 429/5xx) or answers something that is not a verdict. The recall guard records it as a
    failure (two in a row open the breaker) and treats the fact as unverified; never fatal."""

    def __init__(self, message: str, *, rate_limited: bool = False, timed_out: bool = False) -> None:
        super().__init__(message)
        self.rate_limited = rate_limited
        self.timed_out = timed_out


class MetricsExportError(SinkError):
    """Raised when a windowed-metrics exporter (Redis hash, Prometheus endpoint) fails after retries."""


class TranscriptionError(SinkError):
    """Raised when an audio file cannot be read or transcribed; check the file and the ASR model."""
