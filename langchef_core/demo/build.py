"""Write the demo workspace: handbook, goldens, qrels, pools, runs, anchors, designs, approvals.

``build_demo_workspace(root)`` writes a complete workspace in the ARCHITECTURE §4 format
with planted effects known in advance, and returns (and writes, as
``demo_manifest.json``) the manifest of what each readout must show. The same seed gives
byte-identical files on every run: every value comes from one seeded generator, every
timestamp is fixed, and every file is written with a fixed key order and formatting.

The handbook itself is an extension of the format: ``corpus/<suite>.jsonl`` (doc_id, title,
text), so a reader can see what the retriever searched.

Designs are validated with the design loader and pre-approved through the approval API, as
the named demo reviewer, at a fixed time before any run started (``approve_demo_designs``).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import yaml

from ..inputs.workspace import Workspace
from ..stats.records import Record
from . import anchors as anchor_plan
from . import sequential as sequential_plant
from .arms import Arm, Orders, arm_rows, draw_orders, utc_text
from .kitchen import Kitchen, draw_kitchen
from .plants import (ANCHOR_SET, APPROVED_AT, APPROVED_BY, BASELINE_STARTS, DRIFTED_JUDGE,
                     FAIL_KAPPA, STABLE_JUDGE, SUITE, WARN_KAPPA, Experiment, plant_experiments)

DEMO_SEED = 20250303
MANIFEST_NAME = "demo_manifest.json"
MANIFEST_FORMAT = 1


@dataclass(frozen=True)
class PlantedExperiment(Record):
    """One experiment of the demo: what was planted and what its readout must show."""

    experiment: str
    plant: str
    baseline: str
    variant: str
    primary: str
    kind: str
    judge: str           # "stable" or "drifted": which of the manifest's judges it pins
    # What the readout must show: counts (passes, broke, fixed, per-criterion flips) and
    # outcomes ("verdict" is the primary metric's; criteria directions, non-inferiority,
    # retrieval, slices, guardrails and the anchor check level where they apply).
    expected: dict


@dataclass(frozen=True)
class PlantedAnchors(Record):
    """The anchor set: its size, the planted groups and the agreement they imply."""

    set: str
    n: int
    human_fail: int
    hedged: tuple[str, ...]        # a judge tolerating 3 hedges passes these; people failed them
    hard: tuple[str, ...]          # no word-level rubric agrees with people on these
    warn_kappa: float
    fail_kappa: float
    expected_kappa: dict           # {"stable": κ, "drifted": κ} from the planted counts


@dataclass(frozen=True)
class DemoManifest(Record):
    """Everything planted in a demo workspace, and the SHA-256 of every file written."""

    format: int
    seed: int
    suite: str
    goldens: int
    approved_by: str
    approved_at: str
    runs_start_at: str
    judges: dict                   # {"stable": {"spec", "id"}, "drifted": {"spec", "id"}}
    experiments: tuple[PlantedExperiment, ...]
    anchors: PlantedAnchors
    files: dict                    # workspace-relative path → SHA-256 of its bytes

    def experiment(self, name: str) -> PlantedExperiment:
        for planted in self.experiments:
            if planted.experiment == name:
                return planted
        raise KeyError(f"the demo has no experiment {name!r}; it has "
                       f"{[planted.experiment for planted in self.experiments]}")

    def to_dict(self) -> dict:
        return json.loads(json.dumps(super().to_dict()))  # tuples become lists, as in the file


@dataclass(frozen=True)
class DemoPlan:
    """Everything drawn from the seed, before anything is written."""

    kitchen: Kitchen
    orders: Orders
    experiments: tuple[Experiment, ...]
    anchors: anchor_plan.AnchorPlan


def plan_demo(seed: int = DEMO_SEED) -> DemoPlan:
    """Draw the handbook, the rankings, the plants and the anchors, in that fixed order."""
    rng = np.random.default_rng(seed)
    kitchen = draw_kitchen(rng)
    orders = draw_orders(kitchen, rng)
    experiments = plant_experiments(kitchen, rng)
    return DemoPlan(kitchen, orders, experiments, anchor_plan.draw_anchors(kitchen, rng))


def build_demo_workspace(root: str | Path, *, seed: int = DEMO_SEED) -> DemoManifest:
    """Write the demo workspace under ``root`` and return its manifest.

    ``root`` must be missing, empty, or a demo workspace written earlier (it has a
    ``demo_manifest.json``); in the last case the files the earlier build wrote are
    replaced, and anything else there (reports, the verdict cache) is left alone.
    """
    root = Path(root)
    _prepare(root)
    plan = plan_demo(seed)
    kitchen, orders, experiments = plan.kitchen, plan.orders, plan.experiments
    planted_anchors = plan.anchors

    written: dict[str, bytes] = {}
    _tables(written, kitchen, orders)
    _write_jsonl(written, f"anchors/{ANCHOR_SET}.jsonl", planted_anchors.rows)
    simulated: dict[str, tuple[Arm, list[dict]]] = {}
    for experiment in experiments:
        for arm in (experiment.baseline, experiment.variant):
            if arm.name not in simulated:
                # Each arm is simulated once: an arm shared by experiments shares its run.
                simulated[arm.name] = (arm, arm_rows(kitchen, orders, arm, _arm_rng(seed, arm)))
            if simulated[arm.name][0] is not arm:
                raise ValueError(f"two different demo arms are both named {arm.name!r}")
            _write_jsonl(written, f"runs/{experiment.name}/{arm.name}.jsonl",
                         simulated[arm.name][1])
        _write_text(written, f"experiments/{experiment.name}.yaml", design_yaml(experiment))
    sequential = _sequential_tables(written, seed)
    for relative, content in written.items():
        _store(root, relative, content)
    approvals = approve_demo_designs(root, [experiment.name for experiment in experiments]
                                     + [sequential.experiment])
    for relative in approvals:
        written[relative] = (root / relative).read_bytes()

    manifest = DemoManifest(
        format=MANIFEST_FORMAT, seed=int(seed), suite=SUITE, goldens=len(kitchen.goldens),
        approved_by=APPROVED_BY, approved_at=utc_text(APPROVED_AT),
        runs_start_at=utc_text(BASELINE_STARTS), judges=_judges(),
        experiments=tuple(_planted(experiment) for experiment in experiments) + (sequential,),
        anchors=_anchors_manifest(planted_anchors),
        files={relative: hashlib.sha256(content).hexdigest()
               for relative, content in sorted(written.items())})
    _store(root, MANIFEST_NAME, (json.dumps(manifest.to_dict(), indent=2, sort_keys=True,
                                            ensure_ascii=False) + "\n").encode("utf-8"))
    return manifest


def approve_demo_designs(root: Path, experiments: list[str]) -> list[str]:
    """Validate and pre-approve every demo design as the demo reviewer, before the runs.

    Goes through the same approval API as ``langchef approve`` (which validates the design
    with the design loader), with the approval time fixed so the files are reproducible.
    Returns the approval files written, relative to ``root``.
    """
    from ..designs.approval import approve  # the approval module imports the design loader

    workspace = Workspace(root.resolve())
    written = []
    for name in experiments:
        outcome = approve(workspace, name, by=APPROVED_BY, at=APPROVED_AT)
        if outcome.status != "approved":
            raise RuntimeError(f"the demo design {name!r} was not freshly approved "
                               f"({outcome.status}): {outcome.sentence}")
        written.append(Path(workspace.approval_path(name)).relative_to(workspace.root).as_posix())
    return written


def design_yaml(experiment: Experiment) -> str:
    """The design file: a comment on what was planted, then the design mapping."""
    header = (f"# Demo experiment written by langchef_core.demo (planted effect: "
              f"{experiment.plant}).\n"
              f"# Edit any value and the approval below is revoked: approve it again.\n")
    return header + yaml.safe_dump(experiment.design, sort_keys=False, allow_unicode=True,
                                   default_flow_style=False, width=100)


def _tables(written: dict, kitchen: Kitchen, orders: Orders) -> None:
    """Handbook, goldens, qrels and pools of the suite."""
    _write_jsonl(written, f"corpus/{SUITE}.jsonl",
                 [{"doc_id": document.doc_id, "title": document.title, "text": document.text}
                  for document in kitchen.documents])
    _write_jsonl(written, f"goldens/{SUITE}.jsonl",
                 [{"example_id": golden.example_id, "input": golden.question,
                   "ideal": golden.ideal, "user_id": golden.user_id,
                   "user_segment": golden.user_segment, "fact": golden.attribute.name}
                  for golden in kitchen.goldens])
    qrels = []
    for golden in kitchen.goldens:
        key = golden.example_id
        if key not in kitchen.unlabelled:  # an unlabelled query keeps only judged negatives
            qrels.extend({"query_id": key, "doc_id": doc, "relevant": 1, "source": "human"}
                         for doc in kitchen.positives[key])
        # Two sampled negatives were judged too, as a reviewer would have seen them.
        qrels.extend({"query_id": key, "doc_id": doc, "relevant": 0, "source": "human"}
                     for doc in orders.negatives[key][:2])
    _write_jsonl(written, f"qrels/{SUITE}.jsonl", qrels)
    _write_jsonl(written, f"pools/{SUITE}.jsonl",
                 [{"query_id": golden.example_id, "doc_id": doc}
                  for golden in kitchen.goldens for doc in orders.pool[golden.example_id]])


def _sequential_tables(written: dict, seed: int) -> PlantedExperiment:
    """The sequential plant's own suite, runs and design (langchef_core.demo.sequential)."""
    plant = sequential_plant.plan_sequential(seed)
    name = plant.design["experiment"]
    _write_jsonl(written, f"goldens/{sequential_plant.SUITE}.jsonl", plant.goldens)
    _write_jsonl(written, f"runs/{name}/{sequential_plant.BASELINE}.jsonl", plant.baseline_rows)
    _write_jsonl(written, f"runs/{name}/{sequential_plant.VARIANT}.jsonl", plant.variant_rows)
    header = (f"# Demo experiment written by langchef_core.demo (planted effect: {plant.plant}).\n"
              "# A sequential design: read out at any look, in traffic order, up to max_goldens.\n")
    _write_text(written, f"experiments/{name}.yaml", header + yaml.safe_dump(
        plant.design, sort_keys=False, allow_unicode=True, default_flow_style=False, width=100))
    return PlantedExperiment(experiment=name, plant=plant.plant, baseline=sequential_plant.BASELINE,
                             variant=sequential_plant.VARIANT, primary=plant.design["primary"],
                             kind=plant.design["kind"], judge="recorded", expected=plant.expected)


