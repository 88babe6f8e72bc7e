"""A realistic readout built from the real langchef_core functions on synthetic data.

``build_specimen_readout()`` is the readout the report tests render: a non-inferiority
design (a cheaper model against the incumbent) on 120 goldens with three judge criteria,
retrieval with two label sources and a sampled pool, declared slices with a protected
slice, a latency guardrail and a re-judged anchor set. Every section is produced by the
function that produces it in the pipeline (``compare_binary``, ``attribute``,
``compare_retrieval``, ``compare_slices``, ``compare_cost``/``check_guardrails``,
``agreement``/``drift``/``drift_status``) and put together by ``assemble_readout``.

The golden-file test renders a frozen copy of this readout
(``tests/reference/golden/specimen_readout.json``), so that the golden HTML changes only
when the report changes. The test below keeps that copy honest: its sections must have the
same shape (keys and value types) as what the real functions produce today, so a change in
any section's ``to_dict()`` shows up here instead of as a report that silently lost a field.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

import langchef_core as lc
from langchef_core.scoring.anchors import AnchorReport, AnchorRun
from langchef_core.designs.parse import validate_design
from langchef_core.readout.comparisons import guardrail_entries
from langchef_core.readout.assemble import ReadoutParts, Warning_, assemble_readout

GOLDEN = Path(__file__).resolve().parents[1] / "reference" / "golden"
FROZEN_READOUT = GOLDEN / "specimen_readout.json"

CRITERIA = ("Correctness", "Groundedness", "Directness")
SLICES = ("lookup", "howto", "safety")
N_GOLDENS = 120
N_QUERIES = 60
RESAMPLES = 2000  # the design's bootstrap: enough for a stable specimen, quick to build

DESIGN = {
    "experiment": "cheaper-generator",
    "hypothesis": "The distilled generator answers as well as the incumbent, within 5 points.",
    "suite": "kitchen",
    "arms": {"baseline": "incumbent", "variant": "distilled"},
    "kind": "non_inferiority",
    "margin": 0.05,
    "primary": "pass_rate",
    "judge": {"kind": "rubric", "version": "r3"},
    "criteria": list(CRITERIA),
    "alpha": 0.05,
    "power": 0.8,
    "bootstrap": {"resamples": RESAMPLES, "seed": 11},
    "retrieval": {"k": 10, "metrics": ["recall", "ndcg"], "zero_positive": "exclude",
                  "pool": {"kind": "sampled"}},
    "slices": {"column": "task", "target_weights": {"lookup": 0.5, "howto": 0.3, "safety": 0.2},
               "protected": ["safety"]},
    "guardrails": [{"metric": "latency_ms", "statistic": "p95", "max_increase": 0.10}],
    "anchors": {"set": "kitchen-anchors"},
}


def _judged_arms(rng: np.random.Generator):
    """Pass/fail and cited criterion per golden for both arms, with planted flips:
    the variant breaks answers by citing no source (Groundedness) and fixes a few
    Correctness failures."""
    base_pass = rng.random(N_GOLDENS) < 0.82
    base_cited = np.array([None if ok else CRITERIA[i % 3] for i, ok in enumerate(base_pass)],
                          dtype=object)
    var_pass, var_cited = base_pass.copy(), base_cited.copy()
    passing = np.flatnonzero(base_pass)
    failing = np.flatnonzero(~base_pass)
    for position in passing[:9]:
        var_pass[position], var_cited[position] = False, "Groundedness"
    for position in passing[9:10]:
        var_pass[position], var_cited[position] = False, "Directness"
    for position in [p for p in failing if base_cited[p] == "Correctness"][:4]:
        var_pass[position], var_cited[position] = True, None
    # One failure moves from Correctness to Groundedness: a fail in both arms that the
    # overall table cannot see but the attribution can.
    both = [p for p in failing if base_cited[p] == "Correctness" and not var_pass[p]]
    var_cited[both[0]] = "Groundedness"
    return base_pass, base_cited, var_pass, var_cited


def _goldens(rng: np.random.Generator) -> pd.DataFrame:
    tasks = np.array(SLICES)[rng.choice(3, size=N_GOLDENS, p=[0.5, 0.3, 0.2])]
    questions = [f"How long should the {thing} rest before it is cut?" for thing in
                 ("brisket", "bread", "lasagne", "roast", "tart", "terrine")]
    return pd.DataFrame({
        "example_id": [f"g{i:03d}" for i in range(N_GOLDENS)],
        "input": [questions[i % len(questions)] + f" (case {i})" for i in range(N_GOLDENS)],
        "ideal": ["Rest it at least 20 minutes, loosely covered." for _ in range(N_GOLDENS)],
        "task": tasks,
        "region": np.array(["eu", "us"])[rng.integers(0, 2, N_GOLDENS)],
    })


def _retrieval(rng: np.random.Generator, settings: lc.RetrievalSettings, seed: int):
    queries = [f"g{i:03d}" for i in range(N_QUERIES)]
    pool, qrels, runs = [], [], {"baseline": [], "variant": []}
    for number, query in enumerate(queries):
        docs = [f"d{number:03d}-{j:02d}" for j in range(40)]
        pool += [(query, doc) for doc in docs]
        positives = docs[:3] if number % 12 else []  # every 12th query has no positive label
        source = "human" if number % 3 else "click"
        qrels += [(query, doc, 1, source) for doc in positives]
        qrels += [(query, doc, 0, source) for doc in docs[3:6]]
        for arm, skill in (("baseline", 0.55), ("variant", 0.50)):
            ranked = sorted(docs, key=lambda doc: rng.random() - (skill if doc in positives else 0))
            runs[arm] += [(query, doc, rank) for rank, doc in enumerate(ranked[:10], start=1)]
    frame = lambda rows, columns: pd.DataFrame(rows, columns=columns)  # noqa: E731
    comparison = lc.compare_retrieval(
        frame(runs["baseline"], ["query_id", "doc_id", "rank"]),
        frame(runs["variant"], ["query_id", "doc_id", "rank"]),
        frame(qrels, ["query_id", "doc_id", "relevant", "source"]),
        settings=settings, pool=frame(pool, ["query_id", "doc_id"]),
        resamples=RESAMPLES, seed=seed)
    return comparison


def _guardrails(rng: np.random.Generator, design, slices) -> tuple[list, list]:
    """The protected slices and a p95 latency guardrail, listed by the pipeline's own
    ``guardrail_entries`` (with the warnings it adds)."""
    baseline = rng.gamma(4.0, 120.0, N_GOLDENS)
    variant = baseline * rng.normal(0.92, 0.05, N_GOLDENS)
    costs = {"latency_ms": lc.compare_cost(baseline, variant, metric="latency_ms",
                                           resamples=RESAMPLES, seed=design.bootstrap.seed)}
    return guardrail_entries(design, slices, costs)


def _judge_section(rng: np.random.Generator, design) -> dict:
    """The judge and its anchor report, shaped as the pipeline's ``judge_section`` writes it."""
    n = 48
    ids = [f"a{i:02d}" for i in range(n)]
    human = np.where(np.arange(n) % 3 == 0, "fail", "pass")
    then = human.copy()
    then[[1, 4]] = "fail"
    now = then.copy()
    now[[0, 3, 6]] = "pass"  # the current judge lets three failures through
    lengths = rng.integers(40, 400, n)
    agreement = lc.agreement(ids, human, now)
    drift = lc.drift(ids, human, then, now, resamples=RESAMPLES, seed=design.bootstrap.seed)
    length = lc.length_bias(human, now, lengths)
    status = lc.drift_status(agreement, drift, length, warn_kappa=design.anchors.warn_kappa,
                             fail_kappa=design.anchors.fail_kappa)
    judge_id = "rubric:5f1c0ffee123"
    earlier = AnchorRun(anchor_set=design.anchors.set, anchor_set_sha256="6a" * 32,
                        judge_id="rubric:0ld0ld0ld0ld", verdicts={}, kappa=drift.kappa_then,
                        level="ok", taken_at="2026-10-20T06:00:00Z")
    report = AnchorReport(anchor_set=design.anchors.set, anchor_set_sha256="6a" * 32,
                          judge_id=judge_id, agreement=agreement, drift=drift, length=length,
                          status=status, reference=earlier)
    return {"id": judge_id, "kind": design.judge.kind, "settings": design.judge.to_dict(),
            "anchors": report.to_dict()}


