"""A sequential look extends the looks before it.

The confidence sequence is valid over one stream of goldens read in a fixed order. Each look
of a sequential design is pinned in the ledger to the goldens it read, in traffic order
(``Ledger.record_look_pin``). A later look must begin with exactly those goldens, in the same
order: a golden read before that was removed from the goldens, re-dated (moved later in
traffic, or past the scored prefix) or reordered would let the data already seen be reshaped
after the fact — for instance, dropping the goldens the variant broke. Such a look is refused
naming the golden, and, being refused, is no look.
"""

from __future__ import annotations

from collections.abc import Sequence

from .gate_checks import GateCheck, passed_check, refused_check

LOOK_NOT_EXTENDED = "look_does_not_extend_earlier_looks"
CHECK = "look_extends_earlier_looks"


def look_extends_pins(prefix: Sequence[str], order: Sequence[str], pins, *,
                      goldens_label: str) -> GateCheck:
    """Passed when ``prefix`` (the goldens this look reads) starts with every pinned look's
    goldens; ``order`` is the suite's whole traffic order (to say where a golden went)."""
    prefix = tuple(prefix)
    for pin in pins:
        pinned = tuple(pin.ids)
        if prefix[:len(pinned)] == pinned:
            continue
        at = next((i for i, (a, b) in enumerate(zip(prefix, pinned)) if a != b),
                  min(len(prefix), len(pinned)))
        golden = pinned[at]
        position = {example: index for index, example in enumerate(order)}.get(golden)
        if position is None:
            now = f"is no longer in {goldens_label}"
        elif position < len(prefix):
            now = f"is now at position {position + 1}"
        else:
            now = (f"is now at position {position + 1} of the traffic order, past the "
                   f"{len(prefix)} goldens this look reads")
        return refused_check(
            CHECK, LOOK_NOT_EXTENDED,
            f"this look does not extend the look of {pin.recorded_at} (ledger look_prefixes "
            f"row {pin.id}), which read the first {len(pinned)} goldens in traffic order: "
            f"{golden!r} was at position {at + 1} and {now}; goldens a look has read cannot be "
            "removed, re-dated or reordered, so restore them as they were when that look was "
            "taken",
            details={"golden": golden, "position": at + 1, "pinned_n": len(pinned),
                     "pin_row": pin.id, "n": len(prefix)})
    if not pins:
        return passed_check(CHECK, "the first look of this design: nothing pinned before it",
                            details={"pinned_looks": 0, "n": len(prefix)})
    return passed_check(CHECK, f"this look extends the {len(pins)} look"
                               f"{'s' if len(pins) != 1 else ''} pinned before it",
                        details={"pinned_looks": len(pins), "n": len(prefix)})
