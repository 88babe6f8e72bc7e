"""``reports/index.html``: every experiment and every published readout version.

The index is rebuilt from what is on disk — each ``reports/<experiment>/v<N>/readout.json``
and its ``manifest.json`` — so it can never disagree with the versions it links to. Links
are relative, so a reports folder can be moved, served or zipped as a whole. The page is
written to a temporary file beside its final place and renamed over the old one, so a
reader sees either the previous index or the new one, never half of it.

Experiment names become path segments here. A name is accepted only if ``check_name``
accepts it (no ``..``, no separators), and the folder must resolve inside the reports
folder; anything else is refused (``experiment_folder``) or, when met while listing a
folder, is not an experiment and is left out.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from urllib.parse import quote

from ..inputs.errors import InputError
from ..inputs.workspace import check_name, is_allowed_name
from ..readout.publish import published_versions
from ..readout.verdict import gate_words, readout_answer
from .render import render_page
from .view_common import TONES, VERDICT_WORDS
from .view_verdict import NI_TONES, verdict_sentence

INDEX_TEMPLATE = "index.html"
INDEX_FILE = "index.html"
MAX_JSON_BYTES = 64 * 2**20


@dataclass(frozen=True)
class VersionEntry:
    version: int
    verdict: str
    word: str
    tone: str
    sentence: str
    gate_passed: bool | None
    created_at: str | None
    link: str
    gate_note: str | None = None   # the first reason it did not pass, or an open question passed


@dataclass(frozen=True)
class ExperimentListing:
    experiment: str
    hypothesis: str | None
    latest_link: str | None
    versions: tuple[VersionEntry, ...]   # newest first


@dataclass(frozen=True)
class IndexView:
    created_at: datetime
    experiments: tuple[ExperimentListing, ...]
    version_count: int


def experiment_folder(reports_root: Path, experiment: str) -> Path:
    """``reports_root/<experiment>``, refusing names and links that would leave the folder."""
    name = check_name(experiment)
    root = Path(reports_root).resolve()
    folder = root / name
    if folder.resolve().parent != root:
        raise InputError(f"experiment folder {name!r} resolves outside the reports folder",
                         file=str(folder), hint="replace the link with a real folder")
    return folder


def read_listings(reports_root: Path) -> list[ExperimentListing]:
    """Every experiment folder with at least one published version, sorted by name."""
    root = Path(reports_root)
    if not root.is_dir():
        return []
    listings = []
    for entry in sorted(root.iterdir(), key=lambda path: path.name):
        if not entry.is_dir() or entry.is_symlink() or not is_allowed_name(entry.name):
            continue
        folder = experiment_folder(root, entry.name)
        versions = published_versions(root, entry.name)
        if not versions:
            continue
        entries, hypothesis = [], None
        for version in reversed(versions):
            try:
                readout, manifest = _read_version(folder / f"v{version}", entry.name)
                listed = _entry(entry.name, version, readout, manifest, folder)
            except InputError as error:
                # One damaged old version must not hide, or block, every other readout.
                entries.append(_damaged(entry.name, version, error))
                continue
            hypothesis = hypothesis if hypothesis is not None else readout.get("hypothesis")
            entries.append(listed)
        latest = folder / "latest"
        listings.append(ExperimentListing(
            experiment=entry.name, hypothesis=hypothesis,
            latest_link=f"{quote(entry.name)}/latest/{INDEX_FILE}" if latest.is_dir() else None,
            versions=tuple(entries)))
    return listings


def render_index(reports_root: Path, created_at: datetime) -> str:
    """The index page of a reports folder; the same folder and time give the same bytes."""
    if not isinstance(created_at, datetime) or created_at.tzinfo is None:
        raise ValueError("created_at must be a timezone-aware datetime")
    listings = read_listings(reports_root)
    view = IndexView(created_at=created_at, experiments=tuple(listings),
                     version_count=sum(len(listing.versions) for listing in listings))
    return render_page(INDEX_TEMPLATE, view=view)


def write_index(reports_root: Path, created_at: datetime) -> Path:
    """Write ``reports_root/index.html`` atomically (temporary file, then ``os.replace``)."""
    root = Path(reports_root)
    page = render_index(root, created_at).encode("utf-8")
    root.mkdir(parents=True, exist_ok=True)
    target = root / INDEX_FILE
    handle, staged = tempfile.mkstemp(prefix=".index-", suffix=".html", dir=root)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(page)
        os.chmod(staged, 0o644)  # mkstemp creates 0600; a served index must be readable
        os.replace(staged, target)
    except BaseException:
        Path(staged).unlink(missing_ok=True)
        raise
    return target


def _read_version(folder: Path, experiment: str) -> tuple[dict, dict]:
    readout = _read_json(folder / "readout.json")
    manifest = _read_json(folder / "manifest.json")
    files = manifest.get("files")
    expected = files.get("readout.json") if isinstance(files, dict) else None
    if isinstance(expected, str) and \
            hashlib.sha256((folder / "readout.json").read_bytes()).hexdigest() != expected:
        raise InputError("does not match the SHA-256 its manifest.json records: it was changed "
                         "after it was published", file=str(folder / "readout.json"),
                         hint="published files are never edited; publish it again")
    if readout.get("experiment") != experiment:
        raise InputError(f"the readout names experiment {readout.get('experiment')!r} but sits in "
                         f"the folder of {experiment!r}", file=str(folder / "readout.json"),
                         column="experiment",
                         hint="move the version folder under its own experiment")
    return readout, manifest


def _damaged(experiment: str, version: int, error: InputError) -> VersionEntry:
    return VersionEntry(version=version, verdict="damaged", word="DAMAGED", tone="worse",
                        sentence=f"This version cannot be read ({error.describe()})",
                        gate_passed=None, created_at=None,
                        link=f"{quote(experiment)}/v{version}/{INDEX_FILE}")


def _refused_entry(experiment: str, version: int, readout: dict, manifest: dict) -> VersionEntry:
    """A refused readout is listed like any version, with the check that refused it and
    its sentence in place of a verdict."""
    refused = readout["refused"]
    return VersionEntry(version=version, verdict="refused", word="REFUSED", tone="worse",
                        sentence=f"Blocked by {refused.get('check')}: {refused.get('sentence')}",
                        gate_passed=False, created_at=manifest.get("created_at"),
                        link=f"{quote(experiment)}/v{version}/{INDEX_FILE}",
                        gate_note="a refused readout never passes")


def _read_json(path: Path) -> dict:
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            raise InputError(f"is larger than {MAX_JSON_BYTES // 2**20} MiB", file=str(path))
        value = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("missing from a published version", file=str(path),
                         hint="a version folder holds index.html, readout.json and manifest.json; "
                              "remove the incomplete folder or publish it again") from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError, MemoryError) as error:
        raise InputError(f"not valid JSON ({type(error).__name__}: {error})", file=str(path),
                         hint="published files are never edited; restore it from the "
                              "manifest's hashes or publish again") from None
    if not isinstance(value, dict):
        raise InputError("must hold a JSON object", file=str(path))
    return value


def _entry(experiment: str, version: int, readout: dict, manifest: dict,
           folder: Path) -> VersionEntry:
    if isinstance(readout.get("refused"), dict):
        return _refused_entry(experiment, version, readout, manifest)
    primary = readout.get("primary") or {}
    verdict = primary.get("verdict")
    if verdict not in VERDICT_WORDS:
        raise InputError(f"primary.verdict is {verdict!r}", file=str(folder / f"v{version}" /
                                                                     "readout.json"),
                         column="primary.verdict",
                         hint="a readout's verdict is regression, improvement or inconclusive")
    kind = (readout.get("design") or {}).get("kind")
    try:
        sentence = verdict_sentence(primary, kind=kind)
    except ValueError as error:
        raise InputError(str(error), file=str(folder / f"v{version}" / "readout.json")) from None
    # The pre-registered question leads: HELD/FAILED/UNRESOLVED for non-inferiority.
    answer = readout_answer(readout)
    tone = NI_TONES.get(answer.answer, TONES.get(answer.answer, "neutral"))
    return VersionEntry(
        version=version, verdict=answer.answer, word=answer.word, tone=tone,
        sentence=sentence, gate_passed=(readout.get("gate") or {}).get("passed"),
        created_at=manifest.get("created_at"),
        link=f"{quote(experiment)}/v{version}/{INDEX_FILE}", gate_note=_gate_note(readout))


def _gate_note(readout: dict) -> str | None:
    """What the index says beside the gate's tag: the words after "passed" or "did not
    pass" in every other output (the first reason, or the open question it passed with)."""
    words = gate_words(readout)
    for lead in ("passed — ", "did not pass: "):
        if words.startswith(lead):
            return words[len(lead):]
    return None
