"""Shared ground for every capability package: hot-reloading data files, data-file loaders,
language-mix detection and sentence splitting, the embedder protocol, the session-closed signal.

In: file paths and raw text. Out: parsed data, `HotFile` values, language labels, sentences.
May import: `schemas` only (no other `state` package).
"""
