"""`langchef demo`: build the demo workspace and read out every experiment in it."""

from __future__ import annotations

import argparse

from .options import add_command

DESCRIPTION = """
    Build the demo workspace (planted effects, approved designs), read out every experiment
    through Dagster and print each verdict line and report path."""
EXAMPLES = ("langchef demo", "langchef demo --workspace demo-workspace")


# Not $LANGCHEF_WORKSPACE, which names a team's own workspace: the demo builds its own.
DEMO_WORKSPACE = "demo-workspace"


def register(commands, common) -> None:
    # Its own --workspace (a default of its own) and no --json: not the common options. The
    # default is applied when the command runs (SUPPRESS here), so that a --workspace given
    # before the command (`langchef --workspace X demo`) is not reset by it.
    demo = add_command(commands, "demo", None,
                       help="run the built-in demo and print its readouts",
                       description=DESCRIPTION, examples=EXAMPLES)
    demo.add_argument("--workspace", default=argparse.SUPPRESS, metavar="DIR",
                      help=f"where the demo workspace goes (default: {DEMO_WORKSPACE}; "
                           "$LANGCHEF_WORKSPACE is not used)")
    demo.set_defaults(handler=run_demo)


def demo_folder(arguments) -> str:
    return getattr(arguments, "workspace", DEMO_WORKSPACE)


def run_demo(arguments) -> int:
    from langchef_pipeline.demo import run_demo as build_and_read_out

    return build_and_read_out(demo_folder(arguments))
