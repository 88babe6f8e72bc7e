"""How every output prints a p-value: three decimals, and "< 0.001" below that.

One rule for the CLI line, the report, readout.json's sentences and the gate's reasons, so a
reader never sees p = 0.375 in one place and 0.38 in another (issue 29). A fourth decimal
changes nothing a reader acts on; below 0.001 the exact value only suggests precision the
model behind it does not have.
"""

from __future__ import annotations

import math


def p_number(p: float) -> str:
    """0.375 → "0.375"; 0.0004 → "< 0.001"."""
    p = float(p)
    if math.isnan(p):
        return "n/a"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def p_text(p: float, name: str = "p") -> str:
    """"p = 0.375", "p < 0.001" (``name`` may say which p: "Holm-adjusted p")."""
    number = p_number(p)
    return f"{name} {number}" if number.startswith("<") else f"{name} = {number}"
