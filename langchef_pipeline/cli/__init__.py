"""The `langchef` command line: pre-register, approve, read out and gate experiments.

Every command but `demo` accepts --workspace DIR (default: $LANGCHEF_WORKSPACE, else
./evals) and --json for machine-readable output (`demo` takes --workspace alone, default
demo-workspace). Errors go to stderr as one sentence naming the file, field and row, and
exit with status 2.

One module per command holds its parser (`register`), its run and its output; `output`
holds what they share on the way out (the result, the error sentence), `options` what they
share on the way in (common options, the workspace). A new command is a module with a
`register(commands, common)` function, listed in `parser.COMMANDS`.

Start-up stays light: the statistics (numpy, scipy) load only inside the commands that use
them, and Dagster only inside `langchef readout` and `langchef demo`.
"""

from __future__ import annotations

import gc
import os
import sys

from .output import EXIT_ERROR, CommandError, report_error, terminal_safe
from .parser import build_parser

__all__ = ["CommandError", "EXIT_ERROR", "build_parser", "main", "terminal_safe"]

# A readout allocates millions of small containers (ids, rows, lists) and frees few of them
# in cycles; at the default threshold (700 allocations) the collector walks that whole heap
# again and again: about 2 s of a 10^5-golden readout (issue 19). Cycles are still collected.
COLLECTOR_THRESHOLDS = (50_000, 20, 100)


def main(argv: list[str] | None = None) -> int:
    arguments = build_parser().parse_args(argv)
    gc.set_threshold(*COLLECTOR_THRESHOLDS)
    try:
        return arguments.handler(arguments)
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # The reader went away (`langchef status | head`): stop quietly, as Unix tools do,
        # and keep Python from complaining about the closed stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except Exception as error:  # only user-facing errors are caught; bugs keep their traceback
        if not report_error(arguments, error):
            raise
        return EXIT_ERROR
