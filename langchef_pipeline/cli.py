"""The `langchef` command line."""

from __future__ import annotations

import argparse
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="langchef", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    demo = commands.add_parser("demo", help="run the built-in demo and print its readouts")
    demo.add_argument("--workspace", default="demo-workspace")
    arguments = parser.parse_args(argv)
    if arguments.command == "demo":
        from .console_demo import run
        return run(arguments)
    return 2


if __name__ == "__main__":
    sys.exit(main())
