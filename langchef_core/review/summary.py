"""`langchef summary`: one row per readout for a pull-request comment, a CI step summary, a
terminal or a program.

Each row leads with the answer to the question the design pre-registered (REGRESSION, HELD,
INCONCLUSIVE with the smallest effect the run could have seen, REFUSED with the check), then
the interval (rates in percentage points), broke/fixed, the breached guardrails and protected
slices, the gate's answer re-derived from the numbers, and the link to the page.

The text is a pure function of the readouts and the options: rows sorted by experiment, no
clock, so the same readouts give the same bytes. Every value that comes from a file is
escaped for Markdown (:mod:`.markdown`), so a hostile experiment name, hypothesis or
guardrail name cannot add a link, an image or HTML to the comment.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from urllib.parse import quote

from ..readout.verdict import (REFUSED, difference_text, is_rate, readout_answer,
                               unsigned_size)
from ..stats.records import Record
from .markdown import markdown_text
from .readouts import PublishedReadout

FORMATS = ("markdown", "github", "text", "json")
FORMAT = 1
# The hidden line a CI job finds the comment by, to update it instead of adding another.
MARKER = "<!-- langchef-summary -->"
# A base URL is pasted into every link: only a plain http(s) URL, nothing Markdown could read
# as the end of a link (spaces, parentheses, angle brackets, quotes).
BASE_URL = re.compile(r"\Ahttps?://[A-Za-z0-9._~:/?#@!$&*+,;=%-]+\Z")
NONE = "—"


@dataclass(frozen=True)
class SummaryRow(Record):
    experiment: str
    version: int
    answer: str                 # the pre-registered answer: regression, held, refused, …
    lead: str                   # "HELD at -5.0 points", "INCONCLUSIVE (limit 10.4 points)"
    metric: str | None
    interval: str | None        # "-20.0 points [-29.4, -13.0]"; None for a refusal
    broke: int | None
    fixed: int | None
    breached: tuple[str, ...]   # guardrails and protected slices, by name
    gate_passed: bool
    gate_reasons: tuple[str, ...]
    hypothesis: str | None
    link: str


def check_base_url(base_url: str | None) -> str | None:
    if base_url is None:
        return None
    if not BASE_URL.match(base_url):
        raise ValueError(f"--base-url {base_url!r} is not a plain http(s) URL; pass where the "
                         "published reports are served, e.g. https://evals.example.com/reports")
    return base_url.rstrip("/") + "/"


def report_link(experiment: str, version: int, base_url: str | None) -> str:
    """The page's address: under ``base_url``, else relative to the published reports root."""
    return (base_url or "") + f"{quote(experiment)}/v{version}/index.html"


def summary_row(published: PublishedReadout, base_url: str | None = None) -> SummaryRow:
    readout, gate = published.readout, published.gate
    answer = readout_answer(readout)
    primary = readout.get("primary") if answer.answer != REFUSED else None
    hypothesis = readout.get("hypothesis")
    return SummaryRow(
        experiment=published.experiment, version=published.version, answer=answer.answer,
        lead=lead_text(readout), metric=primary.get("metric") if primary else None,
        interval=difference_text(primary) if primary else None,
        broke=primary.get("broke") if primary else None,
        fixed=primary.get("fixed") if primary else None,
        breached=tuple(str(entry.get("name") or "unnamed guardrail")
                       for entry in readout.get("guardrails") or ()
                       if isinstance(entry, dict) and entry.get("breached")),
        gate_passed=gate.passed, gate_reasons=gate.reasons,
        hypothesis=hypothesis if isinstance(hypothesis, str) else None,
        link=report_link(published.experiment, published.version, base_url))


def lead_text(readout: dict) -> str:
    """The answer as a reviewer reads it first, with what it needs to be read right: the
    margin of a non-inferiority answer, the detection limit of an inconclusive one, the check
    that refused a readout."""
    answer = readout_answer(readout)
    if answer.answer == REFUSED:
        return f"REFUSED by {readout['refused'].get('check')}"
    primary = readout["primary"]
    if answer.noninferiority and answer.kind == "non_inferiority":
        return f"{answer.word} at -{unsigned_size(primary.get('margin'), is_rate(primary))}"
    if answer.answer == "inconclusive":
        limit = unsigned_size(primary.get("detection_limit"), is_rate(primary))
        which = "could resolve" if readout.get("sequential") else "limit"
        return f"{answer.word} ({which} {limit})"
    return answer.word


