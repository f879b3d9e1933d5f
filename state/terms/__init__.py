"""Term whitelist and authority lexicon (Aho-Corasick): per-sentence notes that keep terms whole
and mark authoritative statements for the entropy cut.

In: sentence text. Out: term and authority notes. May import: `schemas`, `state.core`.
"""
