"""``python -m claw_sessiond`` runs the CLI."""

from .cli import main

raise SystemExit(main())
