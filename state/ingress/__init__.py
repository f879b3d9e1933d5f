"""Parse and validate raw input records; turn ASR transcripts into conversation events.

In: raw bytes / dicts from a source, ASR segments. Out: `ConversationEvent`s or `DeadLetter`s.
May import: `schemas`, `state.core`.
"""
