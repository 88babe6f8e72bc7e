"""The `langchef` parser: the top-level options and help, then each command's own parser, in
the order `langchef --help` lists them."""

from __future__ import annotations

import argparse

from . import (approve, db, demo, design, gate, import_logs, init, power, publish, readout,
               status, summary)
from .options import common_options, examples_epilog, paragraph

# Each module registers its subcommand (parser and handler) with `register(commands, common)`.
COMMANDS = (init, design, approve, status, power, readout, summary, gate, publish, import_logs,
            db, demo)

DESCRIPTION = """
    Tell, honestly, whether a change to an LLM/RAG application helped, hurt or cannot be told
    apart on its goldens."""
EXAMPLES = ("langchef init evals", "langchef design check example",
            "langchef approve example --by 'Ada Lovelace'", "langchef status",
            "langchef power --goldens 90 --discordant-rate 0.2", "langchef readout example",
            "langchef gate evals/reports/example/v1/readout.json")


def build_parser() -> argparse.ArgumentParser:
    common = common_options()
    parser = argparse.ArgumentParser(
        prog="langchef", parents=[common], formatter_class=argparse.RawDescriptionHelpFormatter,
        description=paragraph(DESCRIPTION),
        epilog=examples_epilog(EXAMPLES) + "\nRun `langchef COMMAND --help` for each command's "
                                           "options.")
    parser.add_argument("--version", action="version", version=f"langchef {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for command in COMMANDS:
        command.register(commands, common)
    return parser


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("langchef")
    except PackageNotFoundError:
        return "unknown"
