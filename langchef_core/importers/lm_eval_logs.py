"""lm-evaluation-harness sample logs (``--log_samples``), parsed as plain JSON.

The harness writes ``samples_<task>_<time>.jsonl`` (one line per document and filter) and
``results_<time>.json`` beside it. Pass the samples files, the results file, or the folder
holding them; with several tasks in one run, name the task.

- id: the document's own ``id`` field, else the harness's ``doc_id`` (the row number);
  input: the document as canonical JSON (the prompt may legitimately differ between two
  prompt variants, the document may not); ideal: the harness's ``target``;
- each per-sample metric is a criterion, named ``<metric>`` (``<metric>,<filter>`` when a
  filter other than ``none`` produced it); it passes at the threshold (1.0: ``acc`` and
  ``exact_match`` are 0 or 1);
- the harness's own ``doc_hash`` and ``target_hash`` are checked against the document and
  target on the line, so an edited line is refused rather than paired; a second line of one
  document under one filter (a copied line, which used to replace the first's scores), or
  under another filter with another document, is refused naming both lines;
- traffic time is the run's ``date`` (the results file; no per-sample time is recorded);
  the judge id hashes the task's ``output_type``, ``metric_list`` and ``filter_list`` and
  the threshold (not the whole config: the CLI copies the model's arguments into it);
  the dataset is ``dataset_path``/``dataset_name`` with the ``revision`` where given.
The harness's ``repeats`` are reduced by its filter before scoring, so there is one epoch.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from ..inputs.errors import InputError
from .checks import checked_samples, log_paths, sample_twice
from .common import (DEFAULT_THRESHOLD, ImportedLog, ToolSample, derived_judge_id, iso_from_unix,
                     text_of)

TOOL = "lm-eval"
_SAMPLES = re.compile(r"^samples_(?P<task>.+)_(?P<time>\d{4}-\d\d-\d\dT[\d.\-]+)\.jsonl$")


def read_lm_eval_log(paths, *, task: str | None = None,
                     threshold: float = DEFAULT_THRESHOLD) -> ImportedLog:
    """One arm from an lm-eval run's sample log(s) of one task."""
    files = _sample_files(paths)
    tasks = sorted({found["task"] for found in files.values()})
    if task is None and len(tasks) > 1:
        raise InputError(f"these logs hold several tasks {tasks}", file=_names(files),
                         hint="name the one to import (--task NAME)")
    task = task or tasks[0]
    chosen = {path: found for path, found in files.items() if found["task"] == task}
    if not chosen:
        raise InputError(f"no samples of task {task!r}; the logs hold {tasks}",
                         file=_names(files), hint="name one of those tasks")
    samples, configuration, dataset = [], None, None
    for path, found in sorted(chosen.items()):
        results = _results(path, found["time"])
        config = (results or {}).get("configs", {}).get(task, {})
        created = iso_from_unix((results or {}).get("date"))
        samples += _samples(path, created, threshold)
        configuration = _scorer_configuration(config, samples)
        dataset = _dataset(config)
    source = _names(chosen)
    checked = checked_samples(TOOL, source, samples)
    scorers = tuple(dict.fromkeys(name for sample in checked for name in sample.scores))
    return ImportedLog(tool=TOOL, source=source, samples=checked, scorers=scorers,
                       judge_id=derived_judge_id(TOOL, {"task": task, **configuration,
                                                        "threshold": threshold}),
                       dataset=dataset, suite=task)


def _sample_files(paths) -> dict[Path, dict]:
    paths = log_paths(paths)
    found = {}
    for path in paths:
        if path.is_dir():
            candidates = sorted(path.rglob("samples_*.jsonl"))
        elif path.is_file() and path.name.startswith("results_") and path.suffix == ".json":
            stamp = path.name[len("results_"):-len(".json")]
            candidates = sorted(path.parent.glob(f"samples_*_{stamp}.jsonl"))
        elif path.is_file():
            candidates = [path]
        else:
            raise InputError("no such file or folder", file=str(path),
                             hint="pass the --output_path folder of `lm-eval run --log_samples`")
        for candidate in candidates:
            match = _SAMPLES.match(candidate.name)
            if match is None:
                raise InputError("not an lm-eval sample log (expected samples_<task>_<time>."
                                 "jsonl)", file=str(candidate),
                                 hint="run lm-eval with --log_samples and pass what it wrote")
            found[candidate] = match.groupdict()
    if not found:
        raise InputError("no samples_<task>_<time>.jsonl file found",
                         file=", ".join(map(str, paths)),
                         hint="run lm-eval with --log_samples; without it no sample is logged")
    return found


def _results(samples_path: Path, time: str) -> dict | None:
    path = samples_path.parent / f"results_{time}.json"
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as error:
        raise InputError(f"not valid JSON ({error})", file=str(path),
                         hint="pass the results file lm-eval wrote, unedited") from None


