"""The published readouts a review is about: each experiment's ``latest`` version (or the
highest one when no ``latest`` link exists), read and checked against its manifest.

A summary or a site must never show a readout that was changed after it was published, so
every readout read here has its manifest's SHA-256 checked, its experiment must be the folder
it sits in, and its recorded gate must agree with its own numbers (``readout_gate``).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from ..inputs.errors import InputError
from ..inputs.workspace import check_name, is_allowed_name
from ..readout.gate import ReadoutGate, readout_gate
from ..readout.publish import VERSION_FOLDER, published_versions
from ..readout.verification import read_manifest

MAX_READOUT_BYTES = 64 << 20
AGAIN = "take the readout again with `langchef readout`"


@dataclass(frozen=True)
class PublishedReadout:
    """One published version of an experiment, with the gate re-derived from its numbers."""

    experiment: str
    version: int
    readout: dict
    gate: ReadoutGate
    path: Path


def latest_readouts(reports_root: Path, names=(), *, fail_on_inconclusive: bool = False,
                    strict: bool = False) -> list[PublishedReadout]:
    """The latest readout of every experiment in ``reports_root`` (or of those ``names``),
    sorted by experiment name. Raises ``InputError`` naming the file when one cannot be
    trusted, and when a named experiment has no published readout."""
    root = Path(reports_root)
    if not root.is_dir():
        raise InputError("no reports folder here", file=str(root),
                         hint="read an experiment out first with `langchef readout NAME`, or "
                              "pass --reports DIR")
    chosen = sorted({check_name(name) for name in names}) if names else \
        listed_experiments(root)
    found = []
    for experiment in chosen:
        version = latest_version(root, experiment)
        if version is None:
            raise InputError(f"experiment {experiment!r} has no published readout",
                             file=str(root / experiment),
                             hint="read it out first with `langchef readout " + experiment + "`")
        found.append(read_published(root, experiment, version, fail_on_inconclusive=
                                    fail_on_inconclusive, strict=strict))
    return found


def latest_version(reports_root: Path, experiment: str) -> int | None:
    """The version ``latest`` links to, else the highest published version, else None."""
    versions = published_versions(reports_root, experiment)
    latest = Path(reports_root) / experiment / "latest"
    if latest.is_symlink():
        match = VERSION_FOLDER.match(os.readlink(latest))
        if match and int(match.group(1)) in versions:
            return int(match.group(1))
    return versions[-1] if versions else None


def read_published(reports_root: Path, experiment: str, version: int, *,
                   fail_on_inconclusive: bool = False, strict: bool = False) -> PublishedReadout:
    path = Path(reports_root) / experiment / f"v{version}" / "readout.json"
    readout = read_readout(path)
    if readout.get("experiment") != experiment or readout.get("version") != version:
        raise InputError(f"names {readout.get('experiment')!r} v{readout.get('version')} but "
                         f"sits in {experiment}/v{version}", file=str(path), column="experiment",
                         hint="published folders are never moved or edited; " + AGAIN)
    gate = readout_gate(readout, fail_on_inconclusive=fail_on_inconclusive, strict=strict,
                        file=str(path))
    return PublishedReadout(experiment=experiment, version=version, readout=readout,
                            gate=gate, path=path)


def read_readout(path: Path) -> dict:
    """A readout.json as a dict, once the manifest beside it holds its hash."""
    try:
        if path.stat().st_size > MAX_READOUT_BYTES:
            raise InputError(f"is larger than {MAX_READOUT_BYTES >> 20} MiB; not a langchef "
                             "readout", file=str(path), hint=AGAIN)
        body = path.read_bytes()
    except FileNotFoundError:
        raise InputError("is missing from a published version", file=str(path),
                         hint=AGAIN) from None
    try:
        readout = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise InputError(f"is not valid JSON ({type(error).__name__})", file=str(path),
                         hint=AGAIN) from None
    if not isinstance(readout, dict):
        raise InputError("is not a JSON object", file=str(path), hint=AGAIN)
    read_manifest(path, body)
    return readout


def listed_experiments(root: Path) -> list[str]:
    """Every experiment folder of a reports folder with a published version, by name."""
    names = []
    for entry in sorted(root.iterdir(), key=lambda path: path.name):
        if entry.is_dir() and not entry.is_symlink() and is_allowed_name(entry.name) \
                and published_versions(root, entry.name):
            names.append(entry.name)
    return names
