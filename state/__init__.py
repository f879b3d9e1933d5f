"""Pure logic and per-key state: plain dataclasses and pure transition functions, no I/O.

One subpackage per capability, in the order the data flows (docs/architecture.md):
`ingress` → `time` → `normalise` → `coref` → `terms` → `tagging` → `units` → `task` →
`validity` → `recall` → `respond`; `metrics` beside them; `core` is what all share.
Each subpackage's docstring says what it holds, what comes in, what goes out and what it may
import. The whole of `state` imports `schemas` only (checked by the import contracts in
pyproject.toml).
"""
