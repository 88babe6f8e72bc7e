"""What every importer refuses before a log becomes an arm: a log passed twice, a sample
twice in one epoch, samples with different epochs, one id with two inputs.

A sample's epochs are the tool's repeats (Inspect ``--epochs``, promptfoo ``repeat``), and
every sample of one run has the same ones. A second row for a sample in an epoch it already
has is never a repeat: read as one, an edited or concatenated log would add an "epoch" to
one golden (and turn the exact paired test into a comparison of pass rates), or replace the
first row. So the refusal names both rows — the log file and each row's place in it — and
what differs between them, or that they are identical copies.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from ..inputs.errors import InputError
from .common import ToolSample

# Fields of a row compared to say what differs between two rows of one sample.
_COMPARED = ("input", "ideal", "output", "created_at", "latency_ms", "cost_usd")


def log_paths(paths) -> list[Path]:
    """The log files of one arm as paths, each given once."""
    listed = [Path(path) for path in ([paths] if isinstance(paths, (str, Path)) else paths)]
    seen = set()
    for path in listed:
        if path.resolve() in seen:
            raise InputError("this log is passed twice", file=str(path),
                             hint="pass each log of one arm once")
        seen.add(path.resolve())
    return listed


def checked_samples(tool: str, source: str, samples: list[ToolSample]) -> tuple[ToolSample, ...]:
    """``samples``, after refusing a log with no sample, one (sample, epoch) twice, one id
    with two inputs or ideals, or samples run in different epochs."""
    if not samples:
        raise InputError(f"the {tool} log holds no scored samples", file=source,
                         hint="run the eval to completion and import the log it wrote")
    seen: dict[tuple[str, int], ToolSample] = {}
    first: dict[str, ToolSample] = {}
    for sample in samples:
        key = (sample.example_id, sample.epoch)
        if key in seen:
            raise sample_twice(sample.example_id, sample.epoch, seen[key].origin, sample.origin,
                               _differences(seen[key], sample), source)
        seen[key] = sample
        known = first.setdefault(sample.example_id, sample)
        if (known.input, known.ideal) != (sample.input, sample.ideal):
            file, rows = _two_rows(known.origin, sample.origin, source)
            raise InputError(f"sample {sample.example_id!r} has a different input or ideal in "
                             f"epoch {known.epoch} ({rows[0]}) and epoch {sample.epoch} "
                             f"({rows[1]})", file=file,
                             hint="give every sample a unique id in the dataset")
    _refuse_unequal_epochs(samples, source)
    return tuple(samples)


def sample_twice(example_id: str, epoch: int, first: tuple | None, second: tuple | None,
                 differing: list[str], source: str) -> InputError:
    """The refusal of two rows for one sample in one epoch."""
    file, rows = _two_rows(first, second, source)
    if not differing:
        return InputError(f"sample {example_id!r} has two rows in epoch {epoch}: {rows[0]} and "
                          f"{rows[1]} are identical copies", file=file,
                          hint="delete the copy (a log holds each sample once per epoch), or "
                               "import the log as the tool wrote it; pass each log once")
    if "input" in differing or "ideal" in differing:
        hint = ("they are two samples under one id: give every sample a unique id in the "
                "dataset (promptfoo: metadata.id or vars.id) and re-run the eval")
    else:
        hint = ("a log holds one row per sample and epoch, so one of them was edited or "
                "comes from another run: import the log as the tool wrote it, or re-run the eval")
    return InputError(f"sample {example_id!r} has two conflicting rows in epoch {epoch}: "
                      f"{rows[0]} and {rows[1]} differ in {', '.join(differing)}", file=file,
                      hint=hint)


def _differences(first: ToolSample, second: ToolSample) -> list[str]:
    """What differs between two rows of one sample: field names, and each scorer whose
    verdict differs with both verdicts."""
    found = [name for name in _COMPARED if getattr(first, name) != getattr(second, name)]
    for name in dict.fromkeys([*first.scores, *second.scores]):
        if first.scores.get(name) != second.scores.get(name):
            found.append(f"scorer {name!r} ({_verdict(first.scores.get(name))} vs "
                         f"{_verdict(second.scores.get(name))})")
    return found


def _refuse_unequal_epochs(samples: list[ToolSample], source: str) -> None:
    by_id: dict[str, list[ToolSample]] = {}
    for sample in samples:
        by_id.setdefault(sample.example_id, []).append(sample)
    epochs = {example_id: tuple(sorted(sample.epoch for sample in rows))
              for example_id, rows in by_id.items()}
    counts = Counter(epochs.values())
    usual = max(counts, key=lambda value: (counts[value], -len(value)))  # a tie: the fewer
    odd = next((example_id for example_id, value in epochs.items() if value != usual), None)
    if odd is None:
        return
    others = f"the other {counts[usual]} sample{'s' if counts[usual] != 1 else ''}"
    rows = sorted(by_id[odd], key=lambda s: s.epoch)
    if len(rows) > len(usual):
        extra = next((s for s in rows if s.epoch not in usual), rows[-1])
        base = rows[1] if extra is rows[0] else rows[0]
        file, places = _two_rows(base.origin, extra.origin, source)
        differing = _differences(base, extra)
        raise InputError(f"sample {odd!r} has {len(rows)} rows where {others} have "
                         f"{len(usual)} each (one per epoch): {places[0]} and {places[1]} "
                         + (f"differ in {', '.join(differing)}" if differing
                            else "are identical copies"), file=file,
                         hint="a log holds each sample once per epoch: import the log as the "
                              "tool wrote it (delete an added row), or re-run the eval")
    raise InputError(f"sample {odd!r} has {_epochs(epochs[odd])} ({_listed(epochs[odd])}) where "
                     f"{others} have {_epochs(usual)} ({_listed(usual)})", file=source,
                     hint="every sample of a run has the same epochs: import the complete "
                          "logs of one run, or re-run the eval to completion")


def _two_rows(first: tuple | None, second: tuple | None, source: str) -> tuple[str, list[str]]:
    """The file to name and each row's place: bare places when both rows are in one file."""
    first, second = first or (source, "a row"), second or (source, "another row")
    if first[0] == second[0]:
        return first[0], [first[1], second[1]]
    return source, [f"{place} of {file}" for file, place in (first, second)]


def _verdict(score) -> str:
    if score is None:
        return "no score"
    passed, value = score
    return ("pass" if passed else "fail") + (f" {value:g}" if value is not None else "")


def _epochs(values) -> str:
    return f"{len(values)} epoch{'s' if len(values) != 1 else ''}"


def _listed(values) -> str:
    return ", ".join(map(str, values))
