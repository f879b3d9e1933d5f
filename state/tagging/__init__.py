"""Intent and emotion tagging, role-aware, over one turn's clause segments; the tagging lexicon.

In: a normalised `Turn`. Out: per-segment intent, emotion and stress tags with their cues.
May import: `schemas`, `state.core`, `state.normalise`.
"""
