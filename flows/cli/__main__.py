"""`python -m flows.cli`."""

from flows.cli import main

main()
