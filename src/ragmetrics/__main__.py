"""``python -m ragmetrics`` runs the command line."""

from ragmetrics.cli._commands import console

console()
