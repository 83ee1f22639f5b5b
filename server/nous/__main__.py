"""`python -m nous` runs the CLI."""

from nous.cli import main

raise SystemExit(main())
