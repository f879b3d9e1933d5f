"""Bytewax wiring: one module per operator over pure functions in state/."""
