"""Sequential designs: the ``stopping`` block, the prefix rule of the gate, and look counting.

The statistics themselves are tested in test_sequential.py; here, what a design may say, what
a look may read (the first n goldens in traffic order, scored in both arms, capped at
max_goldens) and that the ledger counts looks without calling them repeated.
"""

import hashlib
from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from langchef_core.designs.gates import look_goldens, runs_are_complete
from langchef_core.designs.ledger import Ledger
from langchef_core.designs.model import DesignError
from langchef_core.designs.parse import parse_design
from langchef_core.designs.stopping import read_prefix, traffic_order
from langchef_core.inputs.errors import InputError
from langchef_core.inputs.workspace import Workspace

FILE = "experiments/rerank.yaml"
FIXED = """\
experiment: rerank
hypothesis: Reranking raises the pass rate.
suite: qa
arms: {baseline: base, variant: rerank}
kind: superiority
primary: pass_rate
judge: {kind: recorded, id: judge-v1}
criteria: [correctness]
"""
SEQUENTIAL = FIXED + "stopping: {rule: sequential, max_goldens: 40, order: created_at}\n"
# The canonical form of FIXED, as it was before stopping rules existed: its hash (and so
# every approval of a fixed-n design) must not move.
FIXED_CANONICAL = ('{"alpha":0.05,"arms":{"baseline":"base","variant":"rerank"},'
                   '"bootstrap":{"resamples":10000,"seed":0},"criteria":["correctness"],'
                   '"experiment":"rerank","hypothesis":"Reranking raises the pass rate.",'
                   '"judge":{"id":"judge-v1","kind":"recorded"},"kind":"superiority",'
                   '"power":0.8,"primary":"pass_rate","suite":"qa"}')
AT = datetime(2024, 5, 1, 12, 0, tzinfo=timezone.utc)


def parse(text):
    return parse_design(text, file=FILE, experiment="rerank")


# -- the design ----------------------------------------------------------------------------

def test_a_fixed_n_design_keeps_its_exact_hash():
    design = parse(FIXED)
    assert design.stopping is None and not design.sequential
    assert design.canonical_json == FIXED_CANONICAL
    assert design.sha256 == hashlib.sha256(FIXED_CANONICAL.encode()).hexdigest()
    # Writing the default rule out is the same design.
    assert parse(FIXED + "stopping: {rule: fixed}\n").sha256 == design.sha256


def test_a_sequential_design_is_typed_and_hashed():
    design = parse(SEQUENTIAL)
    assert design.sequential
    assert (design.stopping.rule, design.stopping.max_goldens, design.stopping.order) == \
        ("sequential", 40, "created_at")
    assert design.to_dict()["stopping"] == {"rule": "sequential", "max_goldens": 40,
                                            "order": "created_at"}
    assert design.sha256 != parse(FIXED).sha256
    # order defaults to created_at; any change of value changes the hash
    assert parse(FIXED + "stopping: {rule: sequential, max_goldens: 40}\n").sha256 == design.sha256
    assert parse(SEQUENTIAL.replace("max_goldens: 40", "max_goldens: 41")).sha256 != design.sha256
    assert parse(SEQUENTIAL.replace("order: created_at", "order: arrived")).sha256 != design.sha256


BAD = [
    ("unknown rule", "stopping: {rule: bayesian, max_goldens: 40}\n", "stopping.rule",
     "unknown value 'bayesian'"),
    ("no budget", "stopping: {rule: sequential}\n", "stopping.max_goldens",
     "missing required field"),
    ("budget not a count", "stopping: {rule: sequential, max_goldens: 40.5}\n",
     "stopping.max_goldens", "whole number"),
    ("tiny budget", "stopping: {rule: sequential, max_goldens: 3}\n", "stopping.max_goldens",
     "at least 20"),
    ("unknown key", "stopping: {rule: sequential, max_goldens: 40, look_every: 5}\n",
     "stopping.look_every", "unknown field"),
    ("fixed with a budget", "stopping: {rule: fixed, max_goldens: 40}\n",
     "stopping.max_goldens", "rule: sequential only"),
    ("not a mapping", "stopping: sequential\n", "stopping", "must be a mapping"),
    ("empty order", "stopping: {rule: sequential, max_goldens: 40, order: ''}\n",
     "stopping.order", "must not be empty"),
]


