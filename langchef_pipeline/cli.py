"""The `langchef` command line: pre-register, approve, read out and gate experiments.

Every command accepts --workspace DIR (default: $LANGCHEF_WORKSPACE, else ./evals) and
--json for machine-readable output. Errors go to stderr as one sentence naming the file,
field and row, and exit with status 2.

Start-up stays light: the statistics (numpy, scipy) load only inside the commands that use
them, and Dagster only inside `langchef readout`.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import sys
from pathlib import Path

EXIT_ERROR = 2
MAX_READOUT_BYTES = 64 << 20

EXAMPLE_DESIGN = """\
# A langchef design: the pre-registration of one comparison of two arms.
#
# Write it before any traffic. Check it with `langchef design check example`, then have a
# person approve it with `langchef approve example --by "Your Name"`. Editing any value
# afterwards revokes the approval; comments, key order and layout do not.

experiment: example              # must equal the file name: experiments/example.yaml
hypothesis: >-
  Reranking the retrieved passages raises the share of answers the judge passes.
suite: example                   # goldens/example.jsonl: example_id, input, ideal?, ...
arms:
  baseline: current              # runs/example/current.jsonl
  variant: reranked              # runs/example/reranked.jsonl
kind: superiority                # or non_inferiority, which then needs a margin
primary: pass_rate               # pass_rate | accuracy | recall | recall_normalized |
                                 # precision | hit | reciprocal_rank | ndcg
judge:
  kind: recorded                 # verdicts arrive with the runs (verdict, criterion, judge)
  id: example-judge-v1           # every verdict must carry exactly this judge id
# Or an LLM judge behind an OpenAI-compatible endpoint. The design names the endpoint; the
# operator decides whether it may be called and holds the key: export
# LANGCHEF_JUDGE_ENDPOINTS=https://api.openai.com/v1 and LANGCHEF_JUDGE_API_KEY=... where
# langchef runs (a design never names a key variable; https unless the host is loopback).
#   kind: openai_compatible
#   base_url: https://api.openai.com/v1
#   model: gpt-4o-mini
#   prompt_version: v1
criteria: [correctness, groundedness, directness]

alpha: 0.05                      # two-sided level of the interval that decides the verdict
power: 0.80                      # used for the smallest detectable effect
bootstrap: {resamples: 10000, seed: 0}

# Planning: the share of goldens expected to change verdict between the arms. With it,
# `langchef design check` reports the smallest effect the suite can detect.
assumed_discordant_rate: 0.2
# target_effect: 0.05            # the change you hope to see; flagged if out of reach
# margin: 0.03                   # for non_inferiority: the tolerated drop

