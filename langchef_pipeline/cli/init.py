"""`langchef init`: the workspace folders and a commented example design."""

from __future__ import annotations

from pathlib import Path

from .options import add_command
from .output import CommandError, emit

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


DESCRIPTION = """
    Create the workspace folders and a commented example design (experiments/example.yaml).
    Existing files are never overwritten."""
EXAMPLES = ("langchef init", "langchef init my-evals", "langchef init evals --ci github",
            "langchef init --workspace my-evals --json")
# langchef_core.review.workflows.CI_FILES, named here so that `init` loads nothing more when
# no CI file is asked for.
_CI_FILES = {"github": ".github/workflows/langchef.yml", "gitlab": ".gitlab-ci.yml"}


def register(commands, common) -> None:
    init = add_command(commands, "init", common, help="create an empty workspace",
                       description=DESCRIPTION, examples=EXAMPLES)
    init.add_argument("directory", nargs="?", metavar="DIR",
                      help="where to create it (default: --workspace, else $LANGCHEF_WORKSPACE, "
                           "else ./evals)")
    init.add_argument("--ci", choices=("github", "gitlab"),
                      help="also write a CI file in the current folder (the repository root): "
                           ".github/workflows/langchef.yml or .gitlab-ci.yml, which reads out, "
                           "gates, publishes and posts one summary comment per pull request")
    init.set_defaults(handler=run_init)


def run_init(arguments) -> int:
    from langchef_core.inputs.workspace import Workspace

    chosen = arguments.directory or getattr(arguments, "workspace", None)
    workspace = Workspace.at(chosen)
    if workspace.root.exists() and not workspace.root.is_dir():
        raise CommandError(f"{workspace.root} exists and is not a folder; choose another DIR.")
    # The CI file is checked before anything is created: a refusal leaves nothing behind.
    ci_text = _ci_text(arguments.ci, workspace.root) if arguments.ci else None
    created, kept = [], []
    for name in WORKSPACE_FOLDERS:
        folder = workspace.root / name
        (kept if folder.is_dir() else created).append(f"{name}/")
        folder.mkdir(parents=True, exist_ok=True)
    (created if _write_new(workspace.experiments / "example.yaml", EXAMPLE_DESIGN) else kept) \
        .append("experiments/example.yaml")
    if ci_text is not None:
        (created if _write_new(Path(_CI_FILES[arguments.ci]), ci_text) else kept).append(
            _CI_FILES[arguments.ci])
    text = [f"workspace ready at {workspace.root}"]
    text += [f"  created {item}" for item in created]
    text += [f"  kept    {item} (already there)" for item in kept]
    text += ["next: edit experiments/example.yaml, add goldens/example.jsonl, then run "
             f"`langchef design check example --workspace {workspace.root}`"]
    emit(arguments, {"workspace": str(workspace.root), "created": created, "kept": kept},
         "\n".join(text))
    return 0


def _ci_text(system: str, workspace_root) -> str:
    """The CI file's text, the workspace named relative to the current folder."""
    import os

    from langchef_core.review.workflows import ci_file

    relative = Path(os.path.relpath(workspace_root, Path.cwd())).as_posix()
    try:
        return ci_file(system, relative)
    except ValueError as error:
        raise CommandError(str(error)) from None


def _write_new(target: Path, text: str) -> bool:
    """Write ``text`` to ``target`` unless a file is there; True when written."""
    if target.exists():
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text, encoding="utf-8")
    return True