@pytest.mark.parametrize("case, extra, field, words", BAD, ids=[b[0] for b in BAD])
def test_a_bad_stopping_block_is_one_clear_error(case, extra, field, words):
    with pytest.raises(DesignError) as caught:
        parse(FIXED + extra)
    error = caught.value
    assert isinstance(error, InputError) and error.field == field and error.line == 9
    assert words in str(error) and str(error).startswith(f"{FILE}, field '{field}', line 9: ")


def test_metrics_without_a_sequential_bound_are_refused():
    retrieval = FIXED.replace("primary: pass_rate", "primary: recall") + \
        "stopping: {rule: sequential, max_goldens: 40}\n"
    with pytest.raises(DesignError, match="pass_rate and accuracy"):
        parse(retrieval)
    with pytest.raises(DesignError, match="training seeds"):
        parse(SEQUENTIAL + "seeds: 3\n")


# -- the prefix rule -----------------------------------------------------------------------

def frame(rows):
    return pd.DataFrame(rows, index=pd.RangeIndex(1, len(rows) + 1, name="row"))


def goldens(n=50):
    # Arrival times run backwards against the ids, so id order is not traffic order.
    return frame([{"example_id": f"q{i:02d}", "input": "?",
                   "created_at": (AT + timedelta(minutes=n - i)).isoformat()} for i in range(n)])


def in_traffic(n=50):
    return [f"q{i:02d}" for i in reversed(range(n))]


def run(ids):
    return frame([{"example_id": example, "output": "a", "verdict": "pass", "judge": "judge-v1"}
                  for example in ids])


def runs(base_ids, variant_ids=None):
    return {"base": run(base_ids), "rerank": run(base_ids if variant_ids is None else variant_ids)}


def test_traffic_order_follows_the_column_then_the_id():
    assert traffic_order(goldens(5), "created_at", file="goldens/qa") == \
        ["q04", "q03", "q02", "q01", "q00"]
    numbered = frame([{"example_id": e, "position": p} for e, p in (("b", 2), ("a", 2), ("c", 1))])
    assert traffic_order(numbered, "position", file="goldens/qa") == ["c", "a", "b"]


def test_a_golden_without_its_place_in_traffic_is_an_input_error():
    broken = goldens(5)
    broken.loc[3, "created_at"] = "yesterday"
    with pytest.raises(InputError) as caught:
        traffic_order(broken, "created_at", file="goldens/qa")
    assert (caught.value.file, caught.value.column, caught.value.row) == \
        ("goldens/qa", "created_at", 3)
    with pytest.raises(InputError, match="missing column"):
        traffic_order(goldens(5).drop(columns="created_at"), "created_at", file="goldens/qa")


def test_the_first_n_goldens_in_traffic_order_may_be_read():
    check = runs_are_complete(parse(SEQUENTIAL), goldens(), runs(in_traffic()[:25]))
    assert check.passed, check.sentence
    assert check.details["n"] == 25 and "first 25 goldens in traffic order" in check.sentence


def test_goldens_in_flight_in_one_arm_only_do_not_break_the_prefix():
    check = runs_are_complete(parse(SEQUENTIAL), goldens(),
                              runs(in_traffic()[:30], in_traffic()[:25]))
    assert check.passed and check.details["n"] == 25


def test_a_cherry_picked_subset_is_refused():
    picked = in_traffic()[:20] + in_traffic()[24:30]   # four goldens of traffic skipped
    check = runs_are_complete(parse(SEQUENTIAL), goldens(), runs(picked))
    assert not check.passed and check.refusal.code == "not_a_prefix"
    assert f"{in_traffic()[20]!r} (position 21)" in check.sentence
    assert "6 later goldens are" in check.sentence
    # Scoring in id order is a subset of traffic too (ids run against arrival here).
    by_id = runs_are_complete(parse(SEQUENTIAL), goldens(), runs(sorted(in_traffic())[:10]))
    assert by_id.refusal.code == "not_a_prefix"


