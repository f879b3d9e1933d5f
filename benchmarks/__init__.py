"""Benchmarks: `python -m benchmarks.NAME`; they measure and print, never assert wall-clock time."""
