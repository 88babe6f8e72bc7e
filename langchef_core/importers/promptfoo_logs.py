"""promptfoo results (``promptfoo eval -o results.json``), parsed as plain JSON.

- One arm is one (prompt × provider) column of an eval: when the file holds several,
  name the provider's label (or id) to import;
- a test's id is ``testCase.metadata.id``, else ``vars.id``, else its ``description``, else a
  hash of its vars; its input is the vars as canonical JSON (no ideal: the expected values
  live in the assertions, which are part of the judge);
- each assertion is a criterion, named by its ``metric`` or else its ``type`` (a second
  assertion of one type in one test gets ``#2``); it passes as promptfoo graded it
  (``componentResults[j].pass``), and its ``score`` is kept;
- ``repeat: k`` writes k rows per test with no repeat index: they are the test's epochs in
  the order promptfoo numbered them (``testIdx``);
- a provider error (``failureReason`` 2) is not a verdict: the import is refused, naming the
  test, so an outage never counts as a regression;
- traffic time is the eval's ``results.timestamp`` (no per-row time is recorded); latency
  ``latencyMs``, cost ``cost``; the judge id hashes every test's assertions as configured
  (type, unrendered value, metric, threshold).
"""

from __future__ import annotations

import json
from pathlib import Path

from ..inputs.errors import InputError
from ..scoring.judges.base import canonical_json, sha256_hex
from .common import (ImportedLog, ToolSample, checked_samples, derived_judge_id,
                     iso_with_zone, text_of)

TOOL = "promptfoo"
PROVIDER_ERROR = 2


def read_promptfoo_log(paths, *, provider: str | None = None) -> ImportedLog:
    """One arm from promptfoo results file(s)."""
    paths = [Path(path) for path in ([paths] if isinstance(paths, (str, Path)) else paths)]
    samples, assertions, datasets = [], {}, set()
    for path in paths:
        document = _document(path)
        created = iso_with_zone(document["results"].get("timestamp")) or iso_with_zone(
            (document.get("metadata") or {}).get("evaluationCreatedAt"))
        rows = _chosen_rows(document["results"], provider, path)
        tests = document.get("config", {}).get("tests")
        datasets.add(tests if isinstance(tests, str) else None)
        counts: dict[str, int] = {}
        for row in sorted(rows, key=lambda r: (r.get("testIdx", 0), r.get("promptIdx", 0))):
            example_id = _test_id(row)
            counts[example_id] = counts.get(example_id, 0) + 1
            samples.append(_sample(row, example_id, counts[example_id], created, path))
            assertions.setdefault(example_id, _configured(row))
    source = ", ".join(str(path) for path in paths)
    checked = checked_samples(TOOL, source, samples)
    scorers = tuple(dict.fromkeys(name for sample in checked for name in sample.scores))
    return ImportedLog(tool=TOOL, source=source, samples=checked, scorers=scorers,
                       judge_id=derived_judge_id(TOOL, dict(sorted(assertions.items()))),
                       dataset=next(iter(datasets)) if len(datasets) == 1 else None,
                       suite=None)


def _document(path: Path) -> dict:
    if not path.is_file():
        raise InputError("no such results file", file=str(path),
                         hint="pass the file `promptfoo eval -o results.json` wrote")
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise InputError(f"not valid JSON ({error})", file=str(path),
                         hint="write the results with -o results.json (not .jsonl/.csv/.html)") \
            from None
    results = document.get("results") if isinstance(document, dict) else None
    if not isinstance(results, dict) or not isinstance(results.get("results"), list):
        raise InputError("not a promptfoo results file (no results.results list)", file=str(path),
                         hint="write the results with promptfoo eval -o results.json")
    if results.get("version", 3) < 3:
        raise InputError(f"results format version {results.get('version')} is not supported",
                         file=str(path), hint="re-run the eval with promptfoo 0.60 or newer")
    return document


def _column(row: dict) -> tuple:
    found = row.get("provider") or {}
    return (row.get("promptIdx", 0), found.get("label") or found.get("id"), found.get("id"))


def _chosen_rows(results: dict, provider: str | None, path: Path) -> list[dict]:
    rows = [row for row in results["results"] if isinstance(row, dict)]
    columns = sorted({_column(row) for row in rows}, key=str)
    if provider is not None:
        rows = [row for row in rows if provider in _column(row)[1:]]
        if not rows:
            raise InputError(f"no results from provider {provider!r}; the file has "
                             f"{sorted({c[1] for c in columns})}", file=str(path),
                             hint="name one of those provider labels")
        columns = sorted({_column(row) for row in rows}, key=str)
    if len(columns) > 1:
        labels = sorted({str(c[1]) for c in columns})
        raise InputError(f"this eval compared {len(columns)} prompt/provider columns "
                         f"({', '.join(labels)}); one arm is one of them", file=str(path),
                         hint="name the provider label to import (--provider LABEL), once per "
                              "arm" if len(labels) > 1 else
                              "split the prompts into one eval per arm")
    return rows


def _test_id(row: dict) -> str:
    case = row.get("testCase") or {}
    variables = row.get("vars") or case.get("vars") or {}
    for value in ((case.get("metadata") or {}).get("id"), variables.get("id"),
                  case.get("description")):
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            return str(value)
    return "vars:" + sha256_hex(canonical_json(variables))[:12]


def _sample(row: dict, example_id: str, epoch: int, created, path: Path) -> ToolSample:
    where = f"test {example_id!r}" + (f" (repeat {epoch})" if epoch > 1 else "")
    grading = row.get("gradingResult")
    if row.get("failureReason") == PROVIDER_ERROR or grading is None:
        message = str(row.get("error") or (row.get("response") or {}).get("error") or
                      "no grading result").splitlines()[0]
        raise InputError(f"{where}: the provider failed ({message}), so there is no verdict",
                         file=str(path), hint="fix the provider and re-run the eval; an error "
                                              "is not a failed answer")
    scores, seen = {}, {}
    for component in grading.get("componentResults") or []:
        assertion = component.get("assertion") or {}
        base = str(assertion.get("metric") or assertion.get("type") or "assertion")
        seen[base] = seen.get(base, 0) + 1
        name = base if seen[base] == 1 else f"{base}#{seen[base]}"
        score = component.get("score")
        scores[name] = (bool(component.get("pass")),
                        float(score) if isinstance(score, (int, float)) else None)
    if not scores:  # a test without assertions: promptfoo's own success is the only verdict
        scores["success"] = (bool(row.get("success")), float(row.get("score") or 0.0))
    response = row.get("response") or {}
    case = row.get("testCase") or {}
    return ToolSample(example_id=example_id, epoch=epoch,
                      input=text_of(row.get("vars") or case.get("vars") or {}), ideal=None,
                      output=text_of(response.get("output")), scores=scores, created_at=created,
                      latency_ms=_number(row.get("latencyMs")), cost_usd=_number(row.get("cost")))


def _configured(row: dict) -> list:
    """A test's assertions as written (unrendered), which decide its verdicts."""
    case = row.get("testCase") or {}
    return [{key: entry.get(key) for key in ("type", "value", "metric", "threshold")}
            for entry in case.get("assert") or [] if isinstance(entry, dict)]


def _number(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None
