"""Coreference with dynamic windows: the mention window of a session, the mentions and anaphors
of each sentence, names said in passing, and the lexicon/entity dictionary they read.

In: a turn's sentences and the session's window. Out: resolved references and the next window.
May import: `schemas`, `state.core`.
"""
