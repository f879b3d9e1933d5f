"""Recall: which turns trigger it, reading the question, BM25 and vector relevance, the causal-cue
score, verification guard, arbitration between sources, explanations.

In: a question (with its session context) and candidate memories. Out: scored, explained cues.
May import: `schemas`, `state.core`, `state.normalise`.
"""
