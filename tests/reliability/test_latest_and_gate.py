"""Issue 13, defects 2 and 4: `latest` names the readout of the current inputs, and
`langchef gate` re-derives every decision instead of trusting labels."""

from __future__ import annotations

import hashlib
import json

import pytest

from tests.core.test_report_render import regression_readout

from .conftest import one_sentence, recorded_workspace, rewrite_runs


@pytest.mark.slow  # three readouts through Dagster
def test_latest_returns_to_v1_when_the_data_is_reverted(langchef, tmp_path):
    root = tmp_path / "evals"
    recorded_workspace(root, broke=12)  # data A: a regression

    def readout_then_gate():
        taken = langchef("readout", "short-prompt", "--workspace", root, "--json")
        assert taken.code == 0, taken.stderr
        gate = langchef("gate", root / "reports" / "short-prompt" / "latest" / "readout.json")
        return taken.json["version"], gate.code

    assert readout_then_gate() == (1, 1)          # A → v1, the gate fails
    rewrite_runs(root, broke=0)                   # data B: nothing changed
    assert readout_then_gate() == (2, 0)          # B → v2, the gate passes
    rewrite_runs(root, broke=12)                  # back to data A
    assert readout_then_gate() == (1, 1)          # identical to v1: latest is v1 again
    readout = json.loads((root / "reports" / "short-prompt" / "latest" / "readout.json")
                         .read_text(encoding="utf-8"))
    # The approval time a readout carries is the ledger's.
    assert readout["design"]["approved_at"] == "2026-01-05T12:00:00Z"


def write_version(tmp_path, readout: dict, *, manifest_sha: str | None = "match"):
    folder = tmp_path / "reports" / "stale-index" / "v1"
    folder.mkdir(parents=True, exist_ok=True)
    body = (json.dumps(readout, indent=2) + "\n").encode("utf-8")
    (folder / "readout.json").write_bytes(body)
    if manifest_sha is not None:
        digest = hashlib.sha256(body).hexdigest() if manifest_sha == "match" else manifest_sha
        (folder / "manifest.json").write_text(json.dumps({"files": {"readout.json": digest}}))
    return folder / "readout.json"


def test_a_regression_relabelled_inconclusive_is_refused(langchef, tmp_path):
    readout = regression_readout()
    readout["primary"]["verdict"] = "inconclusive"
    readout["gate"] = {"passed": True, "reasons": []}
    result = langchef("gate", write_version(tmp_path, readout))
    assert result.code == 2 and result.stdout == ""
    sentence = one_sentence(result.stderr)
    # The interval is issue 12's Tango interval of 18 broke / 0 fixed of 90 (the golden readout).
    assert "column 'primary.verdict': says 'inconclusive', but its interval [-0.2941, -0.1304] " \
           "makes it 'regression'" in sentence


def test_the_manifest_hash_is_checked_when_present(langchef, tmp_path):
    path = write_version(tmp_path, regression_readout())
    assert langchef("gate", path).code == 1  # the untouched regression: not passed
    path.write_text(path.read_text(encoding="utf-8").replace('"version": 1', '"version": 2'),
                    encoding="utf-8")
    result = langchef("gate", path)
    assert result.code == 2
    assert "manifest.json, column 'files.readout.json': its SHA-256 of readout.json does not " \
           "match" in one_sentence(result.stderr)


@pytest.mark.parametrize("text, words", [
    ("[" * 100_000 + "]" * 100_000, "nested too deeply"),
    ('{"format": 1, "gate": ' * 3000 + "1" + "}" * 3000, "nested too deeply"),
    ("\xff\xfe not text", "is not valid JSON"),
])
def test_malformed_or_deep_json_is_one_sentence_exit_2(langchef, tmp_path, text, words):
    path = tmp_path / "readout.json"
    path.write_bytes(text.encode("latin-1"))
    result = langchef("gate", path)
    assert result.code == 2 and "Traceback" not in result.stderr
    assert words in one_sentence(result.stderr)


def _five_fixed_readout(verdict: str) -> dict:
    """0 broke / 5 fixed of 90 (the spec's Correctness line): Tango's interval clears zero,
    but the exact McNemar p = 0.0625 is not below 0.05, so the verdict is inconclusive by the
    minimum-evidence rule (issue 12) — and the gate must re-derive that rule, not just the
    interval."""
    import langchef_core as lc

    before = [False] * 5 + [True] * 80 + [False] * 5
    after = [True] * 5 + [True] * 80 + [False] * 5
    primary = lc.compare_binary(before, after).to_dict()
    assert primary["low"] > 0 and primary["verdict"] == "inconclusive" and primary["evidence"]
    readout = regression_readout()
    readout["primary"] = {**primary, "metric": "pass_rate", "verdict": verdict}
    readout["gate"] = {"passed": True, "reasons": []}
    return readout


def test_an_interval_off_zero_without_the_exact_test_is_inconclusive_to_the_gate(langchef, tmp_path):
    honest = langchef("gate", write_version(tmp_path / "a", _five_fixed_readout("inconclusive")))
    assert honest.code == 0, honest.stderr
    forged = langchef("gate", write_version(tmp_path / "b", _five_fixed_readout("improvement")))
    assert forged.code == 2
    assert "says 'improvement'" in one_sentence(forged.stderr)
    assert "makes it 'inconclusive'" in one_sentence(forged.stderr)
