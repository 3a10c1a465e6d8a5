"""The installed app's entry point, frozen by ``installer/cowork.spec`` into both of its programs.

``Cowork`` (the windowed program) and ``cowork-cli`` (the console one) are ``cowork``:
``cowork-cli exec "…"`` runs one task, ``Cowork open DIR`` opens the window. One more form is for the
app itself: ``cowork-cli --cowork-child MODULE ARGS…`` runs one of the helper programs the app starts
(``desktop.launch.child``: the embedded backend and the offline demo model) — there is no Python
interpreter in the package to run them with ``-m``. Any other MODULE is refused (exit 2): whoever
can start the app's console program must not be able to run arbitrary Python through it.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence

from desktop.launch.child import CHILD_OPTION, CHILD_PROGRAMS

EXIT_USAGE = 2


def run_child(argv: Sequence[str]) -> int:
    """``MODULE ARGS…``: ``MODULE``'s ``main(ARGS)``, for an allowlisted module only."""
    if not argv:
        print(f"cowork: {CHILD_OPTION} needs a module name", file=sys.stderr)
        return EXIT_USAGE
    module, arguments = argv[0], list(argv[1:])
    target = CHILD_PROGRAMS.get(module)
    if target is None:
        print(
            f"cowork: {CHILD_OPTION} {module[:100]!r} is not one of the app's helper programs "
            f"({', '.join(CHILD_PROGRAMS)})",
            file=sys.stderr,
        )
        return EXIT_USAGE
    # argparse in the helper names itself after argv[0]: say which program it is, as `-m` would.
    sys.argv = [module, *arguments]
    status = importlib.import_module(target).main(arguments)
    return int(status or 0)


def main(argv: Sequence[str]) -> int:
    if argv[:1] == [CHILD_OPTION]:
        return run_child(argv[1:])
    from desktop.cli import main as cowork

    return cowork(list(argv))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
