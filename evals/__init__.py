"""Quality evaluations: `python -m evals.NAME`; they read ../shared/data/dev and print figures."""
