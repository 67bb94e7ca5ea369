"""``python -m smartctx`` runs the command line."""

import sys

from smartctx.cli import main

sys.exit(main())
