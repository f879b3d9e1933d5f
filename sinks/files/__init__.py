"""JSONL files as sources and sinks (replay archives, dead letters, outputs) and source pacing.

May import: `schemas`, `state`.
"""
