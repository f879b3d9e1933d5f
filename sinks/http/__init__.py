"""HTTP clients: the OpenAI-compatible chat client (vLLM) and the fact verifiers.

May import: `schemas`, `state`.
"""
