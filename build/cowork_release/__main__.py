"""``python -m cowork_release``: the same as ``cowork-release``."""

import sys

from cowork_release.cli import main

sys.exit(main())
