"""`langchef summary`: the readouts as Markdown for a pull-request comment or a CI step
summary (or plain text, or JSON), one row per experiment."""

from __future__ import annotations

from .options import add_command, open_workspace
from .output import emit, wants_json

DESCRIPTION = """
    Print one row per experiment's latest readout (or the experiments named): the
    pre-registered answer, the interval (rates in percentage points), broke/fixed, breached
    guardrails and protected slices, the gate's answer re-derived from the numbers, and a link
    to the page. The same readouts give the same bytes; text from workspace files is escaped,
    so it cannot add a link, an image or HTML to the comment."""
EXAMPLES = ("langchef summary",
            "langchef summary --format github >> \"$GITHUB_STEP_SUMMARY\"",
            "langchef summary stale-index --base-url https://evals.example.com/reports",
            "langchef summary --format json --fail-on-inconclusive")


# langchef_core.review.summary.FORMATS, named here so that building the parser loads no
# statistics (tests/review/test_summary.py checks the two agree).
FORMATS = ("markdown", "github", "text", "json")


def register(commands, common) -> None:
    summary = add_command(commands, "summary", common, help="the readouts as a review comment",
                          description=DESCRIPTION, examples=EXAMPLES)
    summary.add_argument("names", nargs="*", metavar="NAME",
                         help="experiments to include (default: every one with a readout)")
    summary.add_argument("--format", choices=FORMATS, default="markdown",
                         help="markdown (default), github (sections fold), text or json")
    summary.add_argument("--base-url", metavar="URL",
                         help="where the published reports are served (`langchef publish`); "
                              "links are relative to the reports folder without it")
    summary.add_argument("--reports", metavar="DIR",
                         help="where readouts are written (default: WORKSPACE/reports)")
    summary.add_argument("--fail-on-inconclusive", action="store_true",
                         help="the gate column as `langchef gate --fail-on-inconclusive` says")
    summary.add_argument("--strict", action="store_true",
                         help="the gate column as `langchef gate --strict` says")
    summary.set_defaults(handler=run_summary)


def run_summary(arguments) -> int:
    from langchef_core.review.readouts import latest_readouts
    from langchef_core.review.summary import check_base_url, render_summary, summary_row

    base_url = check_base_url(arguments.base_url)
    workspace = open_workspace(arguments, reports=arguments.reports)
    published = latest_readouts(workspace.reports, arguments.names,
                                fail_on_inconclusive=arguments.fail_on_inconclusive,
                                strict=arguments.strict)
    rows = [summary_row(readout, base_url) for readout in published]
    output_format = "json" if wants_json(arguments) else arguments.format
    text = render_summary(rows, output_format)
    if output_format == "json":
        import json
        emit(arguments, json.loads(text), text.rstrip("\n"))
    else:
        emit(arguments, None, text.rstrip("\n"))
    return 0
