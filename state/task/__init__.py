"""The task state machine: declarative transition table, cue lexicon, goal anchoring, progressive
entity extraction, what a task remembers, and the pure transition function.

In: the session's `TaskState` and a turn. Out: the next state and archived-task records.
May import: `schemas`, `state.core`, `state.normalise`.
"""