def _arm_rng(seed: int, arm: Arm) -> np.random.Generator:
    """A generator per arm, derived from the seed and the arm's name: costs and latencies
    of one arm do not shift when another arm is added or reordered."""
    digest = hashlib.sha256(arm.name.encode("utf-8")).digest()
    return np.random.default_rng([int(seed), int.from_bytes(digest[:8], "big")])


def _judges() -> dict:
    from ..scoring.judges import build_judge

    return {name: {"spec": dict(spec), "id": build_judge(spec).id}
            for name, spec in (("stable", STABLE_JUDGE), ("drifted", DRIFTED_JUDGE))}


def _planted(experiment: Experiment) -> PlantedExperiment:
    design = experiment.design
    return PlantedExperiment(experiment=experiment.name, plant=experiment.plant,
                             baseline=experiment.baseline.name, variant=experiment.variant.name,
                             primary=design["primary"], kind=design["kind"],
                             judge=experiment.judge, expected=experiment.expected)


def _anchors_manifest(plan: anchor_plan.AnchorPlan) -> PlantedAnchors:
    n, failed = len(plan.rows), plan.human_fail
    hard_rows = [row for row in plan.rows if row["anchor_id"] in plan.hard]
    # The stable rubric gets the hard anchors wrong and nothing else; the drifted one also
    # passes every hedged anchor.
    hard_missed = sum(row["human_verdict"] == "fail" for row in hard_rows)
    hard_false = len(hard_rows) - hard_missed
    stable = anchor_plan.expected_kappa(tp=failed - hard_missed, fp=hard_false, fn=hard_missed,
                                        tn=n - failed - hard_false)
    drifted = anchor_plan.expected_kappa(tp=failed - hard_missed - len(plan.hedged),
                                         fp=hard_false, fn=hard_missed + len(plan.hedged),
                                         tn=n - failed - hard_false)
    return PlantedAnchors(set=ANCHOR_SET, n=n, human_fail=failed, hedged=plan.hedged,
                          hard=plan.hard, warn_kappa=WARN_KAPPA, fail_kappa=FAIL_KAPPA,
                          expected_kappa={"stable": stable, "drifted": drifted})


