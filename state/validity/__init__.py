"""Temporal validity: permanent, periodic and transient facts, from lexicons and the turn's
normalised times.

In: a `MemoryUnit`. Out: the unit with its validity window. May import: `schemas`, `state.core`,
`state.task` (its cue lexicon).
"""
