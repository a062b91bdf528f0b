"""``python -m agurk.cli``: the ``agurk`` command."""

import sys

from agurk.cli import main

sys.exit(main())
