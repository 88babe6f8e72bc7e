"""Designs: validation with field and line, the canonical hash, and power planning."""

import hashlib
import json
import math
import unicodedata

import numpy as np
import pytest
from scipy import optimize, stats
from statsmodels.stats.proportion import proportion_confint

from langchef_core.designs.model import DesignError, canonical_json
from langchef_core.designs.power_plan import (assess_power, count_goldens, measured_assumption,
                                              plan_power)
from langchef_core.designs.parse import load_design, parse_design, validate_design
from langchef_core.inputs.errors import InputError
from langchef_core.inputs.workspace import Workspace

FILE = "experiments/rerank.yaml"

# Line numbers matter below: keep this text's layout in step with the tests that cite lines.
BASE = """\
# Reranking experiment
experiment: rerank
hypothesis: Reranking raises the pass rate.
suite: qa
arms:
  baseline: base
  variant: rerank
kind: superiority
primary: pass_rate
judge:
  kind: recorded
  id: judge-v1
criteria: [correctness, groundedness]
"""


def parse(text: str):
    return parse_design(text, file=FILE, experiment="rerank")


def edited(old: str, new: str, text: str = BASE) -> str:
    assert old in text, old
    return text.replace(old, new)


def error_of(text: str) -> DesignError:
    with pytest.raises(DesignError) as caught:
        parse(text)
    return caught.value


# -- the model -------------------------------------------------------------------------

def test_defaults_are_filled_in():
    design = parse(BASE)
    assert (design.alpha, design.power) == (0.05, 0.80)
    assert (design.bootstrap.resamples, design.bootstrap.seed) == (10_000, 0)
    assert design.arm_names == ("base", "rerank")
    assert design.judge_id == "judge-v1"
    assert design.criteria == ("correctness", "groundedness")
    assert design.margin is None and design.retrieval is None


def test_optional_sections_are_typed():
    text = BASE + """\
margin: 0.03
retrieval: {k: 5, metrics: [recall, ndcg], zero_positive: separate, pool: {kind: sampled},
            min_coverage: 0.9}
slices: {column: region, target_weights: {no: 0.25, se: 0.75}, protected: [no]}
cluster: user_id
guardrails:
  - {metric: latency_ms, statistic: p95, max_increase: 0.10}
  - {metric: cost_usd, statistic: mean, max_increase: 0}
anchors: {set: anchors-v1}
target_effect: 0.05
seeds: 3
"""
    design = parse(text)
    assert design.retrieval.k == 5 and design.retrieval.metrics == ("recall", "ndcg")
    assert design.retrieval.pool.kind == "sampled" and design.retrieval.min_coverage == 0.9
    # YAML 1.2 scalars: "no" is the text no (Norway), not false.
    assert design.slices.target_weights == {"no": 0.25, "se": 0.75}
    assert design.slices.protected == ("no",)
    assert [g.statistic for g in design.guardrails] == ["p95", "mean"]
    assert (design.anchors.warn_kappa, design.anchors.fail_kappa) == (0.6, 0.4)
    assert design.seeds == 3 and design.cluster == "user_id"


def test_retrieval_primary_gets_default_retrieval_settings():
    design = parse(edited("primary: pass_rate", "primary: ndcg"))
    assert design.retrieval.k == 10 and "ndcg" in design.retrieval.metrics
    assert not design.primary_is_binary


def test_rubric_judge_keeps_its_settings_loosely():
    design = parse(edited("  kind: recorded\n  id: judge-v1\n",
                          "  kind: rubric\n  model: gpt-x\n  temperature: 0\n"
                          "  rubric: {steps: [a, b]}\n"))
    assert design.judge.kind == "rubric" and design.judge_id is None
    assert design.judge.settings == {"model": "gpt-x", "temperature": 0.0,
                                     "rubric": {"steps": ["a", "b"]}}


def test_validate_design_accepts_a_mapping_built_in_python():
    mapping = {"experiment": "rerank", "hypothesis": "h", "suite": "qa",
               "arms": {"baseline": "base", "variant": "rerank"}, "kind": "superiority",
               "primary": "pass_rate", "judge": {"kind": "recorded", "id": "judge-v1"},
               "criteria": ["correctness", "groundedness"]}
    assert validate_design(mapping, experiment="rerank").sha256 == parse(
        edited("Reranking raises the pass rate.", "h")).sha256