def _changed(goldens: pd.DataFrame, rows, base_cited, var_cited, *, broke: bool) -> list[dict]:
    """Broke or fixed goldens, with the keys the pipeline's ``flipped_goldens`` writes."""
    answer_ok = "Rest it 20 minutes under loose foil; slicing early loses the juices."
    answer_bad = "It depends on many factors."
    reason_ok = "Gives the resting time and cites the handbook."
    reason_bad = "Does not answer and cites no source."
    return [{"example_id": goldens.at[i, "example_id"], "input": goldens.at[i, "input"],
             "ideal": goldens.at[i, "ideal"],
             "baseline_output": answer_ok if broke else answer_bad,
             "variant_output": answer_bad if broke else answer_ok,
             "baseline_criterion": base_cited[i], "variant_criterion": var_cited[i],
             "baseline_rationale": reason_ok if broke else reason_bad,
             "variant_rationale": reason_bad if broke else reason_ok}
            for i in rows]


def build_specimen_readout() -> dict:
    """The specimen readout (version not yet assigned), from the real functions."""
    rng = np.random.default_rng(20261102)
    design = validate_design(DESIGN)
    seed, resamples = design.bootstrap.seed, design.bootstrap.resamples
    options = dict(alpha=design.alpha, power=design.power, resamples=resamples, seed=seed)
    goldens = _goldens(rng)
    base_pass, base_cited, var_pass, var_cited = _judged_arms(rng)

    primary = lc.compare_binary(base_pass, var_pass, margin=design.margin, **options)
    attribution = lc.attribute(base_pass, base_cited, var_pass, var_cited,
                               criteria=design.criteria, **options).to_dict()
    retrieval = _retrieval(rng, lc.RetrievalSettings.from_design(design.retrieval.to_dict()), seed)
    slices = lc.compare_slices(base_pass, var_pass, goldens["task"], column="task",
                               target_weights=design.slices.target_weights,
                               protected=design.slices.protected,
                               exploratory={"region": goldens["region"]},
                               margin=design.margin, **options)
    broke = np.flatnonzero(base_pass & ~var_pass)
    fixed = np.flatnonzero(~base_pass & var_pass)
    guardrails, extra = _guardrails(rng, design, slices)
    warnings = [
        Warning_("underpowered", "the 120 goldens can detect about 11 points, more than the "
                                 "5-point margin; a drop as large as the margin can hide here"),
        Warning_("label_source_mix", "retrieval labels come from human and click sources; the "
                                     "'all' rows mix them"),
        *(Warning_(code, sentence) for code, sentence in extra),
    ]
    parts = ReadoutParts(
        design=design, design_sha256=design.sha256, approved_by="Ada Reviewer",
        approved_at="2026-10-28T14:05:00Z",
        inputs={"goldens/kitchen.jsonl": {"sha256": "1f" * 32, "rows": N_GOLDENS},
                "runs/cheaper-generator/incumbent.jsonl": {"sha256": "2e" * 32, "rows": N_GOLDENS},
                "runs/cheaper-generator/distilled.jsonl": {"sha256": "3d" * 32, "rows": N_GOLDENS},
                "qrels/kitchen.jsonl": {"sha256": "4c" * 32, "rows": 414}},
        inputs_sha256="5b" * 32,
        primary=primary.to_dict(), criteria=attribution["criteria"],
        unattributed=attribution["unattributed"], retrieval=retrieval.to_dict(),
        slices=slices.to_dict(), guardrails=guardrails,
        judge=_judge_section(rng, design),
        traffic={"verified": True,
                 "sentence": "every run row was created after the approval (2026-10-28T14:05:00Z)"},
        looks={"look_number": 1, "repeated": False, "earlier_inputs": 0},
        warnings=warnings,
        broke=_changed(goldens, broke, base_cited, var_cited, broke=True),
        fixed=_changed(goldens, fixed, base_cited, var_cited, broke=False),
    )
    return json.loads(json.dumps(assemble_readout(parts)))