def render_summary(rows: list[SummaryRow], output_format: str = "markdown") -> str:
    if output_format not in FORMATS:
        raise ValueError(f"unknown summary format {output_format!r}; choose one of "
                         + ", ".join(FORMATS))
    rows = sorted(rows, key=lambda row: (row.experiment, row.version))
    if output_format == "json":
        return json.dumps({"format": FORMAT, "headline": headline(rows),
                           "readouts": [row.to_dict() for row in rows]},
                          indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    if output_format == "text":
        return plain_text(rows)
    return markdown(rows, collapsible=output_format == "github")


def headline(rows: list[SummaryRow]) -> str:
    failed = sum(not row.gate_passed for row in rows)
    count = f"{len(rows)} readout" + ("" if len(rows) == 1 else "s")
    if not rows:
        return "no readout published yet"
    return f"{count}, " + ("every gate passed" if not failed else
                           f"{failed} did not pass the gate")


def plain_text(rows: list[SummaryRow]) -> str:
    lines = [f"langchef: {headline(rows)}"]
    for row in rows:
        parts = [row.lead]
        if row.interval:
            parts.append(f"{row.metric} {row.interval}")
        if row.broke is not None:
            parts.append(f"{row.broke} broke, {row.fixed} fixed")
        if row.breached:
            parts.append("breached: " + ", ".join(row.breached))
        parts.append("gate: " + ("passed" if row.gate_passed else "not passed"))
        lines.append(f"{row.experiment} v{row.version}: " + "; ".join(parts))
        lines.append(f"  {row.link}")
    return "\n".join(lines) + "\n"


COLUMNS = ("experiment", "answer", "primary: variant − baseline", "broke / fixed",
           "breached", "gate", "page")


def markdown(rows: list[SummaryRow], *, collapsible: bool) -> str:
    """The comment: a marker line, a headline, the table, then why each gate failed and the
    hypotheses (in <details> blocks for GitHub, which folds them)."""
    lines = [MARKER, f"### langchef: {headline(rows)}", ""]
    if rows:
        lines += ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
        lines += [table_row(row) for row in rows]
    reasons = [f"- **{markdown_text(row.experiment)} v{row.version}**: "
               + markdown_text("; ".join(row.gate_reasons))
               for row in rows if not row.gate_passed]
    hypotheses = [f"- **{markdown_text(row.experiment)}**: {markdown_text(row.hypothesis)}"
                  for row in rows if row.hypothesis]
    lines += _section("Why a gate did not pass", reasons, collapsible)
    lines += _section("Hypotheses (pre-registered)", hypotheses, collapsible)
    lines += ["", "Differences of rates are in percentage points; intervals are the design's "
                  "pre-registered 1 − α intervals."]
    return "\n".join(lines) + "\n"


def table_row(row: SummaryRow) -> str:
    # The interval names a non-rate metric's scale, which comes from the readout: escaped.
    primary = markdown_text(f"{row.metric} {row.interval}") if row.interval else NONE
    flips = f"{row.broke} / {row.fixed}" if row.broke is not None else NONE
    breached = ", ".join(markdown_text(name) for name in row.breached) or NONE
    gate = "passed" if row.gate_passed else "**not passed**"
    cells = (markdown_text(row.experiment), f"**{markdown_text(row.lead)}**", primary, flips,
             breached, gate, f"[v{row.version}]({row.link})")
    return "| " + " | ".join(cells) + " |"


def _section(title: str, items: list[str], collapsible: bool) -> list[str]:
    if not items:
        return []
    if collapsible:
        return ["", f"<details><summary>{title}</summary>", "", *items, "", "</details>"]
    return ["", f"**{title}**", "", *items]