# -- the hash ---------------------------------------------------------------------------

def test_canonical_form_is_sorted_compact_json_and_hash_is_its_sha256():
    design = parse(BASE)
    expected = ('{"alpha":0.05,"arms":{"baseline":"base","variant":"rerank"},'
                '"bootstrap":{"resamples":10000,"seed":0},'
                '"criteria":["correctness","groundedness"],"experiment":"rerank",'
                '"hypothesis":"Reranking raises the pass rate.",'
                '"judge":{"id":"judge-v1","kind":"recorded"},"kind":"superiority",'
                '"power":0.8,"primary":"pass_rate","suite":"qa"}')
    assert design.canonical_json == expected
    assert design.sha256 == hashlib.sha256(expected.encode("utf-8")).hexdigest()


SAME_DESIGN = [
    ("comment edited", edited("# Reranking experiment", "# a different comment\n# and more")),
    ("trailing comment", edited("suite: qa", "suite: qa   # the QA suite")),
    ("keys reordered", """\
criteria:
  - correctness
  - groundedness
judge: {id: judge-v1, kind: recorded}
primary: pass_rate
kind: superiority
arms: {variant: rerank, baseline: base}
suite: qa
hypothesis: "Reranking raises the pass rate."
experiment: rerank
"""),
    ("defaults written out", BASE + "alpha: 0.05\npower: 0.8\nbootstrap: {resamples: 10000, seed: 0}\n"),
    ("numbers written differently", BASE + "alpha: 5e-2\npower: 0.800\nbootstrap: {resamples: 1e4}\n"),
    ("quoted strings", edited("suite: qa", "suite: 'qa'")),
    ("empty guardrail list", BASE + "guardrails: []\n"),
]


@pytest.mark.parametrize("label, text", SAME_DESIGN, ids=[label for label, _ in SAME_DESIGN])
def test_layout_order_comments_and_defaults_do_not_change_the_hash(label, text):
    assert parse(text).sha256 == parse(BASE).sha256


def test_strings_are_compared_in_nfc():
    composed = unicodedata.normalize("NFC", "Réordonner aide.")
    decomposed = unicodedata.normalize("NFD", composed)
    assert composed != decomposed
    one = parse(edited("Reranking raises the pass rate.", composed))
    other = parse(edited("Reranking raises the pass rate.", decomposed))
    assert one.sha256 == other.sha256


CHANGED_VALUES = [
    ("hypothesis", "Reranking raises the pass rate.", "Reranking raises the pass rate!"),
    ("suite", "suite: qa", "suite: qa2"),
    ("arm", "variant: rerank", "variant: rerank2"),
    ("kind", "kind: superiority", "kind: non_inferiority\nmargin: 0.03"),
    ("judge id", "id: judge-v1", "id: judge-v2"),
    ("criteria order", "[correctness, groundedness]", "[groundedness, correctness]"),
    ("alpha", "criteria: [correctness, groundedness]",
     "criteria: [correctness, groundedness]\nalpha: 0.049"),
    ("seed", "criteria: [correctness, groundedness]",
     "criteria: [correctness, groundedness]\nbootstrap: {seed: 1}"),
]


@pytest.mark.parametrize("label, old, new", CHANGED_VALUES, ids=[c[0] for c in CHANGED_VALUES])
def test_any_change_of_value_changes_the_hash(label, old, new):
    assert parse(edited(old, new)).sha256 != parse(BASE).sha256


def test_canonical_json_normalises_numbers_and_refuses_nan():
    assert canonical_json({"b": 1.0, "a": [0.05, 2.5]}) == '{"a":[0.05,2.5],"b":1}'
    with pytest.raises(ValueError):
        canonical_json({"a": float("nan")})


# -- one clear error per problem, naming field and line -----------------------------------