def test_goldens_past_max_goldens_are_left_out_with_a_warning():
    design = parse(SEQUENTIAL)  # max_goldens: 40 of a 50-golden suite
    check = runs_are_complete(design, goldens(), runs(in_traffic()))
    assert check.passed and check.details["n"] == 40 and check.details["beyond_cap"] == 10
    assert "10 goldens scored past the design's max_goldens (40) are left out" in check.warnings[0]
    read, prefix = look_goldens(design, goldens(), runs(in_traffic()))
    assert prefix.n == 40 and set(read["example_id"]) == set(in_traffic()[:40])


def test_a_look_needs_at_least_two_goldens_and_a_fixed_design_still_refuses_partial_runs():
    one = runs_are_complete(parse(SEQUENTIAL), goldens(), runs(in_traffic()[:1]))
    assert not one.passed and one.refusal.code == "incomplete_runs"
    fixed = runs_are_complete(parse(FIXED), goldens(), runs(in_traffic()[:25]))
    assert not fixed.passed and fixed.refusal.code == "incomplete_runs"
    assert "the readout is taken once" in fixed.sentence


def test_read_prefix_counts_what_lies_beyond():
    prefix = read_prefix(list("abcdefgh"), set("abdef"), max_goldens=6)
    assert (prefix.ids, prefix.skipped, prefix.later_scored, prefix.beyond_cap) == \
        (("a", "b"), "c", 3, 0)
    capped = read_prefix(list("abcdefgh"), set("abcdefgh"), max_goldens=6)
    assert (capped.n, capped.skipped, capped.beyond_cap) == (6, None, 2)


# -- the ledger ----------------------------------------------------------------------------

def test_sequential_looks_are_counted_but_not_repeated(tmp_path):
    design = "d" * 64
    with Ledger.for_workspace(Workspace(tmp_path)) as ledger:
        for version, inputs in enumerate(("a" * 64, "b" * 64, "c" * 64), start=1):
            ledger.record_readout("rerank", design, inputs, version, "inconclusive")
        looks = ledger.looks(design, "e" * 64, sequential=True)
        assert (looks.look_number, looks.earlier_inputs, looks.repeated, looks.warning) == \
            (4, 3, False, None)
        # The same ledger, asked for a fixed-n design: the fourth look is a repeated one.
        fixed = ledger.looks(design, "e" * 64)
        assert fixed.repeated and fixed.look_number == 4 and "look 4" in fixed.warning


# -- planning ------------------------------------------------------------------------------

def test_a_sequential_design_plans_on_its_budget_with_the_sequence_limit():
    from langchef_core.designs.power_plan import plan_power
    from langchef_core.stats.power import limit_at_rate
    from langchef_core.stats.sequential import (planned_detection_limit,
                                                sequential_detection_limit)
    design = parse(SEQUENTIAL.replace("max_goldens: 40", "max_goldens: 2000"))
    plan = plan_power(design, 500, assumed=0.1)
    assert plan.n_goldens == 2000 and plan.detection_limit == planned_detection_limit(0.1, 2000)
    fixed = limit_at_rate(2000, 0.1)
    assert fixed < plan.detection_limit < 2 * fixed   # the price of looking, at the same N
    assert "budget of 2000 goldens (500 in the suite now)" in plan.sentence
    # Planning at rate d is the readout's limit on flips of ±1 at that rate (variance d / 4).
    flips = [1] * 100 + [-1] * 100 + [0] * 1800
    assert planned_detection_limit(0.1, 2000) == pytest.approx(
        sequential_detection_limit(flips, 2000), rel=1e-12)
    tight = parse(SEQUENTIAL.replace("max_goldens: 40", "max_goldens: 2000")
                  + "target_effect: 0.02\n")
    short = plan_power(tight, 2000, assumed=0.1)
    assert short.underpowered and short.shortfalls[0].goldens_needed > 2000
    assert planned_detection_limit(0.1, short.shortfalls[0].goldens_needed) <= 0.02
