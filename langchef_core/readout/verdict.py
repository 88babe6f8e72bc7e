"""The one-line verdict of a readout, as `langchef demo` and `langchef readout` print it."""

from __future__ import annotations


def verdict_line(readout: dict) -> str:
    """``REGRESSION   pass_rate -20.0% [-28.9%, -12.2%]  p=0.0000  18 broke, 0 fixed`` …"""
    primary = readout["primary"]
    line = (f"{primary['verdict'].upper():<12} {primary['metric']} {primary['difference']:+.1%} "
            f"[{primary['low']:+.1%}, {primary['high']:+.1%}]  p={primary['p_value']:.4f}")
    if "broke" in primary:
        line += f"  {primary['broke']} broke, {primary['fixed']} fixed"
    if primary["verdict"] == "inconclusive":
        line += f"  (smallest effect this run could have seen: {primary['detection_limit']:.1%})"
    if primary.get("noninferiority"):
        line += f"  non-inferiority {primary['noninferiority']} at margin {primary['margin']:.1%}"
    if not readout["gate"]["passed"]:
        line += "  [gate: not passed]"
    return line
