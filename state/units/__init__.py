"""Entropy windows over neighbouring segments, the unit cut, memory-unit assembly and each unit's
final emotion load.

In: a tagged `Turn`. Out: `MemoryUnit`s. May import: `schemas`, `state.core`, `state.normalise`,
`state.terms`, `state.tagging`.
"""
