"""``python -m ragmetrics`` runs the command line."""

import sys

from ragmetrics.cli import main

sys.exit(main())