# Optional sections:
# slices:
#   column: language
#   target_weights: {en: 0.7, de: 0.3}
#   protected: [de]
# cluster: user_id
# guardrails:
#   - {metric: latency_ms, statistic: p95, max_increase: 0.10}
# anchors: {set: example-anchors, warn_kappa: 0.6, fail_kappa: 0.4}
#                                # anchors/example-anchors.csv: anchor_id, input, output,
#                                # human_verdict, human_criterion?, and for a recorded judge
#                                # its own verdict, criterion, judge on every anchor
# gate: {strict: true}           # also fail the gate when a proof is missing
# stopping: {rule: sequential, max_goldens: 20000, order: created_at}
#                                # read out at any look, from an always-valid confidence
#                                # sequence over the goldens in traffic order (pass_rate and
#                                # accuracy; goldens need the order column)
# retrieval:
#   k: 10
#   metrics: [recall, ndcg]
#   zero_positive: exclude       # exclude | zero | separate
#   pool: {kind: full}           # full | sampled | hard_negative
"""

WORKSPACE_FOLDERS = ("experiments", "approvals", "goldens", "runs", "qrels", "pools", "anchors",
                     "reports")


class CommandError(Exception):
    """A problem with how a command was called; printed as one sentence, exit 2. ``file``,
    ``column``, ``row`` and ``hint`` say where, when there is a place to name (--json)."""

    def __init__(self, sentence: str, *, file=None, column=None, row=None, hint=None):
        super().__init__(sentence)
        self.file, self.column, self.row, self.hint = file, column, row, hint


# --------------------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------------------

def _common_options() -> argparse.ArgumentParser:
    # SUPPRESS keeps an option given before the subcommand from being reset by the
    # subcommand's own default, so `langchef --workspace X status` and
    # `langchef status --workspace X` both work.
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--workspace", metavar="DIR", default=argparse.SUPPRESS,
                        help="the workspace folder (default: $LANGCHEF_WORKSPACE, else ./evals)")
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="print machine-readable JSON instead of text")
    return common


def _command(commands, name: str, common, *, help: str, description: str, examples: str):
    return commands.add_parser(
        name, parents=[common], help=help, description=description,
        epilog="examples:\n" + examples, formatter_class=argparse.RawDescriptionHelpFormatter)


def build_parser() -> argparse.ArgumentParser:
    common = _common_options()
    parser = argparse.ArgumentParser(
        prog="langchef", parents=[common], formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Tell, honestly, whether a change to an LLM/RAG application helped, hurt "
                    "or cannot be told apart on its goldens.",
        epilog="examples:\n"
               "  langchef init evals\n"
               "  langchef design check example\n"
               "  langchef approve example --by 'Ada Lovelace'\n"
               "  langchef status\n"
               "  langchef power --goldens 90 --discordant-rate 0.2\n"
               "  langchef readout example\n"
               "  langchef gate evals/reports/example/v1/readout.json\n"
               "\nRun `langchef COMMAND --help` for each command's options.")
    parser.add_argument("--version", action="version", version=f"langchef {_version()}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    init = _command(commands, "init", common, help="create an empty workspace",
                    description="Create the workspace folders and a commented example design "
                                "(experiments/example.yaml). Existing files are never "
                                "overwritten.",
                    examples="  langchef init\n  langchef init my-evals\n"
                             "  langchef init --workspace my-evals --json\n")
    init.add_argument("directory", nargs="?", metavar="DIR",
                      help="where to create it (default: --workspace, else ./evals)")
    init.set_defaults(handler=run_init)

    design = commands.add_parser("design", help="work with design files",
                                 description="Work with design files (experiments/NAME.yaml).")
    design_commands = design.add_subparsers(dest="design_command", required=True,
                                            metavar="SUBCOMMAND")
    check = _command(design_commands, "check", common,
                     help="validate a design, show its hash and what it can detect",
                     description="Validate experiments/NAME.yaml, print its canonical form and "
                                 "SHA-256, its approval state, and the power analysis: the "
                                 "smallest effect the suite's goldens can detect at the assumed "
                                 "discordant rate, and the goldens a smaller target or margin "
                                 "would need.",
                     examples="  langchef design check example\n"
                              "  langchef design check example --workspace evals --json\n")
    check.add_argument("name", metavar="NAME", help="the experiment (file stem of the design)")
    check.set_defaults(handler=run_design_check)

    approve = _command(commands, "approve", common, help="approve a design as a person",
                       description="Record that PERSON approved the current version of "
                                   "experiments/NAME.yaml (approvals/NAME.json: design hash, "
                                   "approver, UTC time, tool version). Approving an unchanged "
                                   "design again changes nothing; approving an edited design "
                                   "keeps the earlier approval in its history.",
                       examples="  langchef approve example --by 'Ada Lovelace'\n"
                                "  langchef approve example --by ada@example.org --json\n")
    approve.add_argument("name", metavar="NAME", help="the experiment to approve")
    approve.add_argument("--by", required=True, metavar="PERSON",
                         help="the person approving (name or e-mail)")
    approve.set_defaults(handler=run_approve)

    status = _command(commands, "status", common, help="list experiments and their state",
                      description="List every design in experiments/ with its state: draft, "
                                  "approved, read out (with the versions under reports/), "
                                  "revoked (edited after approval) or invalid.",
                      examples="  langchef status\n  langchef status --workspace evals --json\n")
    status.add_argument("--reports", metavar="DIR",
                        help="where readouts are written (default: WORKSPACE/reports)")
    status.set_defaults(handler=run_status)

    power = _command(commands, "power", common, help="plan the number of goldens",
                     description="Answer either planning question for a paired comparison: the "
                                 "smallest effect N goldens can detect (--goldens), or the "
                                 "goldens needed to detect an effect (--effect); give both to "
                                 "get both. Pass rates plan with --discordant-rate (the share "
                                 "of goldens expected to flip); continuous scores with --sd "
                                 "(spread of per-golden differences).",
                     examples="  langchef power --goldens 90 --discordant-rate 0.2\n"
                              "  langchef power --effect 0.05 --discordant-rate 0.2\n"
                              "  langchef power --goldens 400 --sd 0.3 --alpha 0.01\n"
                              "  langchef power --effect 0.03 --sd 0.25 --json\n")
    power.add_argument("--goldens", type=int, metavar="N", help="number of goldens")
    power.add_argument("--effect", type=float, metavar="E",
                       help="difference to detect (e.g. 0.05 for five points)")
    power.add_argument("--discordant-rate", type=float, metavar="R",
                       help="assumed share of goldens that change verdict (pass rates)")
    power.add_argument("--sd", type=float, metavar="S",
                       help="assumed sd of per-golden differences (continuous scores)")
    power.add_argument("--alpha", type=float, default=0.05, help="two-sided level (default 0.05)")
    power.add_argument("--power", type=float, default=0.80, dest="target_power",
                       help="power (default 0.80)")
    power.set_defaults(handler=run_power)

    readout = _command(commands, "readout", common, help="read an approved experiment out",
                       description="Materialise the experiment's readout through the Dagster "
                                   "pipeline, in process, and write a new report version "
                                   "(reports/NAME/vN/). Refused unless the design is approved, "
                                   "the approval came before traffic and every golden is "
                                   "scored in both arms.",
                       examples="  langchef readout example\n"
                                "  langchef readout example --reports site/reports\n")
    readout.add_argument("name", metavar="NAME", help="the experiment to read out")
    readout.add_argument("--reports", metavar="DIR",
                         help="where to write reports (default: WORKSPACE/reports)")
    readout.add_argument("--judge-endpoint", action="append", default=[], metavar="URL",
                         help="allow an LLM judge's base URL for this run (adds to "
                              "$LANGCHEF_JUDGE_ENDPOINTS; the key is always "
                              "$LANGCHEF_JUDGE_API_KEY); repeatable")
    readout.set_defaults(handler=run_readout)

    gate = _command(commands, "gate", common, help="pass or fail CI on a readout.json",
                    description="Read a readout.json and exit 0 when its gate passed, 1 when it "
                                "did not (a regression, a failed non-inferiority or a breached "
                                "guardrail), printing why; 2 when the file is unreadable, "
                                "malformed, or its recorded gate contradicts its own numbers. "
                                "There is no override.",
                    examples="  langchef gate evals/reports/example/v1/readout.json\n"
                             "  langchef gate evals/reports/example/v1 --fail-on-inconclusive\n"
                             "  langchef gate reports/example/v2/readout.json --workspace evals "
                             "--json\n")
    gate.add_argument("path", metavar="PATH",
                      help="a readout.json, or the report folder holding it; relative paths "
                           "are tried in the current folder, then in the workspace")
    gate.add_argument("--fail-on-inconclusive", action="store_true",
                      help="also fail when the question was left open (inconclusive verdict, "
                           "or non-inferiority unresolved)")
    gate.add_argument("--strict", action="store_true",
                      help="also fail when a proof is missing: traffic time unverifiable (no "
                           "created_at), a sampled pool not written down, or a repeated look "
                           "(the design's 'gate: {strict: true}' does the same)")
    gate.set_defaults(handler=run_gate)

    _import_command(commands, common)

    demo = commands.add_parser("demo", help="run the built-in demo and print its readouts",
                               description="Build the demo workspace (planted effects, approved "
                                           "designs), read out every experiment through Dagster and "
                                           "print each verdict line and report path.",
                               epilog="examples:\n  langchef demo\n"
                                      "  langchef demo --workspace demo-workspace\n",
                               formatter_class=argparse.RawDescriptionHelpFormatter)
    demo.add_argument("--workspace", default="demo-workspace", metavar="DIR",
                      help="where the demo workspace goes (default: demo-workspace)")
    demo.set_defaults(handler=run_demo)
    return parser


def _import_command(commands, common) -> None:
    command = _command(
        commands, "import", common, help="turn an eval tool's log into an arm's run file",
        description="Read one arm's log from Inspect AI (.eval/.json), lm-evaluation-harness "
                    "(--log_samples output) or promptfoo (-o results.json) and write "
                    "runs/EXPERIMENT/ARM.jsonl, plus the suite's goldens when they are not there "
                    "yet. The samples must pair with the goldens (same ids, same input and "
                    "ideal); a mismatch names the first differing samples and writes nothing.",
        examples="  langchef import inspect logs/a/*.eval --experiment shorter-prompt --arm current\n"
                 "  langchef import lm-eval out/planted-b --task planted_qa --experiment x "
                 "--arm b\n"
                 "  langchef import promptfoo results.json --provider short --experiment x "
                 "--arm short\n")
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

    workspace = _workspace(arguments)
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
        _emit(arguments, {"goldens_file": wrote, "goldens": len(log.example_ids)},
              f"{wrote} holds the {len(log.example_ids)} goldens of this log")
        return 0
    result = write_import(workspace, log, experiment=arguments.experiment, arm=arguments.arm,
                          suite=arguments.suite, replace=arguments.replace)
    _emit(arguments, result.to_dict(), result.sentence)
    return 0


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
        sentence = _user_error(error)
        if sentence is None:
            raise
        if _wants_json(arguments):
            print(terminal_safe(json.dumps(_error_object(error, sentence), sort_keys=True,
                                           ensure_ascii=False, default=str)), file=sys.stderr)
        else:
            print(terminal_safe(f"langchef: error: {sentence}"), file=sys.stderr)
        return EXIT_ERROR


def _error_object(error: Exception, sentence: str) -> dict:
    """An error as JSON: the sentence, and where (file, column, row) with what to do."""
    found = {"error": sentence, "file": None, "column": None, "row": None, "hint": None}
    for key in ("file", "column", "row", "hint"):
        value = getattr(error, key, None)
        if value is not None:
            found[key] = value if isinstance(value, (int, str)) else str(value)
    problems = getattr(error, "problems", None)
    if problems:
        found["problems"] = [problem.to_dict() for problem in problems]
    if getattr(error, "table", None):
        found["table"] = str(error.table)
    return found


def _user_error(error: Exception) -> str | None:
    """The one sentence to show for an error the user can fix, or None for a bug."""
    errors = sys.modules.get("langchef_core.inputs.errors")
    gates = sys.modules.get("langchef_core.designs.gate_checks")
    if errors is not None and isinstance(error, errors.InputError):
        return error.describe()
    if gates is not None and isinstance(error, gates.GateRefusal):
        return f"readout refused: {error}"
    if isinstance(error, CommandError):
        return str(error)
    if isinstance(error, ValueError):
        text = str(error)
        return text if text.endswith(".") else text + "."
    if isinstance(error, OSError):
        where = f"{error.filename}: " if error.filename else ""
        return f"{where}{error.strerror or error}."
    if isinstance(error, (MemoryError, RecursionError)):
        # Readers name the file where they can; this is the last line of defence.
        return ("an input was too large or too deeply nested to process "
                f"({type(error).__name__}); check the files named in the command.")
    return None


# --------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------

def _wants_json(arguments) -> bool:
    return bool(getattr(arguments, "json", False))


# Characters a terminal would act on rather than show: C0 controls except newline and tab,
# DEL, C1 controls (U+009B is CSI on some terminals) and the explicit bidi controls.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                     "\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """Text for a terminal: every control or bidi character shown as \\uXXXX, never obeyed
    (a value from a workspace file cannot move the cursor, recolour or reorder the output)."""
    return _UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def _emit(arguments, payload, text: str) -> None:
    if _wants_json(arguments):
        # json.dumps escapes C0 controls itself; the rest become \uXXXX escapes, the same
        # JSON value.
        print(terminal_safe(json.dumps(payload, indent=2, sort_keys=True, ensure_ascii=False,
                                       default=str)))
    else:
        print(terminal_safe(text))


def _workspace(arguments, *, reports=None):
    from langchef_core.inputs.workspace import Workspace

    workspace = Workspace.at(getattr(arguments, "workspace", None), reports=reports)
    if not workspace.root.is_dir():
        raise CommandError(f"workspace folder {workspace.root} not found; create one with "
                           f"`langchef init {workspace.root}` or pass --workspace DIR.")
    return workspace


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("langchef")
    except PackageNotFoundError:
        return "unknown"


def _report_versions(workspace, experiment: str) -> list[int]:
    """Readout versions found as reports/<experiment>/v<N>/ folders, ascending."""
    folder = workspace.reports / experiment
    if not folder.is_dir():
        return []
    found = [int(entry.name[1:]) for entry in folder.iterdir()
             if entry.is_dir() and entry.name[:1] == "v" and entry.name[1:].isdigit()]
    return sorted(found)


# --------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------

def run_init(arguments) -> int:
    from langchef_core.inputs.workspace import Workspace

    chosen = arguments.directory or getattr(arguments, "workspace", None)
    workspace = Workspace.at(chosen)
    if workspace.root.exists() and not workspace.root.is_dir():
        raise CommandError(f"{workspace.root} exists and is not a folder; choose another DIR.")
    created, kept = [], []
    for name in WORKSPACE_FOLDERS:
        folder = workspace.root / name
        (kept if folder.is_dir() else created).append(f"{name}/")
        folder.mkdir(parents=True, exist_ok=True)
    example = workspace.experiments / "example.yaml"
    if example.exists():
        kept.append("experiments/example.yaml")
    else:
        example.write_text(EXAMPLE_DESIGN, encoding="utf-8")
        created.append("experiments/example.yaml")
    text = [f"workspace ready at {workspace.root}"]
    text += [f"  created {item}" for item in created]
    text += [f"  kept    {item} (already there)" for item in kept]
    text += ["next: edit experiments/example.yaml, add goldens/example.jsonl, then run "
             f"`langchef design check example --workspace {workspace.root}`"]
    _emit(arguments, {"workspace": str(workspace.root), "created": created, "kept": kept},
          "\n".join(text))
    return 0


def _judge_endpoint(design) -> dict | None:
    """The endpoint an LLM-judged design would call, and whether the operator allows it."""
    if design.judge is None or design.judge.kind != "openai_compatible":
        return None
    from langchef_core.scoring.judges.openai_compatible import endpoint_summary

    return endpoint_summary(str(design.judge.to_dict().get("base_url", "")))


def run_design_check(arguments) -> int:
    from langchef_core.designs.approval import (INVALID, ApprovalStatus, status_of,
                                                verified_approval)
    from langchef_core.designs.parse import load_workspace_design
    from langchef_core.designs.power_plan import assess_power
    from langchef_core.inputs.errors import InputError

    from langchef_core.designs.fit import require_fit

    workspace = _workspace(arguments)
    design = load_workspace_design(workspace, arguments.name)
    require_fit(workspace, design, table_path=workspace.failures_table(arguments.name))
    plan = assess_power(workspace, design)
    try:
        status = status_of(design, verified_approval(workspace, arguments.name))
    except InputError as error:  # an approval the ledger does not back: shown, not fatal
        status = ApprovalStatus(design.experiment, INVALID, "approval not valid", design.sha256,
                                None, error.describe())
    endpoint = _judge_endpoint(design)
    notes = []
    if design.kind == "superiority" and design.margin is not None:
        notes.append(f"margin {design.margin:g} given for a superiority design: non-inferiority "
                     "is reported beside the verdict, and the verdict alone decides the gate")
    file = workspace.relative(workspace.design_path(arguments.name))
    payload = {"experiment": design.experiment, "file": file, "valid": True,
               "sha256": design.sha256, "canonical": design.canonical_json,
               "design": design.to_dict(), "power": plan.to_dict(),
               "approval": status.to_dict(), "notes": notes, "judge_endpoint": endpoint}
    text = [f"{file}: valid design",
            f"  experiment  {design.experiment}: {design.kind} on {design.primary}, "
            f"{design.arms.baseline} -> {design.arms.variant}, suite {design.suite}",
            f"  sha256      {design.sha256}",
            f"  canonical   {design.canonical_json}",
            f"  workspace   fits: {_fit_summary(design)}",
            f"  power       {plan.sentence}",
            f"  approval    {status.label}: {status.sentence}"]
    if endpoint is not None:
        text.append(f"  endpoint    {endpoint['sentence']}")
    text += [f"  note        {note}" for note in notes]
    _emit(arguments, payload, "\n".join(text))
    return 0


def _fit_summary(design) -> str:
    checked = [f"goldens/{design.suite} and the columns the design names"]
    if design.anchors is not None:
        checked.append(f"anchors/{design.anchors.set} for the pinned judge")
    if design.retrieval is not None:
        checked.append(f"qrels/{design.suite}")
    return ", ".join(checked) + " were checked"


def run_approve(arguments) -> int:
    from langchef_core.designs.approval import approve

    from langchef_core.designs.parse import load_workspace_design

    workspace = _workspace(arguments)
    outcome = approve(workspace, arguments.name, by=arguments.by)
    endpoint = _judge_endpoint(load_workspace_design(workspace, arguments.name))
    text = outcome.sentence + (f"\n  {endpoint['sentence']}" if endpoint else "")
    _emit(arguments, {**outcome.to_dict(), "judge_endpoint": endpoint}, text)
    return 0


def run_status(arguments) -> int:
    from langchef_core.designs.approval import APPROVED, INVALID, STATE_LABELS, approval_status
    from langchef_core.inputs.errors import InputError

    workspace = _workspace(arguments, reports=arguments.reports)
    rows = []
    for name in workspace.experiment_names():
        versions = _report_versions(workspace, name) if _valid_name(name) else []
        try:
            status = approval_status(workspace, name)
        except InputError as error:  # an unreadable approval file, shown rather than fatal
            rows.append({"experiment": name, "state": INVALID, "label": STATE_LABELS[INVALID],
                         "design_sha256": None, "approved_by": None, "approved_at": None,
                         "versions": versions, "sentence": error.describe()})
            continue
        state, label = status.state, status.label
        if state == APPROVED and versions:
            state, label = "read_out", "read out"
        approval = status.approval
        rows.append({"experiment": name, "state": state, "label": label,
                     "design_sha256": status.design_sha256,
                     "approved_by": approval.approved_by if approval else None,
                     "approved_at": approval.to_dict()["approved_at"] if approval else None,
                     "versions": versions, "sentence": status.sentence})
    if not rows:
        text = (f"no experiments in {workspace.experiments}; start from `langchef init` and "
                "write experiments/NAME.yaml")
    else:
        width = max(len("EXPERIMENT"), *(len(row["experiment"]) for row in rows))
        lines = [f"{'EXPERIMENT':<{width}}  {'STATE':<31}  {'VERSIONS':<10}  DESIGN        "
                 "APPROVED BY"]
        for row in rows:
            versions = ", ".join(f"v{v}" for v in row["versions"]) or "-"
            lines.append(f"{row['experiment']:<{width}}  {row['label']:<31}  {versions:<10}  "
                         f"{(row['design_sha256'] or '-')[:12]:<12}  {row['approved_by'] or '-'}")
            if row["state"] in ("invalid", "revoked"):
                lines.append(f"{'':<{width}}  {row['sentence']}")
        text = "\n".join(lines)
    _emit(arguments, {"workspace": str(workspace.root), "experiments": rows}, text)
    return 0


def _valid_name(name: str) -> bool:
    from langchef_core.inputs.workspace import NAME_PATTERN

    return bool(NAME_PATTERN.match(name)) and ".." not in name


def run_power(arguments) -> int:
    rate, sd = arguments.discordant_rate, arguments.sd
    goldens, effect = arguments.goldens, arguments.effect
    if (rate is None) == (sd is None):
        raise CommandError("give exactly one of --discordant-rate (pass rates) or --sd "
                           "(continuous scores).")
    if goldens is None and effect is None:
        raise CommandError("give --goldens N for the smallest detectable effect, --effect E "
                           "for the goldens needed, or both.")
    if goldens is not None and goldens < 1:
        raise CommandError(f"--goldens {goldens}: a paired comparison needs at least one "
                           "golden; give the number of goldens in the suite (e.g. --goldens 90).")
    from langchef_core.stats import power as planning

    alpha, target_power = arguments.alpha, arguments.target_power
    scale = {"discordant_rate": rate} if rate is not None else {"sd": sd}
    payload = {"alpha": alpha, "power": target_power, **scale, "goldens": goldens,
               "effect": effect, "detection_limit": None, "goldens_needed": None}
    text = []
    assumed = (f"an assumed discordant rate of {rate:g}" if rate is not None
               else f"an assumed sd of differences of {sd:g}")
    if goldens is not None:
        limit = (planning.limit_at_rate(goldens, rate, alpha=alpha, power=target_power)
                 if rate is not None else
                 planning.continuous_detection_limit(sd, goldens, alpha=alpha, power=target_power))
        payload["detection_limit"] = limit
        # A pass-rate difference in points, a score's on its own scale (issue 15).
        shown = f"{100 * limit:.1f} points" if rate is not None else f"{limit:.3f}"
        text.append(f"with {goldens} goldens and {assumed}, the smallest difference detectable "
                    f"at alpha {alpha:g} with at least {target_power:g} power is {shown}")
        if rate is not None:
            # The limit's formula is conservative; say what the exact test really achieves.
            exact = planning.exact_power(goldens, rate, limit, alpha=alpha)
            payload["exact_power"] = exact
            text.append(f"the exact McNemar test has power {exact:.3f} at a difference of "
                        f"{shown} with these goldens and that discordant rate")
    if effect is not None:
        needed = (planning.goldens_needed(effect, rate, alpha=alpha, power=target_power)
                  if rate is not None else
                  planning.goldens_needed_continuous(effect, sd, alpha=alpha, power=target_power))
        payload["goldens_needed"] = needed
        text.append(f"detecting a difference of {effect:g} with {assumed} needs {needed} goldens "
                    f"(alpha {alpha:g}, power {target_power:g})")
        if goldens is not None:
            enough = goldens >= needed
            payload["enough"] = enough
            text.append(f"{goldens} goldens are {'enough' if enough else 'NOT enough'} for "
                        f"{effect:g}")
    _emit(arguments, payload, "\n".join(text))
    return 0


def run_readout(arguments) -> int:
    import importlib

    workspace = _workspace(arguments, reports=arguments.reports)
    if arguments.judge_endpoint:
        # The operator's command line, never the design, widens the allow-list.
        os.environ["LANGCHEF_JUDGE_ENDPOINTS"] = " ".join(
            [os.environ.get("LANGCHEF_JUDGE_ENDPOINTS", ""), *arguments.judge_endpoint]).strip()
    try:
        materialize = importlib.import_module("langchef_pipeline.materialize")
        readout_experiment = materialize.readout_experiment
    except (ImportError, AttributeError) as error:
        raise CommandError(f"`langchef readout` is not available in this installation: "
                           f"langchef_pipeline.materialize could not be imported ({error}).") \
            from None
    refused = getattr(materialize, "ReadoutFailed", None)
    try:
        # Slow steps are announced on stderr, with their rows per second.
        getattr(materialize, "report_to", lambda stream: None)(sys.stderr)
        path = Path(readout_experiment(workspace, arguments.name))
    except Exception as error:
        if refused is None or not isinstance(error, refused):
            raise
        # Every blocking reason, on the one line an error gets; the whole failure tables go
        # to a file, since only the Dagster UI would show them otherwise.
        reasons = [str(reason).rstrip(".") for reason in getattr(error, "reasons", [])]
        tables = getattr(error, "tables", [])
        if tables:
            written = _write_failure_tables(workspace, arguments.name, tables)
            reasons = [reason.replace("listed in the failure table", f"listed in {written}")
                       for reason in reasons]
            if not any(written in reason for reason in reasons):
                reasons.append(f"the failure table is in {written}")
        page = getattr(error, "report_path", None)
        if page:  # the refusal is published as a version of its own (issue 15)
            reasons.append(f"the refusal is recorded in {workspace.relative(Path(page))}")
        where = getattr(error, "where", {}) or {}
        raise CommandError("readout refused: " + ("; ".join(reasons) or str(error)) + ".",
                           file=where.get("file"), column=where.get("column"),
                           row=where.get("row")) from None
    summary = _readout_summary(path)
    text = f"{arguments.name}: readout written to {path}"
    if summary.get("verdict_line"):
        text += f"\n  {summary['verdict_line']}"
    if summary.get("passed") is not None:
        text += f"\n  gate {'passed' if summary['passed'] else 'NOT passed'}"
    text += f"\n  report: {path.parent / 'index.html'}"
    _emit(arguments, {"experiment": arguments.name, "readout": str(path), **summary}, text)
    return 0


def _write_failure_tables(workspace, experiment: str, tables: list[str]) -> str:
    """failures/<experiment>.md, written whole (temporary file, then renamed)."""
    import tempfile

    path = workspace.failures_table(experiment).with_suffix(".md")
    path.parent.mkdir(parents=True, exist_ok=True)
    descriptor, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(f"# Why the readout of {experiment} was refused\n\n" + "\n\n".join(tables)
                     + "\n")
    os.replace(temporary, path)
    return workspace.relative(path)


def _readout_summary(path: Path) -> dict:
    """The gate outcome and the demo's verdict line of a fresh readout, when it can be read."""
    from langchef_core.readout.verdict import verdict_line

    try:
        readout = json.loads(path.read_text(encoding="utf-8"))
        summary = {"passed": bool(readout["gate"]["passed"]), "version": readout.get("version")}
    except (OSError, ValueError, KeyError, TypeError):
        return {}
    try:
        summary["verdict_line"] = verdict_line(readout)
    except (KeyError, TypeError, ValueError):
        pass  # a readout without a primary verdict still reports its gate
    return summary


