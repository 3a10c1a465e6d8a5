"""``python -m contracts.schemas [--check]``: regenerate the JSON Schema files, or verify them."""

from __future__ import annotations

import argparse
import sys

from contracts.schemas import SCHEMA_DIR, differences, write


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m contracts.schemas", description=__doc__)
    parser.add_argument("--check", action="store_true", help="fail if any file is out of date")
    args = parser.parse_args(argv)
    if not args.check:
        write()
        print(f"schemas written to {SCHEMA_DIR}")
        return 0
    problems = differences()
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print("JSON schemas are out of date: run `python -m contracts.schemas`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
