"""`python -m nsb.cli`, as `python nsb/cli.py` ran before the CLI became a package."""

from nsb.cli import main

raise SystemExit(main())
