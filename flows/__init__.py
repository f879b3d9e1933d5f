"""Composition only: settings, build_flow(settings) -> Dataflow, and the CLI."""