ERRORS = [
    # (case, text, field, line, words expected in the message)
    ("unknown key", BASE + "margn: 0.03\n", "margn", 14, "did you mean 'margin'"),
    ("unknown nested key", edited("  variant: rerank", "  variant: rerank\n  control: x"),
     "arms.control", 8, "unknown field"),
    ("wrong type", edited("suite: qa", "suite: [qa]"), "suite", 4, "must be text"),
    ("wrong type for a number", BASE + "alpha: low\n", "alpha", 14, "must be a number"),
    ("missing required field", edited("suite: qa\n", ""), "suite", 2, "missing required"),
    ("required field without value", edited("suite: qa", "suite:"), "suite", 4, "has no value"),
    ("non_inferiority without margin", edited("kind: superiority", "kind: non_inferiority"),
     "margin", 8, "required when kind is non_inferiority"),
    ("margin zero", BASE + "margin: 0\n", "margin", 14, "must be positive"),
    ("margin negative", BASE + "margin: -0.02\n", "margin", 14, "must be positive"),
    ("alpha zero", BASE + "alpha: 0\n", "alpha", 14, "(0, 0.5]"),
    ("alpha above one half", BASE + "alpha: 0.51\n", "alpha", 14, "(0, 0.5]"),
    ("power one half", BASE + "power: 0.5\n", "power", 14, "(0.5, 1)"),
    ("power one", BASE + "power: 1\n", "power", 14, "(0.5, 1)"),
    ("too few resamples", BASE + "bootstrap:\n  resamples: 999\n", "bootstrap.resamples", 15,
     "at least 1000"),
    ("fractional resamples", BASE + "bootstrap: {resamples: 2000.5}\n", "bootstrap.resamples",
     14, "whole number"),
    ("unknown primary metric", edited("primary: pass_rate", "primary: f1"), "primary", 9,
     "unknown value 'f1'"),
    ("unknown retrieval metric", BASE + "retrieval:\n  metrics: [recall, map]\n",
     "retrieval.metrics[2]", 15, "unknown value 'map'"),
    ("primary not among retrieval metrics",
     edited("primary: pass_rate", "primary: ndcg") + "retrieval: {metrics: [recall]}\n",
     "primary", 9, "not among"),
    ("protected slice not declared",
     BASE + "slices:\n  column: region\n  target_weights: {eu: 0.5, us: 0.5}\n"
            "  protected: [eu, apac]\n", "slices.protected[2]", 17, "'apac' is not a declared"),
    ("protected slices without declared slices",
     BASE + "slices:\n  column: region\n  protected: [eu]\n", "slices.protected[1]", 16,
     "not a declared slice"),
    ("weights not summing to one",
     BASE + "slices:\n  column: region\n  target_weights:\n    eu: 0.5\n    us: 0.4\n",
     "slices.target_weights", 16, "sum to 0.9"),
    ("experiment differs from file name", edited("experiment: rerank", "experiment: other"),
     "experiment", 2, "file is named 'rerank'"),
    ("duplicate key", BASE + "suite: qa2\n", "suite", 14, "appears twice"),
    ("same arm twice", edited("variant: rerank", "variant: base"), "arms.variant", 7,
     "same arm"),
    ("repeated criterion", edited("[correctness, groundedness]", "[correctness, correctness]"),
     "criteria[2]", 13, "listed twice"),
    ("recorded judge without id", edited("  id: judge-v1\n", ""), "judge.id", 10,
     "missing required"),
    ("unknown judge kind", edited("  kind: recorded", "  kind: oracle"), "judge.kind", 11,
     "unknown value"),
    ("unknown guardrail statistic",
     BASE + "guardrails:\n  - {metric: latency_ms, statistic: p99, max_increase: 0.1}\n",
     "guardrails[1].statistic", 15, "unknown value 'p99'"),
    ("fail kappa above warn kappa", BASE + "anchors: {set: a, warn_kappa: 0.5, fail_kappa: 0.7}\n",
     "anchors.fail_kappa", 14, "above warn_kappa"),
    ("unsafe suite name", edited("suite: qa", "suite: ../qa"), "suite", 4, "not allowed"),
    ("seeds below two", BASE + "seeds: 1\n", "seeds", 14, "at least 2"),
]


@pytest.mark.parametrize("case, text, field, line, words", ERRORS, ids=[e[0] for e in ERRORS])
def test_each_problem_is_one_error_naming_field_and_line(case, text, field, line, words):
    error = error_of(text)
    assert (error.field, error.line) == (field, line)
    sentence = str(error)
    assert sentence.startswith(f"{FILE}, field '{field}', line {line}: ")
    assert words in sentence
    assert "\n" not in sentence
    assert isinstance(error, InputError) and (error.column, error.row) == (field, line)