def _samples(path: Path, created: str | None, threshold: float) -> list[ToolSample]:
    """One sample per document; its lines (one per filter) must agree on the document and
    target, and no (document, filter) has two lines."""
    by_doc: dict[int, dict] = {}
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            entry = _line(line, path, number)
            doc = by_doc.setdefault(entry["doc_id"], {"entry": entry, "scores": {}, "lines": {},
                                                      "origin": (str(path), f"line {number}")})
            _refuse_second_line(doc, entry, (str(path), f"line {number}"))
            for metric in entry["metrics"]:
                name = metric if entry.get("filter", "none") == "none" \
                    else f"{metric},{entry['filter']}"
                value = entry.get(metric)
                if isinstance(value, bool) or not isinstance(value, (int, float)):
                    raise InputError(f"sample {_id(entry)!r}: metric {metric!r} is {value!r}, "
                                     "not a per-sample score", file=str(path), row=number,
                                     hint="import a metric scored per sample (acc, "
                                          "exact_match, …), not a corpus-level one")
                doc["scores"][name] = (float(value) >= threshold, float(value))
    return [ToolSample(example_id=_id(doc["entry"]), epoch=1, input=text_of(doc["entry"]["doc"]),
                       ideal=str(doc["entry"]["target"]), output=_output(doc["entry"]),
                       scores=doc["scores"], created_at=created, origin=doc["origin"])
            for doc in by_doc.values()]


def _refuse_second_line(doc: dict, entry: dict, origin: tuple) -> None:
    """A second line of one document under one filter, or under another filter with another
    document or target: two conflicting records of one sample (or a copied line)."""
    first, earlier = doc["entry"], doc["lines"].get(entry.get("filter", "none"))
    if earlier is None and (first["doc"], first["target"]) == (entry["doc"], entry["target"]):
        doc["lines"][entry.get("filter", "none")] = (entry, origin)
        return
    other, where = earlier or (first, doc["origin"])
    differing = [key for key in dict.fromkeys([*other, *entry]) if other.get(key) != entry.get(key)]
    raise sample_twice(_id(entry), 1, where, origin, differing, origin[0])


def _line(line: str, path: Path, number: int) -> dict:
    try:
        entry = json.loads(line)
    except ValueError as error:
        raise InputError(f"not valid JSON ({error.args[0] if error.args else error})",
                         file=str(path), row=number,
                         hint="pass the sample log lm-eval wrote, unedited") from None
    if not isinstance(entry, dict) or not isinstance(entry.get("doc"), dict) \
            or not isinstance(entry.get("doc_id"), int) or "target" not in entry \
            or not isinstance(entry.get("metrics"), list):
        raise InputError("not an lm-eval sample line (needs doc_id, doc, target, metrics)",
                         file=str(path), row=number,
                         hint="pass the samples_<task>_<time>.jsonl lm-eval wrote")
    doc_json = json.dumps(entry["doc"], indent=2, ensure_ascii=False, default=str)
    if entry.get("doc_hash") not in (None, _sha256(doc_json)) or \
            entry.get("target_hash") not in (None, _sha256(str(entry["target"]))):
        raise InputError(f"sample {_id(entry)!r}: the document or target does not match the "
                         "hash lm-eval recorded beside it", file=str(path), row=number,
                         hint="import the log as lm-eval wrote it")
    return entry


def _id(entry: dict) -> str:
    own = entry["doc"].get("id")
    return str(own) if isinstance(own, (str, int)) and not isinstance(own, bool) \
        and str(own).strip() else str(entry["doc_id"])


def _output(entry: dict) -> str | None:
    responses = entry.get("filtered_resps")
    if not isinstance(responses, list) or not responses:
        return None
    if all(isinstance(item, list) and item for item in responses):
        # multiple choice: one (loglikelihood, is_greedy) per choice; the answer is the argmax
        scores = [float(item[0]) for item in responses]
        return str(max(range(len(scores)), key=scores.__getitem__))
    return text_of(responses[0])


def _scorer_configuration(config: dict, samples: list[ToolSample]) -> dict:
    if config:
        return {"output_type": config.get("output_type"),
                "metric_list": config.get("metric_list"),
                "filter_list": config.get("filter_list")}
    # No results file beside the samples: the metric names are all that is known.
    return {"metrics": sorted({name for sample in samples for name in sample.scores})}


def _dataset(config: dict) -> str | None:
    if not config.get("dataset_path"):
        return None
    name = config["dataset_path"] + (f"/{config['dataset_name']}" if config.get("dataset_name")
                                     else "")
    revision = (config.get("dataset_kwargs") or {}).get("revision")
    return f"{name}@{revision}" if revision else name


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _names(files) -> str:
    return ", ".join(str(path) for path in sorted(files))
