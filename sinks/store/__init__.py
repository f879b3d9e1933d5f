"""Vector memory stores behind one small interface (`sinks.store.base`), the Bytewax sink that
upserts into them, supersession of a corrected memory and the recent-actions tier.

May import: `schemas`, `state`.
"""
