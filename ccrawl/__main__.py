"""``python -m ccrawl`` runs the CLI (the SIGINT handler is installed before anything else)."""

from ccrawl._entry import run

run()
