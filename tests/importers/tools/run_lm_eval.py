"""The harness's own command line with the planted model registered first."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import planted_lm  # noqa: E402, F401  (registers --model planted)
from lm_eval.__main__ import cli_evaluate  # noqa: E402

cli_evaluate()
