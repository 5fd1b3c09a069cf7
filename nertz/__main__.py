"""``python -m nertz``: the ``nertz`` command (:func:`nertz.cli.main`), for a tree or an
environment without the installed console script."""

from nertz.cli import main

raise SystemExit(main())
