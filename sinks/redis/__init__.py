"""The Redis mirror of per-session task state (`task_state:{session_id}`, with a TTL).

May import: `schemas`, `state`.
"""
