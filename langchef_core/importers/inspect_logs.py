"""Inspect AI logs (``.eval`` or ``.json``), read with Inspect's own reader.

``pip install 'langchef[inspect]'`` brings ``inspect_ai``; without it the import stops with
one sentence naming the extra. Each sample of each epoch becomes a :class:`ToolSample`:

- id ``sample.id``; input ``sample.input`` (text, or the chat messages as JSON); ideal
  ``sample.target`` (text, or a list of targets as JSON);
- every scorer is a criterion: a score passes when Inspect's own ``value_to_float`` gives
  at least the threshold (1.0 by default: ``C`` passes, ``I``/``N``/``P`` fail; a numeric
  scorer passes at 1.0 or more); the value itself is kept as a continuous score;
- traffic time from ``sample.started_at``, else the eval's ``created``; latency from
  ``total_time``; cost from the sample's model usage (``total_cost``);
- the judge id hashes every scorer's name and options (``eval.scorers``) and the threshold;
  the dataset is the log's ``eval.dataset.name`` (local datasets record no revision).

``read_eval_log`` rather than ``inspect_ai.analysis.samples_df``: the frame's ``input`` is the
rendered conversation ("user:\nWhat is 2+2?"), not the sample's input, and it carries no
output or timestamps by default; the log's own records give all of them directly.
"""

from __future__ import annotations

from pathlib import Path

from ..inputs.errors import InputError
from .checks import checked_samples, log_paths
from .common import (DEFAULT_THRESHOLD, ImportedLog, ToolSample, derived_judge_id,
                     iso_with_zone, text_of)

TOOL = "inspect"
EXTRA_SENTENCE = ("reading Inspect AI logs needs Inspect's own log reader; install it with "
                  "pip install 'langchef[inspect]'")


def read_inspect_log(paths, *, threshold: float = DEFAULT_THRESHOLD) -> ImportedLog:
    """One arm from one or more Inspect logs (several files: shards of one run)."""
    reader, to_float = _inspect_reader()
    paths = log_paths(paths)
    samples, configurations, datasets = [], [], set()
    for path in paths:
        log = _read(reader, path)
        configurations.append(_scorer_configuration(log))
        datasets.add(getattr(log.eval.dataset, "name", None))
        created = iso_with_zone(_text(log.eval.created))
        for index, sample in enumerate(log.samples):
            samples.append(_sample(sample, (str(path), f"samples[{index}]"), created, to_float,
                                   threshold))
    source = ", ".join(str(path) for path in paths)
    if len({str(c) for c in configurations}) > 1:
        raise InputError("these logs were scored with different scorers or scorer options",
                         file=source, hint="import the logs of one run of one task per arm")
    if len(datasets) > 1:
        raise InputError(f"these logs ran different datasets {sorted(map(str, datasets))}",
                         file=source, hint="import the logs of one dataset per arm")
    checked = checked_samples(TOOL, source, samples)
    scorers = tuple(entry["name"] for entry in configurations[0])
    dataset = next(iter(datasets))
    return ImportedLog(tool=TOOL, source=source, samples=checked, scorers=scorers,
                       judge_id=derived_judge_id(TOOL, {"scorers": configurations[0],
                                                        "threshold": threshold}),
                       dataset=dataset, suite=dataset)


def _inspect_reader():
    try:
        from inspect_ai.log import read_eval_log
        from inspect_ai.scorer import value_to_float
    except ImportError:
        raise InputError(EXTRA_SENTENCE) from None
    return read_eval_log, value_to_float()


def _read(reader, path: Path):
    if not path.is_file():
        raise InputError("no such log file", file=str(path),
                         hint="pass the .eval or .json file `inspect eval` wrote (see its "
                              "--log-dir)")
    try:
        log = reader(str(path))
    except Exception as error:  # noqa: BLE001 — the reader raises zip, JSON and pydantic errors alike
        raise InputError(f"not an Inspect AI log ({type(error).__name__}: "
                         f"{str(error).splitlines()[0] if str(error) else 'unreadable'})",
                         file=str(path), hint="pass a .eval or .json log written by "
                                              "`inspect eval`") from None
    if log.status != "success":
        raise InputError(f"the eval ended with status {log.status!r}, so its samples are "
                         "incomplete", file=str(path),
                         hint="re-run it to completion (inspect eval-retry) and import that log")
    if not log.samples:
        raise InputError("the log holds no samples", file=str(path),
                         hint="import a full log, not one written with --no-log-samples")
    return log


def _scorer_configuration(log) -> list[dict]:
    """Every scorer's name and options, as the log records them."""
    scorers = getattr(log.eval, "scorers", None)
    if scorers:
        return [{"name": s.name, "options": dict(s.options or {})} for s in scorers]
    results = getattr(log.results, "scores", None) or []
    return [{"name": s.name, "options": dict(s.params or {})} for s in results]


def _sample(sample, origin: tuple, created, to_float, threshold) -> ToolSample:
    example_id, path = str(sample.id), origin[0]
    where = f"sample {example_id!r} (epoch {sample.epoch})"
    if sample.error is not None:
        message = str(getattr(sample.error, "message", sample.error)).splitlines()[0]
        raise InputError(f"{where} ended in an error ({message})", file=path,
                         hint="fix the error and re-run the eval (inspect eval-retry), then "
                              "import the new log")
    if not sample.scores:
        raise InputError(f"{where} was not scored", file=path,
                         hint="score the log (inspect score) and import the scored log")
    scores = {}
    for name, score in sample.scores.items():
        if isinstance(score.value, (dict, list)):
            raise InputError(f"{where}: scorer {name!r} gives several values per sample, "
                             "which langchef cannot read as one verdict", file=path,
                             hint="score with one value per scorer (one scorer per value)")
        try:
            value = float(to_float(score.value))
        except (TypeError, ValueError):
            raise InputError(f"{where}: scorer {name!r} gave {score.value!r}, not a score",
                             file=path, hint="use a scorer whose values are C/I/P/N, "
                                                  "numbers or booleans") from None
        scores[name] = (value >= threshold, value)
    return ToolSample(example_id=example_id, epoch=int(sample.epoch),
                      input=_input(sample.input), ideal=_target(sample.target),
                      output=sample.output.completion if sample.output is not None else None,
                      scores=scores,
                      created_at=iso_with_zone(_text(sample.started_at)) or created,
                      latency_ms=None if sample.total_time is None else sample.total_time * 1000,
                      cost_usd=_cost(sample), origin=origin)


def _input(value) -> str:
    if isinstance(value, str):
        return value
    return text_of([{"role": message.role, "content": message.text} for message in value])


def _target(value) -> str | None:
    if isinstance(value, list):
        return value[0] if len(value) == 1 else text_of(value)
    return value if value not in ("", None) else None


def _cost(sample) -> float | None:
    usage = getattr(sample, "model_usage", None) or {}
    costs = [entry.total_cost for entry in usage.values()]
    if not costs or any(cost is None for cost in costs):
        return None
    return float(sum(costs))


def _text(value) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else value.isoformat()
