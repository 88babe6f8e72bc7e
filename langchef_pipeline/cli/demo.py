"""`langchef demo`: build the demo workspace and read out every experiment in it."""

from __future__ import annotations

from .options import add_command

DESCRIPTION = """
    Build the demo workspace (planted effects, approved designs), read out every experiment
    through Dagster and print each verdict line and report path."""
EXAMPLES = ("langchef demo", "langchef demo --workspace demo-workspace")


def register(commands, common) -> None:
    # Its own --workspace (a default of its own) and no --json: not the common options.
    demo = add_command(commands, "demo", None,
                       help="run the built-in demo and print its readouts",
                       description=DESCRIPTION, examples=EXAMPLES)
    demo.add_argument("--workspace", default="demo-workspace", metavar="DIR",
                      help="where the demo workspace goes (default: demo-workspace)")
    demo.set_defaults(handler=run_demo)


def run_demo(arguments) -> int:
    from langchef_pipeline.demo import run_demo as build_and_read_out

    return build_and_read_out(arguments.workspace)