def frozen_specimen() -> dict:
    """The stored copy of the specimen that the golden HTML was rendered from."""
    return json.loads(FROZEN_READOUT.read_text(encoding="utf-8"))


def shape(value):
    """Keys and value kinds, recursively (lists by the shape of their first item)."""
    if isinstance(value, dict):
        return {key: shape(item) for key, item in value.items()}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    if isinstance(value, bool) or value is None:
        return type(value).__name__
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


def _merge_optional(live, frozen):
    """Shapes agree where both have a value; a None on one side is an optional field."""
    if live == "NoneType" or frozen == "NoneType":
        return True
    if isinstance(live, dict) and isinstance(frozen, dict):
        return set(live) == set(frozen) and all(_merge_optional(live[k], frozen[k]) for k in live)
    if isinstance(live, list) and isinstance(frozen, list):
        return not live or not frozen or _merge_optional(live[0], frozen[0])
    return live == frozen


def test_the_frozen_specimen_has_the_shape_the_real_functions_produce():
    live, frozen = build_specimen_readout(), frozen_specimen()
    assert set(live) == set(frozen)
    for section in sorted(live):
        assert _merge_optional(shape(live[section]), shape(frozen[section])), (
            f"section {section!r} of the frozen specimen no longer matches the real functions; "
            "regenerate it with LANGCHEF_UPDATE_GOLDEN=1 and review the golden HTML")


def test_the_specimen_exercises_every_part_of_the_report():
    readout = frozen_specimen()
    assert readout["primary"]["verdict"] == "inconclusive"
    assert readout["primary"]["noninferiority"] == "unresolved"
    assert {row["direction"] for row in readout["criteria"]} >= {"moved_worse", "inconclusive"}
    assert readout["retrieval"]["sources"] == ["human", "click", "all"]
    assert readout["slices"]["protected"] == ["safety"]
    assert readout["slices"]["exploratory"]
    assert readout["guardrails"] and readout["judge"]["anchors"]["drift"] is not None
    assert readout["broke"] and readout["fixed"]
