"""langchef_core: a paired, pre-registered comparison of two arms, in plain Python.

Numpy, scipy, pandas, pandera and jinja2; never dagster, so every number the pipeline reports
can be reproduced from a notebook or a test. The map of its folders (what each holds and may
import) is langchef_core/README.md; the public names below are the API of ARCHITECTURE §5.

The names load on first use (PEP 562), so a command that needs one small module — `langchef
gate` reads a readout with the standard library and numpy — does not pay for pandas, scipy,
pandera and jinja2 it never touches.
"""

from importlib import import_module

from ._version import __version__

# module (relative to this package) → the public names it provides
_MODULES = {
    "demo": ("DemoManifest", "build_demo_workspace"),
    "designs.approval": ("Approval", "ApprovalOutcome", "ApprovalStatus", "approval_status",
                         "approve", "read_approval"),
    "designs.gate_checks": ("GateCheck", "GateRefusal", "GateResult", "Refusal"),
    "designs.gates": ("arms_match_design", "check_gates", "design_is_approved", "judge_is_pinned",
                      "runs_are_complete"),
    "designs.ledger": ("Ledger", "LedgerEntry", "Looks", "fingerprint_files"),
    "designs.model": ("Design", "DesignError", "canonical_json"),
    "designs.parse": ("load_design", "parse_design", "validate_design"),
    "designs.power_plan": ("PowerPlan", "assess_power", "plan_power"),
    "designs.traffic": ("approved_before_traffic",),
    "importers": ("ImportResult", "ImportedLog", "read_inspect_log", "read_lm_eval_log",
                  "read_promptfoo_log", "write_import"),
    "inputs.schemas": ("SchemaViolation", "read_input", "validate_table"),
    "readout.gate": ("ReadoutGate", "readout_gate"),
    "report": ("render_index", "render_report", "template_sha256", "write_index"),
    "scoring.classification": ("ClassCounts", "ClassificationComparison", "classification_correct",
                               "classification_outcomes", "compare_classification",
                               "normalize_label"),
    "scoring.judges": ("Judge", "JudgeError", "Judgement", "OpenAICompatibleJudge",
                       "ImportedJudge", "RecordedJudge", "RubricJudge", "build_judge"),
    "scoring.retrieval": ("ChanceLevels", "Coverage", "CoverageCheck", "Judgements",
                          "MetricComparison", "MetricSummary", "PoolCheck", "QueryMetrics",
                          "RankedRun", "RetrievalComparison", "RetrievalSettings",
                          "RetrievalSummary", "ZeroPositiveGroup", "apply_zero_positive_policy",
                          "arm_run_to_long", "chance_levels", "check_pools",
                          "check_zero_positive_coverage", "compare_retrieval",
                          "hit_chance_one_positive", "retrieval_metrics",
                          "retrieval_metrics_arrays", "summarize_retrieval"),
    "stats.agreement": ("Agreement", "CriterionAgreement", "Rate", "agreement"),
    "stats.attribution": ("Attribution", "Unattributed", "attribute"),
    "stats.costs": ("CostComparison", "CostStatistic", "GuardrailCheck", "GuardrailResult",
                    "check_guardrails", "compare_cost", "guardrail_from_interval"),
    "stats.drift": ("Drift", "DriftStatus", "FlippedAnchor", "drift", "drift_status"),
    "stats.intervals": ("wilson_interval",),
    "stats.length_bias": ("LengthBias", "length_bias"),
    "stats.mcnemar": ("mcnemar_clustered", "mcnemar_exact"),
    "stats.multiplicity": ("holm",),
    "stats.paired": ("BinaryComparison", "ContinuousComparison", "compare_binary",
                     "compare_continuous", "noninferiority_from_interval", "verdict_from_interval"),
    "stats.power": ("continuous_detection_limit", "detection_limit", "goldens_needed",
                    "goldens_needed_continuous", "limit_at_rate"),
    "stats.slices": ("ExploratorySlice", "SliceAnalysis", "SliceResult", "WeightedDifference",
                     "compare_slices"),
    "stats.training_runs": ("SeedAnalysis", "SeedComparison", "SeedRefusal", "SeedSpread",
                            "compare_seeds", "parse_seed_run"),
}
_HOME = {name: module for module, names in _MODULES.items() for name in names}

__all__ = [
    "Agreement", "CriterionAgreement", "Drift", "DriftStatus", "FlippedAnchor", "LengthBias",
    "Rate", "agreement", "drift", "drift_status", "length_bias",
    "Attribution", "BinaryComparison", "ContinuousComparison", "Unattributed", "attribute",
    "compare_binary", "compare_continuous", "continuous_detection_limit", "detection_limit",
    "goldens_needed", "goldens_needed_continuous", "holm", "limit_at_rate", "mcnemar_clustered",
    "mcnemar_exact", "noninferiority_from_interval", "verdict_from_interval", "wilson_interval",
    "CostComparison", "CostStatistic", "GuardrailCheck", "GuardrailResult", "check_guardrails",
    "compare_cost", "guardrail_from_interval",
    "SeedAnalysis", "SeedComparison", "SeedRefusal", "SeedSpread", "compare_seeds",
    "parse_seed_run",
    "ExploratorySlice", "SliceAnalysis", "SliceResult", "WeightedDifference", "compare_slices",
    "Design", "DesignError", "PowerPlan", "assess_power", "canonical_json", "load_design",
    "parse_design", "plan_power", "validate_design",
    "Approval", "ApprovalOutcome", "ApprovalStatus", "approval_status", "approve", "read_approval",
    "GateCheck", "GateRefusal", "GateResult", "ReadoutGate", "Refusal", "approved_before_traffic",
    "arms_match_design", "check_gates", "design_is_approved", "judge_is_pinned", "readout_gate",
    "runs_are_complete",
    "Ledger", "LedgerEntry", "Looks", "fingerprint_files",
    "ChanceLevels", "Coverage", "CoverageCheck", "Judgements", "MetricComparison",
    "MetricSummary", "PoolCheck", "QueryMetrics", "RankedRun", "RetrievalComparison",
    "RetrievalSettings", "RetrievalSummary", "ZeroPositiveGroup", "apply_zero_positive_policy",
    "arm_run_to_long", "chance_levels", "check_pools", "check_zero_positive_coverage",
    "compare_retrieval", "hit_chance_one_positive", "retrieval_metrics",
    "retrieval_metrics_arrays", "summarize_retrieval",
    "ClassCounts", "ClassificationComparison", "classification_correct", "classification_outcomes",
    "compare_classification", "normalize_label",
    "Judge", "JudgeError", "Judgement", "OpenAICompatibleJudge", "RecordedJudge",
    "RubricJudge", "build_judge", "DemoManifest", "build_demo_workspace",
    "render_index", "render_report", "template_sha256", "write_index",
    "SchemaViolation", "read_input", "validate_table",
    "ImportResult", "ImportedJudge", "ImportedLog", "read_inspect_log", "read_lm_eval_log",
    "read_promptfoo_log", "write_import",
]


def __getattr__(name: str):
    module = _HOME.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value  # later look-ups skip this function
    return value


def __dir__():
    return sorted([*globals(), *_HOME])
