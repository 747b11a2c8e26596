"""The command line: ``ragmetrics evaluate | compare | report | trec_eval | ...``.

:func:`main` runs the command line and returns its exit code (:func:`console`, the console
script's entry point, ends the process with it); the commands live in :mod:`.commands`,
the trec_eval stand-in in :mod:`.trec_eval`.
"""

from ragmetrics.cli._commands import console, main

__all__ = ["console", "main"]
