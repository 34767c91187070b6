"""``python -m a2a_core.cli``: the ``a2a`` command without its console script."""

import sys

from .main import main

sys.exit(main())
