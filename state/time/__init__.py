"""Time normalisation: find time expressions in Chinese and English and resolve them against the
event's own timestamp (so a replay gives the live run's answers).

In: sentence text, the event time and zone. Out: `TimeExpression`s with UTC instants.
May import: `schemas`, `state.core`.
"""
