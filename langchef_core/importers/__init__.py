"""Eval logs teams already have, as paired arms: Inspect AI, lm-evaluation-harness and
promptfoo (``langchef import``).

``read_inspect_log``, ``read_lm_eval_log`` and ``read_promptfoo_log`` turn one arm's log into
an :class:`ImportedLog` (frames: ``goldens``, ``run``, ``samples_frame``); ``write_import``
proves the pairing and writes the workspace files. The verdicts are derived at readout by
the imported judge (``langchef_core.scoring.judges.imported``).
"""

from .common import DEFAULT_THRESHOLD, ImportedLog, ToolSample
from .inspect_logs import read_inspect_log
from .lm_eval_logs import read_lm_eval_log
from .promptfoo_logs import read_promptfoo_log
from .write import ImportResult, check_against_goldens, write_goldens, write_import

READERS = {"inspect": read_inspect_log, "lm-eval": read_lm_eval_log,
           "promptfoo": read_promptfoo_log}

__all__ = ["DEFAULT_THRESHOLD", "READERS", "ImportResult", "ImportedLog", "ToolSample",
           "check_against_goldens", "read_inspect_log", "read_lm_eval_log",
           "read_promptfoo_log", "write_goldens", "write_import"]