def test_broken_yaml_names_the_line():
    error = error_of(BASE + "bootstrap: {resamples: 10000\n")
    assert error.line is not None and error.line >= 14
    assert "not valid YAML" in str(error)


def test_a_document_that_is_not_a_mapping_is_refused():
    assert "must be a mapping" in str(error_of("- just\n- a list\n"))
    assert "empty" in str(error_of("# only a comment\n"))


def test_load_design_uses_the_file_stem_and_label(tmp_path):
    path = tmp_path / "rerank.yaml"
    path.write_text(BASE, encoding="utf-8")
    assert load_design(path).experiment == "rerank"
    wrong = tmp_path / "other.yaml"
    wrong.write_text(BASE, encoding="utf-8")
    with pytest.raises(DesignError, match="experiments/other.yaml, field 'experiment', line 2"):
        load_design(wrong, label="experiments/other.yaml")
    with pytest.raises(DesignError, match="not found"):
        load_design(tmp_path / "absent.yaml")


# -- power planning -----------------------------------------------------------------------

def reference_binary_limit(n, rate, alpha=0.05, power=0.80):
    """The effect at which the readout's rule (exact McNemar p < alpha and Tango's interval
    clear of 0, i.e. (d − 2k)² > z²·d for k of d flips on the losing side) has ``power``, at
    the discordant rate max(U, effect), U the Wilson upper bound from statsmodels
    (proportion_confint(rate * n, n, method="wilson")), solved with scipy.optimize.brentq
    over powers summed with scipy.stats.binom (ARCHITECTURE §6)."""
    n = int(n)
    upper = proportion_confint(rate * n, n, alpha=alpha, method="wilson")[1]
    z2 = stats.norm.ppf(1 - alpha / 2) ** 2
    flips = np.arange(1, n + 1)
    cut = np.full(n, -1)
    for i, d in enumerate(flips):
        k = np.arange(d // 2 + 1)
        ok = (2 * stats.binom.cdf(k, d, 0.5) < alpha) & ((d - 2 * k) ** 2 > z2 * d)
        cut[i] = k[ok].max() if ok.any() else -1

    def power_at(effect):
        psi = max(upper, effect)
        reads = np.where(cut >= 0, stats.binom.cdf(cut, flips, (psi - effect) / (2 * psi)), 0.0)
        return float(np.sum(stats.binom.pmf(flips, n, psi) * reads)) - power

    return optimize.brentq(power_at, 1e-6, 1.0, xtol=1e-13)


def test_plan_reports_the_limit_for_the_suite_at_the_assumed_rate():
    design = parse(BASE + "assumed_discordant_rate: 0.2\n")
    plan = plan_power(design, 90)
    assert plan.detection_limit == pytest.approx(reference_binary_limit(90, 0.2), rel=1e-8)
    assert plan.source == "design field 'assumed_discordant_rate'"
    assert plan.underpowered is False and plan.shortfalls == ()
    assert plan.underpowered_record() is None


def test_a_margin_below_the_limit_says_how_many_goldens_would_reach_it():
    design = parse(edited("kind: superiority", "kind: non_inferiority")
                   + "margin: 0.05\ntarget_effect: 0.3\nassumed_discordant_rate: 0.2\n")
    plan = plan_power(design, 90)
    assert plan.underpowered is True
    (shortfall,) = plan.shortfalls  # the target 0.3 is within reach; only the margin is not
    assert shortfall.field == "margin"
    needed = shortfall.goldens_needed
    assert reference_binary_limit(needed, 0.2) <= 0.05 < reference_binary_limit(needed - 1, 0.2)
    assert f"needs about {needed} goldens" in plan.sentence and "UNDERPOWERED" in plan.sentence
    record = plan.underpowered_record()
    assert record["shortfalls"][0]["goldens_needed"] == needed and record["n_goldens"] == 90


def test_continuous_primary_plans_with_the_spread_of_differences():
    design = parse(edited("primary: pass_rate", "primary: recall")
                   + "assumed_sd: 0.3\ntarget_effect: 0.02\n")
    plan = plan_power(design, 400)
    z = stats.norm.ppf(0.975) + stats.norm.ppf(0.8)
    assert plan.scale == "sd"
    assert plan.detection_limit == pytest.approx(z * 0.3 / math.sqrt(400), rel=1e-12)
    (shortfall,) = plan.shortfalls
    assert shortfall.goldens_needed == math.ceil((z * 0.3 / 0.02) ** 2)


def test_plan_is_unknown_without_goldens_or_an_assumption():
    design = parse(BASE)
    assert plan_power(design, 90).underpowered is None
    assert "assumed_discordant_rate" in plan_power(design, 90).sentence
    assert plan_power(design, None, missing="no goldens yet").sentence.endswith("no goldens yet")


def write(path, text):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def test_assess_power_counts_goldens_and_measures_the_rate_from_an_earlier_readout(tmp_path):
    workspace = Workspace(tmp_path)
    write(tmp_path / "experiments" / "rerank.yaml", BASE)
    write(tmp_path / "goldens" / "qa.jsonl",
          "".join(json.dumps({"example_id": f"q{i}", "input": "?"}) + "\n" for i in range(120)))
    design = load_design(tmp_path / "experiments" / "rerank.yaml")
    assert count_goldens(workspace, "qa") == 120
    assert assess_power(workspace, design).underpowered is None  # nothing to assume yet

    readout = {"format": 1, "experiment": "older", "version": 1,
               "design": {"suite": "qa"}, "created_at": "2024-01-01T00:00:00Z",
               "primary": {"metric": "pass_rate", "n": 100, "broke": 9, "fixed": 6}}
    write(tmp_path / "reports" / "older" / "v1" / "readout.json", json.dumps(readout))
    # Readouts carry no clock of their own; the version's manifest says when it was taken.
    newer = {key: value for key, value in readout.items() if key != "created_at"}
    newer.update(version=2, primary={"metric": "pass_rate", "n": 100, "broke": 20, "fixed": 5})
    write(tmp_path / "reports" / "older" / "v2" / "readout.json", json.dumps(newer))
    write(tmp_path / "reports" / "older" / "v2" / "manifest.json",
          json.dumps({"created_at": "2024-02-01T00:00:00Z"}))
    other_suite = dict(newer, design={"suite": "chat"}, created_at="2025-01-01T00:00:00Z")
    write(tmp_path / "reports" / "chat" / "v1" / "readout.json", json.dumps(other_suite))

    measured = measured_assumption(workspace, design)
    assert measured.value == pytest.approx(0.25)  # (20 + 5) / 100, the latest on suite qa
    assert measured.source == "measured in reports/older/v2/readout.json"
    plan = assess_power(workspace, design)
    assert plan.n_goldens == 120 and plan.assumed == pytest.approx(0.25)
    assert plan.detection_limit == pytest.approx(reference_binary_limit(120, 0.25), rel=1e-8)


def test_the_design_field_wins_over_a_measured_rate(tmp_path):
    workspace = Workspace(tmp_path)
    write(tmp_path / "goldens" / "qa.jsonl", '{"example_id": "q1"}\n{"example_id": "q2"}\n')
    readout = {"experiment": "older", "design": {"suite": "qa"},
               "primary": {"metric": "pass_rate", "n": 10, "broke": 5, "fixed": 0}}
    write(tmp_path / "reports" / "older" / "v1" / "readout.json", json.dumps(readout))
    design = parse(BASE + "assumed_discordant_rate: 0.1\n")
    assert assess_power(workspace, design).assumed == 0.1


def test_goldens_without_example_id_are_an_input_error(tmp_path):
    write(tmp_path / "goldens" / "qa.jsonl", '{"input": "?"}\n')
    with pytest.raises(InputError, match="column 'example_id'"):
        count_goldens(Workspace(tmp_path), "qa")


def test_a_suite_too_small_for_the_exact_test_plans_no_limit_and_says_so():
    design = parse(BASE + "assumed_discordant_rate: 0.2\ntarget_effect: 0.3\n")
    plan = plan_power(design, 5)
    assert plan.detection_limit == math.inf and plan.underpowered is True
    assert "can detect is nothing (too few goldens for the exact test ever to decide)" in \
        plan.sentence
    record = plan.underpowered_record()
    assert record["detection_limit"] is None
    json.dumps(record, allow_nan=False)  # no Infinity in an approval file
