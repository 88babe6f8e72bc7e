"""`langchef import TOOL LOG...`: one arm's log from Inspect AI, lm-evaluation-harness or
promptfoo as runs/EXPERIMENT/ARM.jsonl (and the suite's goldens when missing)."""

from __future__ import annotations

from .options import add_command, open_workspace
from .output import CommandError, emit


DESCRIPTION = """
    Read one arm's log from Inspect AI (.eval/.json), lm-evaluation-harness (--log_samples
    output) or promptfoo (-o results.json) and write runs/EXPERIMENT/ARM.jsonl, plus the suite's
    goldens when they are not there yet. The samples must pair with the goldens (same ids, same
    input and ideal); a mismatch names the first differing samples and writes nothing."""
EXAMPLES = ("langchef import inspect logs/a/*.eval --experiment shorter-prompt --arm current",
            "langchef import lm-eval out/planted-b --task planted_qa --experiment x --arm b",
            "langchef import promptfoo results.json --provider short --experiment x --arm short")


def register(commands, common) -> None:
    command = add_command(commands, "import", common,
                          help="turn an eval tool's log into an arm's run file",
                          description=DESCRIPTION, examples=EXAMPLES)
    command.add_argument("tool", choices=("inspect", "lm-eval", "promptfoo"),
                         help="the tool that wrote the log")
    command.add_argument("logs", nargs="+", metavar="LOG",
                         help="the log file(s) of one arm (lm-eval: files or the output folder)")
    command.add_argument("--experiment", help="the experiment (design name)")
    command.add_argument("--arm", help="the arm these logs are")
    command.add_argument("--goldens-only", action="store_true",
                         help="write only the suite's goldens (from a dry run with the tool's "
                              "offline model), to approve a design before any traffic")
    command.add_argument("--suite", help="the goldens suite (default: the design's suite, else "
                                         "the dataset or task the log names)")
    command.add_argument("--threshold", type=float, default=None,
                         help="inspect, lm-eval: a score passes at this value or above "
                              "(default 1.0: Inspect's C, acc/exact_match 1)")
    command.add_argument("--task", help="lm-eval: the task to import when the run has several")
    command.add_argument("--provider", help="promptfoo: the provider label (or id) that is this "
                                            "arm, when the eval has several")
    command.add_argument("--replace", action="store_true",
                         help="overwrite the arm's existing run file")
    command.set_defaults(handler=run_import)


def run_import(arguments) -> int:
    from langchef_core.importers import READERS, write_goldens, write_import

    workspace = open_workspace(arguments)
    options = {}
    if arguments.threshold is not None:
        if arguments.tool == "promptfoo":
            raise CommandError("--threshold is for inspect and lm-eval; promptfoo grades each "
                               "assertion itself (set 'threshold' on the assertion).")
        options["threshold"] = arguments.threshold
    if arguments.task is not None:
        if arguments.tool != "lm-eval":
            raise CommandError("--task is for lm-eval logs.")
        options["task"] = arguments.task
    if arguments.provider is not None:
        if arguments.tool != "promptfoo":
            raise CommandError("--provider is for promptfoo results.")
        options["provider"] = arguments.provider
    if not arguments.goldens_only and not (arguments.experiment and arguments.arm):
        raise CommandError("name the experiment and arm the logs are (--experiment NAME --arm "
                           "ARM), or pass --goldens-only --suite NAME to write the goldens.")
    log = READERS[arguments.tool](arguments.logs, **options)
    if arguments.goldens_only:
        wrote = write_goldens(workspace, log, suite=arguments.suite)
        emit(arguments, {"goldens_file": wrote, "goldens": len(log.example_ids)},
             f"{wrote} holds the {len(log.example_ids)} goldens of this log")
        return 0
    result = write_import(workspace, log, experiment=arguments.experiment, arm=arguments.arm,
                          suite=arguments.suite, replace=arguments.replace)
    emit(arguments, result.to_dict(), result.sentence)
    return 0
