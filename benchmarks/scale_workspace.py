"""A seeded workspace of any size, shaped like a real team's: what `bench_readout.py` times.

Two experiments over one suite of N goldens (JSONL):

* ``scale-judged`` — a recorded judge citing one of five criteria on every failure, users as
  clusters (about 20 goldens each), a protected slice, a p95-latency guardrail. The variant
  breaks about 3% of the baseline's passes and fixes about 5% of its failures.
* ``scale-retrieval`` — 20 ranked documents per query, 1–5 relevant documents per query in
  the qrels (human labels), recall/nDCG/MRR at 10 over the full corpus.

Designs are approved through the real `langchef approve` (so the approval is whatever the
installed version records), and the runs are written afterwards with ``created_at`` just
after the approval, as traffic would be. `expected_numbers` recomputes the model-free
numbers (counts, rates, per-criterion flips, per-arm p95) straight from the generated
arrays, so a readout can be checked against them independently of langchef.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np

CRITERIA = ("Correctness", "Groundedness", "Directness", "Completeness", "Safety")
JUDGE_ID = "upstream-judge:v1"
SUITE = "scale"
JUDGED, RETRIEVAL = "scale-judged", "scale-retrieval"
DOCS_PER_QUERY = 20
CORPUS = 1_000_000

JUDGED_DESIGN = f"""\
experiment: {JUDGED}
hypothesis: The candidate prompt answers at least as well, for every segment.
suite: {SUITE}
arms: {{baseline: base, variant: cand}}
kind: superiority
primary: pass_rate
alpha: 0.05
power: 0.80
judge: {{kind: recorded, id: "{JUDGE_ID}"}}
criteria: [{", ".join(CRITERIA)}]
bootstrap: {{resamples: 10000, seed: 0}}
cluster: user_id
slices: {{column: segment, target_weights: {{established: 0.5, new: 0.5}}, protected: [new]}}
guardrails:
  - {{metric: latency_ms, statistic: p95, max_increase: 0.10}}
assumed_discordant_rate: 0.08
"""

RETRIEVAL_DESIGN = f"""\
experiment: {RETRIEVAL}
hypothesis: The new embeddings retrieve at least as well.
suite: {SUITE}
arms: {{baseline: base, variant: cand}}
kind: superiority
primary: recall
alpha: 0.05
power: 0.80
judge: {{kind: recorded, id: "{JUDGE_ID}"}}
criteria: [Correctness]
bootstrap: {{resamples: 10000, seed: 0}}
retrieval: {{k: 10, metrics: [recall, ndcg, reciprocal_rank], zero_positive: exclude,
            pool: {{kind: full}}}}
