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
  the order promptfoo numbered them (``testIdx``). Two rows of one test with one ``testIdx``,
  or a test with more rows than the others, are an edited or concatenated file: refused,
  naming both rows (``results.results[i]``) and what differs;
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
from .checks import checked_samples, log_paths
from .common import ImportedLog, ToolSample, derived_judge_id, iso_with_zone, text_of

TOOL = "promptfoo"
PROVIDER_ERROR = 2


def read_promptfoo_log(paths, *, provider: str | None = None) -> ImportedLog:
    """One arm from promptfoo results file(s)."""
    paths = log_paths(paths)
    samples, assertions, datasets, repeats = [], {}, set(), {}
    for path in paths:
        document = _document(path)
        created = iso_with_zone(document["results"].get("timestamp")) or iso_with_zone(
            (document.get("metadata") or {}).get("evaluationCreatedAt"))
        rows = _chosen_rows(document["results"], provider, path)
        tests = document.get("config", {}).get("tests")
        datasets.add(tests if isinstance(tests, str) else None)
        repeats[path] = _repeat(document, rows, path)
        epochs = _epochs(rows)
        for index, row in sorted(rows.items(), key=lambda item: _order(item[1])):
            example_id = _test_id(row)
            samples.append(_sample(row, example_id, epochs[index], created,
                                   (str(path), f"results.results[{index}]")))
            assertions.setdefault(example_id, _configured(row))
    source = ", ".join(str(path) for path in paths)
    checked = checked_samples(TOOL, source, samples)
    for path, repeat in repeats.items():
        if repeat is not None and len({sample.epoch for sample in checked}) > repeat:
            raise InputError(f"each test has {len({s.epoch for s in checked})} rows, but the eval "
                             f"ran with repeat {repeat}", file=str(path),
                             hint="a results file holds each test once per repeat: import it as "
                                  "promptfoo wrote it (not concatenated or edited)")
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


def _chosen_rows(results: dict, provider: str | None, path: Path) -> dict[int, dict]:
    """The rows of the one column to import, by their index in ``results.results``."""
    rows = {index: row for index, row in enumerate(results["results"]) if isinstance(row, dict)}
    columns = sorted({_column(row) for row in rows.values()}, key=str)
    if provider is not None:
        rows = {index: row for index, row in rows.items() if provider in _column(row)[1:]}
        if not rows:
            raise InputError(f"no results from provider {provider!r}; the file has "
                             f"{sorted({c[1] for c in columns})}", file=str(path),
                             hint="name one of those provider labels")
        columns = sorted({_column(row) for row in rows.values()}, key=str)
    if len(columns) > 1:
        labels = sorted({str(c[1]) for c in columns})
        raise InputError(f"this eval compared {len(columns)} prompt/provider columns "
                         f"({', '.join(labels)}); one arm is one of them", file=str(path),
                         hint="name the provider label to import (--provider LABEL), once per "
                              "arm" if len(labels) > 1 else
                              "split the prompts into one eval per arm")
    return rows


def _repeat(document: dict, rows: dict[int, dict], path: Path) -> int | None:
    """How many times the eval ran each test (``runtimeOptions.repeat``, else the config's
    ``evaluateOptions.repeat``), None when the file does not say. A test's own
    ``options.repeat`` that differs from the others' is refused: every golden of an arm has
    the same epochs."""
    overall = (document.get("runtimeOptions") or {}).get("repeat") or (
        (document.get("config") or {}).get("evaluateOptions") or {}).get("repeat")
    own = {_test_id(row): ((row.get("testCase") or {}).get("options") or {}).get("repeat")
           or overall for row in rows.values()}
    first_with = {}
    for test, repeat in own.items():
        first_with.setdefault(str(repeat or 1), test)
    if len(first_with) > 1:
        shown = ", ".join(f"test {test!r} {repeat}" for repeat, test in first_with.items())
        raise InputError(f"the tests ran different numbers of repeats ({shown})", file=str(path),
                         hint="every golden of an arm needs the same number of epochs: set "
                              "repeat for the whole eval (evaluateOptions.repeat), not per test")
    found = next(iter(own.values()), None)
    return found if isinstance(found, int) and not isinstance(found, bool) and found > 0 else None


def _order(row: dict) -> tuple[int, int]:
    """``(testIdx, promptIdx)``; -1 where one is missing or not a number."""
    return tuple(value if isinstance(value, int) and not isinstance(value, bool) else -1
                 for value in (row.get("testIdx"), row.get("promptIdx")))


def _epochs(rows: dict[int, dict]) -> dict[int, int]:
    """Each row's epoch: the rank of its ``testIdx`` among its test's. promptfoo runs
    ``repeat: k`` as k rows per test with distinct ``testIdx``; a second row with a
    ``testIdx`` the test already has is the same repeat twice (refused by checked_samples)."""
    indices: dict[str, set] = {}
    for row in rows.values():
        indices.setdefault(_test_id(row), set()).add(_order(row))
    ranks = {test: {order: rank for rank, order in enumerate(sorted(found), 1)}
             for test, found in indices.items()}
    return {index: ranks[_test_id(row)][_order(row)] for index, row in rows.items()}


def _test_id(row: dict) -> str:
    case = row.get("testCase") or {}
    variables = row.get("vars") or case.get("vars") or {}
    for value in ((case.get("metadata") or {}).get("id"), variables.get("id"),
                  case.get("description")):
        if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
            return str(value)
    return "vars:" + sha256_hex(canonical_json(variables))[:12]


def _sample(row: dict, example_id: str, epoch: int, created, origin: tuple) -> ToolSample:
    where = f"test {example_id!r}" + (f" (repeat {epoch})" if epoch > 1 else "")
    path = origin[0]
    grading = row.get("gradingResult")
    if row.get("failureReason") == PROVIDER_ERROR or grading is None:
        message = str(row.get("error") or (row.get("response") or {}).get("error") or
                      "no grading result").splitlines()[0]
        raise InputError(f"{where}: the provider failed ({message}), so there is no verdict",
                         file=path, hint="fix the provider and re-run the eval; an error "
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
                      latency_ms=_number(row.get("latencyMs")), cost_usd=_number(row.get("cost")),
                      origin=origin)


def _configured(row: dict) -> list:
    """A test's assertions as written (unrendered), which decide its verdicts."""
    case = row.get("testCase") or {}
    return [{key: entry.get(key) for key in ("type", "value", "metric", "threshold")}
            for entry in case.get("assert") or [] if isinstance(entry, dict)]


def _number(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) \
        else None
