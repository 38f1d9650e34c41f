"""``python -m bench`` (what ``bench/run`` calls)."""

import sys

from bench.main import main

sys.exit(main())