assumed_sd: 0.2
"""


@dataclass(frozen=True)
class ScaleData:
    """The generated arrays, kept so a readout can be checked against them."""

    n: int
    baseline_pass: np.ndarray
    variant_pass: np.ndarray
    baseline_criterion: np.ndarray   # index into CRITERIA, −1 on a pass
    variant_criterion: np.ndarray
    baseline_latency: np.ndarray
    variant_latency: np.ndarray
    retrieval: dict | None = None    # arm → (n × D) bool: is the document at each rank relevant
    n_relevant: np.ndarray | None = None


def generate(n: int, seed: int = 0) -> ScaleData:
    rng = np.random.default_rng(seed)
    baseline = rng.random(n) < 0.75
    flip = rng.random(n)
    variant = np.where(baseline, flip >= 0.03, flip < 0.05)
    criterion = rng.integers(0, len(CRITERIA), size=(2, n))
    latency = rng.lognormal(mean=np.log(800.0), sigma=0.5, size=(2, n)).round(1)
    latency[1] *= 1.02
    return ScaleData(n, baseline, variant, np.where(baseline, -1, criterion[0]),
                     np.where(variant, -1, criterion[1]), latency[0], latency[1].round(1))


def example_ids(n: int) -> list[str]:
    return [f"g{i:07d}" for i in range(n)]


def write_workspace(root: Path, n: int, *, seed: int = 0, langchef: str | None = None) -> ScaleData:
    """Write goldens, designs, approvals (via the CLI), runs, qrels under ``root``."""
    langchef = langchef or str(Path(sys.executable).with_name("langchef"))
    data = generate(n, seed)
    rng = np.random.default_rng(seed + 1)
    ids = example_ids(n)
    users = rng.integers(0, max(1, n // 20), n)
    segments = np.where(rng.random(n) < 0.8, "established", "new")
    (root / "experiments").mkdir(parents=True, exist_ok=True)
    (root / "experiments" / f"{JUDGED}.yaml").write_text(JUDGED_DESIGN)
    (root / "experiments" / f"{RETRIEVAL}.yaml").write_text(RETRIEVAL_DESIGN)
    _write_jsonl(root / "goldens" / f"{SUITE}.jsonl",
                 ({"example_id": ids[i], "input": f"question {i}", "user_id": f"u{users[i]}",
                   "segment": str(segments[i])} for i in range(n)))
    # The labels exist before the approval (a retrieval design is checked against them).
    plan = _write_qrels(root, ids, rng)
    for experiment in (JUDGED, RETRIEVAL):
        subprocess.run([langchef, "approve", experiment, "--by", "bench", "--workspace", str(root)],
                       check=True, capture_output=True, text=True)
    traffic = datetime.now(timezone.utc) + timedelta(seconds=1)
    stamp = traffic.strftime("%Y-%m-%dT%H:%M:%SZ")
    for role, arm in ((0, "base"), (1, "cand")):
        passed = (data.baseline_pass, data.variant_pass)[role]
        cited = (data.baseline_criterion, data.variant_criterion)[role]
        latency = (data.baseline_latency, data.variant_latency)[role]
        _write_jsonl(root / "runs" / JUDGED / f"{arm}.jsonl",
                     ({"example_id": ids[i], "output": f"answer {i} from {arm}", "created_at": stamp,
                       "latency_ms": float(latency[i]), "verdict": "pass" if passed[i] else "fail",
                       "criterion": None if passed[i] else CRITERIA[cited[i]], "judge": JUDGE_ID}
                      for i in range(n)))
    hits, n_relevant = _write_retrieval_runs(root, ids, rng, stamp, plan)
    data = dataclasses.replace(data, retrieval=hits, n_relevant=n_relevant)
    # Let the traffic time pass before anyone reads out.
    while datetime.now(timezone.utc) < traffic:
        pass
    return data


def _write_qrels(root: Path, ids: list[str], rng) -> tuple:
    """Each query's 2·D candidate documents and which of them are relevant (1–5 per query)."""
    n = len(ids)
    start = rng.integers(0, CORPUS, n)
    stride = rng.integers(1, CORPUS // (4 * DOCS_PER_QUERY), n)
    lists = (start[:, None] + np.arange(2 * DOCS_PER_QUERY)[None, :] * stride[:, None]) % CORPUS
    n_relevant = rng.integers(1, 6, n)
    # Relevant docs are drawn from the first 2·D candidates: each arm ranks some of them.
    relevant_at = [rng.choice(2 * DOCS_PER_QUERY, size=k, replace=False) for k in n_relevant]
    _write_jsonl(root / "qrels" / f"{SUITE}.jsonl",
                 ({"query_id": ids[i], "doc_id": f"d{lists[i, j]}", "relevant": 1, "source": "human"}
                  for i in range(n) for j in relevant_at[i]))
    return lists, n_relevant, relevant_at


def _write_retrieval_runs(root: Path, ids: list[str], rng, stamp: str,
                          plan: tuple) -> tuple[dict, np.ndarray]:
    lists, n_relevant, relevant_at = plan
    n = len(ids)
    relevant = np.zeros((n, 2 * DOCS_PER_QUERY), bool)
    for i, chosen in enumerate(relevant_at):
        relevant[i, chosen] = True
    hits = {}
    for arm in ("base", "cand"):
        # Each arm ranks the 2·D candidates in its own random order and keeps the top D.
        order = np.argsort(rng.random((n, 2 * DOCS_PER_QUERY)), axis=1)[:, :DOCS_PER_QUERY]
        hits[arm] = np.take_along_axis(relevant, order, axis=1)
        _write_jsonl(root / "runs" / RETRIEVAL / f"{arm}.jsonl",
                     ({"example_id": ids[i], "created_at": stamp,
                       "retrieved": [f"d{lists[i, j]}" for j in order[i]]}
                      for i in range(n)))
    return hits, n_relevant


def expected_retrieval(data: ScaleData, k: int = 10) -> dict:
    """Mean recall, reciprocal rank and binary nDCG at k per arm, from the arrays (textbook
    definitions, written out here independently of langchef's kernel)."""
    discount = 1.0 / np.log2(np.arange(2, k + 2))
    ideal = np.cumsum(discount)[np.minimum(data.n_relevant, k) - 1]
    means = {}
    for arm, hits in data.retrieval.items():
        top = hits[:, :k]
        first = np.where(top.any(axis=1), top.argmax(axis=1) + 1, np.inf)
        means[arm] = {"recall": float(np.mean(top.sum(axis=1) / data.n_relevant)),
                      "reciprocal_rank": float(np.mean(1.0 / first)),
                      "ndcg": float(np.mean((top * discount).sum(axis=1) / ideal))}
    return means


def expected_numbers(data: ScaleData) -> dict:
    """Model-free numbers of ``scale-judged``, computed from the arrays (not by langchef)."""
    broke = int(np.sum(data.baseline_pass & ~data.variant_pass))
    fixed = int(np.sum(~data.baseline_pass & data.variant_pass))
    criteria = {}
    for index, name in enumerate(CRITERIA):
        before = data.baseline_criterion == index
        after = data.variant_criterion == index
        # A criterion is charged where the judge cited it: broke = newly cited, fixed = no longer.
        criteria[name] = {"broke": int(np.sum(~before & after)), "fixed": int(np.sum(before & ~after))}
    return {"n": data.n, "broke": broke, "fixed": fixed, "difference": (fixed - broke) / data.n,
            "baseline_rate": float(data.baseline_pass.mean()),
            "variant_rate": float(data.variant_pass.mean()), "criteria": criteria,
            "p95_latency": (float(np.quantile(data.baseline_latency, 0.95)),
                            float(np.quantile(data.variant_latency, 0.95)))}


def _write_jsonl(path: Path, rows) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(dumps(row) + "\n" for row in rows)


if __name__ == "__main__":
    target = Path(sys.argv[1])
    write_workspace(target, int(sys.argv[2]) if len(sys.argv) > 2 else 10_000)
    print(target)
