"""Vector memory stores behind one small interface (see `sinks.store.base`)."""
