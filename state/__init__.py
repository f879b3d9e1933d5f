"""Per-key state as plain dataclasses and pure transition functions. Imports schemas/ only."""
