"""`python -m assistant ...`: the same command line as the `assistant` script."""

import sys

from assistant.cli import main

sys.exit(main())
