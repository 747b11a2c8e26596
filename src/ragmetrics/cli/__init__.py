"""The command line: ``ragmetrics evaluate | compare | report | trec_eval | ...``.

:func:`main` is the console script's entry point; the commands live in :mod:`.commands`,
the trec_eval stand-in in :mod:`.trec_eval`.
"""

from ragmetrics.cli.commands import main

__all__ = ["main"]
