"""The responder's pure logic: decision tables, the calculator route, prompt building, the fallback
answer, reflection on a user's correction, and the feed that orders corrections after answers.

In: recall results, task state, corrections. Out: prompts, decisions, responses, reflections.
May import: `schemas`, `state.core`, `state.time`.
"""
