"""``python -m ccrawl`` runs the CLI."""

from ccrawl.cli.main import entry

entry()
