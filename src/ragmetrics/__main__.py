"""``python -m ragmetrics`` runs the command line."""

from ragmetrics.cli.commands import console

console()
