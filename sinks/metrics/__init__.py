"""Windowed-metrics exporters (Redis hash, Prometheus) and the PNG chart of a run.

May import: `schemas`, `state`.
"""
