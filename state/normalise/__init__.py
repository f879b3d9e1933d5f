"""The normalise stage: a conversation turn as it moves through the write path, its clause
segments, language mix, time expressions and term notes.

In: a `ConversationEvent`. Out: a `Turn` with segments. May import: `schemas`, `state.core`,
`state.time`, `state.terms`.
"""