def run_gate(arguments) -> int:
    path = _readout_path(arguments)
    from langchef_core.inputs.errors import InputError
    from langchef_core.readout.gate import check_manifest, readout_gate

    label = str(path)
    hint = "pass the readout.json written by `langchef readout`"
    if path.stat().st_size > MAX_READOUT_BYTES:
        raise InputError(f"is larger than {MAX_READOUT_BYTES >> 20} MiB; not a langchef readout",
                         file=label, hint=hint)
    body = path.read_bytes()
    try:
        readout = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"is not valid JSON ({error})", file=label, hint=hint) from None
    except (RecursionError, MemoryError):
        raise InputError("is nested too deeply (or is too large) to be a langchef readout",
                         file=label, hint=hint) from None
    check_manifest(path, body)
    decision = readout_gate(readout, fail_on_inconclusive=arguments.fail_on_inconclusive,
                            strict=arguments.strict, file=label)
    name = decision.experiment or "readout"
    version = f" v{decision.version}" if decision.version is not None else ""
    if decision.passed:
        text = f"PASSED: {name}{version} ({decision.verdict}" + (
            f", non-inferiority {decision.noninferiority})" if decision.noninferiority else ")")
        if not decision.strict and decision.missing_proofs:
            text += ("\n  note: proofs missing (" + ", ".join(decision.missing_proofs)
                     + "); `--strict` would fail this readout")
    else:
        text = f"NOT PASSED: {name}{version}\n" + "\n".join(f"  - {r}" for r in decision.reasons)
    _emit(arguments, {**decision.to_dict(), "file": label}, text)
    return 0 if decision.passed else 1


def _readout_path(arguments) -> Path:
    given = Path(arguments.path).expanduser()
    candidates = [given]
    # Resolved here rather than through Workspace, so that a missing file is reported
    # before the statistics are loaded.
    workspace = getattr(arguments, "workspace", None) or os.environ.get("LANGCHEF_WORKSPACE")
    if not given.is_absolute() and workspace:
        candidates.append(Path(workspace).expanduser() / given)
    for candidate in candidates:
        if candidate.is_dir():
            candidate = candidate / "readout.json"
        if candidate.is_file():
            return candidate
    raise CommandError(f"{arguments.path}: no readout.json found there; pass the readout.json "
                       "written by `langchef readout` (reports/NAME/vN/readout.json).")


def run_demo(arguments) -> int:
    from langchef_pipeline.demo import run_demo as build_and_read_out

    return build_and_read_out(arguments.workspace)


if __name__ == "__main__":
    sys.exit(main())
