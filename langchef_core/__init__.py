"""langchef_core: a paired, pre-registered comparison of two arms, in plain Python.

Numpy, scipy, pandas, pandera and jinja2; never dagster, so every number the pipeline reports
can be reproduced from a notebook or a test. The map of its folders (what each holds and may
import) is langchef_core/README.md; the public names below are the API of ARCHITECTURE §5.
"""

from ._version import __version__
from .demo import DemoManifest, build_demo_workspace
from .designs.approval import (Approval, ApprovalOutcome, ApprovalStatus, approval_status, approve,
                               read_approval)
from .designs.gate_checks import GateCheck, GateRefusal, GateResult, Refusal
from .designs.gates import (arms_match_design, check_gates, design_is_approved, judge_is_pinned,
                            runs_are_complete)
from .designs.ledger import Ledger, LedgerEntry, Looks, fingerprint_files
from .designs.model import Design, DesignError, canonical_json
from .designs.parse import load_design, parse_design, validate_design
from .designs.power_plan import PowerPlan, assess_power, plan_power
from .designs.traffic import approved_before_traffic
from .inputs.schemas import SchemaViolation, read_input, validate_table
from .readout.gate import ReadoutGate, readout_gate
from .report import render_index, render_report, template_sha256, write_index
from .scoring.classification import (ClassCounts, ClassificationComparison, classification_correct,
                                     classification_outcomes, compare_classification,
                                     normalize_label)
from .scoring.judges import (Judge, JudgeError, Judgement, OpenAICompatibleJudge, RecordedJudge,
                             RubricJudge, build_judge)
from .scoring.retrieval import (ChanceLevels, Coverage, CoverageCheck, Judgements,
                                MetricComparison, MetricSummary, PoolCheck, QueryMetrics,
                                RankedRun, RetrievalComparison, RetrievalSettings,
                                RetrievalSummary, ZeroPositiveGroup, apply_zero_positive_policy,
                                arm_run_to_long, chance_levels, check_pools,
                                check_zero_positive_coverage, compare_retrieval,
                                hit_chance_one_positive, retrieval_metrics,
                                retrieval_metrics_arrays, summarize_retrieval)
from .stats.agreement import Agreement, CriterionAgreement, Rate, agreement
from .stats.attribution import Attribution, Unattributed, attribute
from .stats.costs import (CostComparison, CostStatistic, GuardrailCheck, GuardrailResult,
                          check_guardrails, compare_cost, guardrail_from_interval)
from .stats.drift import Drift, DriftStatus, FlippedAnchor, drift, drift_status
from .stats.intervals import wilson_interval
from .stats.length_bias import LengthBias, length_bias
from .stats.mcnemar import mcnemar_clustered, mcnemar_exact
from .stats.multiplicity import holm
from .stats.paired import (BinaryComparison, ContinuousComparison, compare_binary,
                           compare_continuous, noninferiority_from_interval, verdict_from_interval)
from .stats.power import (continuous_detection_limit, detection_limit, goldens_needed,
                          goldens_needed_continuous, limit_at_rate)
from .stats.slices import (ExploratorySlice, SliceAnalysis, SliceResult, WeightedDifference,
                           compare_slices)
from .stats.training_runs import (SeedAnalysis, SeedComparison, SeedRefusal, SeedSpread,
                                  compare_seeds, parse_seed_run)

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
]
