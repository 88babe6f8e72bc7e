"""`langchef gate PATH`: exit 0 passed, 1 not passed, 2 unreadable, malformed or forged.

Every rule of the decision is tested on `readout_gate` in tests/core/test_gates.py; here the
console script's exit codes and output, one case per outcome.
"""

import hashlib
import json

import pytest

from .conftest import one_sentence


INTERVALS = {"improvement": (0.1, 0.02, 0.18), "regression": (-0.2, -0.278, -0.122),
             "inconclusive": (-0.01, -0.04, 0.02)}


def readout(verdict="improvement", noninferiority=None, passed=True, reasons=(),
            guardrails=None, kind="superiority"):
    difference, low, high = INTERVALS[verdict]
    document = {"format": 1, "experiment": "rerank", "version": 3,
                "design": {"sha256": "a" * 64, "kind": kind},
                "primary": {"metric": "pass_rate", "verdict": verdict,
                            "noninferiority": noninferiority,
                            "margin": 0.03 if noninferiority else None,
                            "difference": difference, "low": low, "high": high},
                "warnings": [], "gate": {"passed": passed, "reasons": list(reasons)}}
    if guardrails is not None:
        document["guardrails"] = guardrails
    return document


def write(tmp_path, document, name="readout.json"):
    """The readout in a version folder with the manifest publishing writes beside it (no
    ledger: the folder is not a workspace, so the gate checks the manifest alone)."""
    path = tmp_path / "reports" / "rerank" / "v3" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(document if isinstance(document, str) else json.dumps(document),
                    encoding="utf-8")
    write_manifest(path)
    return path


def write_manifest(path):
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    path.with_name("manifest.json").write_text(json.dumps({"files": {"readout.json": digest}}),
                                               encoding="utf-8")


CASES = [
    ("improvement passes", readout(), [], 0, "PASSED: rerank v3"),
    ("regression fails", readout("regression", passed=False, reasons=["pass_rate regressed"]),
     [], 1, "pass_rate regressed"),
    ("guardrail breach fails",
     readout(passed=False, reasons=["guardrail breached: p95 of latency_ms"],
             guardrails=[{"kind": "cost", "metric": "latency_ms", "statistic": "p95",
                          "breached": True, "relative_low": 0.2, "max_increase": 0.1}]),
     [], 1, "p95 of latency_ms"),
    ("inconclusive fails on request", readout("inconclusive"), ["--fail-on-inconclusive"], 1,
     "inconclusive"),
]


@pytest.mark.parametrize("case, document, flags, code, words", CASES, ids=[c[0] for c in CASES])
def test_gate_exit_code_follows_the_readout(langchef, tmp_path, case, document, flags, code,
                                            words):
    path = write(tmp_path, document)
    result = langchef("gate", path, *flags)
    assert result.code == code, result.stderr
    assert words in result.stdout and result.stderr == ""


def test_a_forged_readout_that_passes_against_its_own_verdict_is_refused(langchef, tmp_path):
    path = write(tmp_path, readout("regression", passed=True))
    result = langchef("gate", path)
    assert result.code == 2 and result.stdout == ""
    sentence = one_sentence(result.stderr)
    assert "column 'gate.passed'" in sentence and "own content fails it" in sentence


def test_a_file_that_is_not_json_is_exit_2(langchef, tmp_path):
    # Which fields a readout must have is tested on readout_gate itself (tests/core).
    result = langchef("gate", write(tmp_path, "{not json"))
    assert result.code == 2 and "is not valid JSON" in one_sentence(result.stderr)


def published(root, document):
    """``document`` published as langchef does: a version folder, its manifest and the
    workspace ledger's publication row."""
    from datetime import datetime, timezone

    from langchef_core.designs.ledger import Ledger
    from langchef_core.inputs.workspace import Workspace
    from langchef_core.readout.publish import publish_readout

    workspace = Workspace(root)
    with Ledger.for_workspace(workspace) as ledger:
        return publish_readout(workspace.reports, {**document, "inputs": {"sha256": "b" * 64}},
                               ledger=ledger,
                               created_at=datetime(2026, 1, 5, 12, tzinfo=timezone.utc),
                               render_html=lambda readout, created_at: "<p>page</p>")


def test_paths_folders_workspace_and_json(langchef, tmp_path, monkeypatch):
    monkeypatch.delenv("LANGCHEF_DATABASE_URL", raising=False)
    published(tmp_path, readout("regression", passed=False, reasons=["pass_rate regressed"]))
    result = langchef("gate", "reports/rerank/v1", "--workspace", tmp_path, "--json",
                      cwd=tmp_path / "reports")
    assert result.code == 1, result.stderr
    assert result.json["passed"] is False and result.json["reasons"] == ["pass_rate regressed"]
    assert result.json["file"].endswith("reports/rerank/v1/readout.json")
    assert result.json["verification"]["ledger"].endswith("langchef.sqlite")
    missing = langchef("gate", tmp_path / "nowhere.json")
    assert missing.code == 2 and "no readout.json found" in one_sentence(missing.stderr)


def test_relative_paths_are_found_in_the_default_workspace(langchef, tmp_path, monkeypatch):
    """`langchef readout` publishes under ./evals by default, and the gate finds
    reports/NAME/vN there, as it finds it under --workspace or $LANGCHEF_WORKSPACE."""
    monkeypatch.delenv("LANGCHEF_DATABASE_URL", raising=False)
    monkeypatch.delenv("LANGCHEF_WORKSPACE", raising=False)
    published(tmp_path / "evals", readout("regression", passed=False, reasons=["pass_rate regressed"]))
    result = langchef("gate", "reports/rerank/v1", "--json", cwd=tmp_path)
    assert result.code == 1, result.stderr
    assert result.json["file"] == str(tmp_path / "evals" / "reports/rerank/v1/readout.json")
    assert result.json["verification"]["ledger"].endswith("langchef.sqlite")
    elsewhere = langchef("gate", "reports/rerank/v1", "--workspace", tmp_path / "other", cwd=tmp_path)
    assert elsewhere.code == 2 and "no readout.json found" in one_sentence(elsewhere.stderr)


def test_there_is_no_override(langchef, tmp_path):
    result = langchef("gate", write(tmp_path, readout("regression", passed=False,
                                                      reasons=["pass_rate regressed"])),
                      "--override")
    assert result.code == 2 and "unrecognized arguments: --override" in result.stderr
