"""``python -m ragmetrics`` runs the command line."""

import sys

from ragmetrics.cli.commands import main

sys.exit(main())
