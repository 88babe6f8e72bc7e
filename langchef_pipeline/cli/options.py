"""What the commands' parsers and runs share: the options every command takes, the shape of
a command's help, and the workspace a command works in."""

from __future__ import annotations

import argparse

from .output import CommandError


def common_options() -> argparse.ArgumentParser:
    # SUPPRESS keeps an option given before the subcommand from being reset by the
    # subcommand's own default, so `langchef --workspace X status` and
    # `langchef status --workspace X` both work.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--workspace", metavar="DIR", default=argparse.SUPPRESS,
                        help="the workspace folder (default: $LANGCHEF_WORKSPACE, else ./evals)")
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="print machine-readable JSON instead of text")
    return common


def add_command(commands, name: str, common, *, help: str, description: str, examples):
    """A subcommand with the common options (none when ``common`` is None), its description
    (a paragraph: line breaks and indents become single spaces) and an epilog of examples
    (one command line each)."""
    return commands.add_parser(
        name, parents=[common] if common is not None else [], help=help,
        description=paragraph(description), epilog=examples_epilog(examples),
        formatter_class=argparse.RawDescriptionHelpFormatter)


def paragraph(text: str) -> str:
    """A triple-quoted paragraph as one line, as the help shows a description."""
    return " ".join(text.split())


def examples_epilog(examples) -> str:
    return "examples:\n" + "".join(f"  {example}\n" for example in examples)


def open_workspace(arguments, *, reports=None):
    """The workspace --workspace (or $LANGCHEF_WORKSPACE, else ./evals) names; it must exist."""
    from langchef_core.inputs.workspace import Workspace

    workspace = Workspace.at(getattr(arguments, "workspace", None), reports=reports)
    if not workspace.root.is_dir():
        raise CommandError(f"workspace folder {workspace.root} not found; create one with "
                           f"`langchef init {workspace.root}` or pass --workspace DIR.")
    return workspace


def judge_endpoint(design) -> dict | None:
    """The endpoint an LLM-judged design would call, and whether the operator allows it."""
    if design.judge is None or design.judge.kind != "openai_compatible":
        return None
    from langchef_core.scoring.judges.endpoints import endpoint_summary

    return endpoint_summary(str(design.judge.to_dict().get("base_url", "")))