def _write_jsonl(written: dict, relative: str, rows) -> None:
    text = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
    written[relative] = text.encode("utf-8")


def _write_text(written: dict, relative: str, text: str) -> None:
    written[relative] = text.encode("utf-8")


def _store(root: Path, relative: str, content: bytes) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)


def _prepare(root: Path) -> None:
    """Refuse a folder that holds anything but an earlier demo; clear an earlier demo's files."""
    if root.exists() and not root.is_dir():
        raise ValueError(f"{root} is a file; give a folder for the demo workspace")
    if not root.exists() or not any(root.iterdir()):
        return
    manifest = root / MANIFEST_NAME
    if not manifest.is_file():
        raise ValueError(f"{root} is not empty and holds no earlier demo ({MANIFEST_NAME}); "
                         f"give an empty or new folder so no file of yours is overwritten")
    try:
        earlier = json.loads(manifest.read_text(encoding="utf-8"))["files"]
    except (OSError, ValueError, KeyError, TypeError):
        raise ValueError(f"{manifest} cannot be read; delete the folder and build the demo "
                         f"again") from None
    base = root.resolve()
    for relative in earlier:
        path = (root / relative).resolve()
        if base in path.parents and path.is_file():  # never step outside the workspace
            path.unlink()
    for folder in ("runs", "experiments", "approvals"):
        # Folders of experiments an older demo had and this one does not: remove if empty.
        for directory in sorted((root / folder).glob("**/"), reverse=True):
            if directory.is_dir() and not any(directory.iterdir()):
                shutil.rmtree(directory)
    manifest.unlink()
