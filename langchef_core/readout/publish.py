"""Versioned, never-overwritten readout folders: reports/<experiment>/v<N>/.

A readout is shared as a link in a review, so a published version must never change under
the link. Each version is written completely into a temporary folder beside its final place
and renamed into place in one step: a reader sees either nothing or the whole readout. A
readout whose content equals an earlier version (same inputs, same code) is not published
again; the earlier version is returned.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from ..inputs.workspace import check_name
from ..stats.records import Record

FORMAT = 1
VERSION_FOLDER = re.compile(r"^v([1-9][0-9]*)$")


@dataclass(frozen=True)
class Published(Record):
    experiment: str
    version: int
    folder: str
    readout_path: str
    report_path: str
    new: bool  # False when an identical readout had already been published


def readout_bytes(readout: dict) -> bytes:
    """The one serialisation of a readout: stable key order, no NaN, UTF-8, final newline."""
    return (json.dumps(readout, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


def published_versions(reports_root: Path, experiment: str) -> list[int]:
    folder = Path(reports_root) / check_name(experiment)
    if not folder.is_dir():
        return []
    return sorted(int(match.group(1)) for entry in folder.iterdir()
                  if entry.is_dir() and not entry.is_symlink() and (match := VERSION_FOLDER.match(entry.name)))


def publish_readout(reports_root: Path, readout: dict, *, created_at: datetime,
                    render_html: Callable[[dict, datetime], str],
                    manifest: dict | None = None) -> Published:
    """Write ``readout`` as the next version of its experiment, or return the identical one.

    ``readout["version"]`` is set here. ``render_html(readout, created_at)`` renders the page;
    the creation time is passed in so rendering stays a pure function of its inputs.
    """
    experiment = check_name(readout["experiment"])
    folder = Path(reports_root) / experiment
    versions = published_versions(reports_root, experiment)
    for version in reversed(versions):
        if _same_content(folder / f"v{version}" / "readout.json", readout):
            return _located(folder, experiment, version, new=False)
    folder.mkdir(parents=True, exist_ok=True)
    version = (versions[-1] if versions else 0) + 1
    while True:
        staged = Path(tempfile.mkdtemp(prefix=".staging-", dir=folder))
        try:
            _write_version(staged, {**readout, "version": version}, created_at, render_html, manifest)
            os.rename(staged, folder / f"v{version}")  # fails if another writer took v<N>
            break
        except OSError:
            shutil.rmtree(staged, ignore_errors=True)
            if not (folder / f"v{version}").exists():
                raise
            version += 1
        except BaseException:
            shutil.rmtree(staged, ignore_errors=True)
            raise
    _point_latest(folder, version)
    return _located(folder, experiment, version, new=True)


def _write_version(staged: Path, readout: dict, created_at: datetime, render_html, manifest) -> None:
    body = readout_bytes(readout)
    page = render_html(readout, created_at).encode("utf-8")
    (staged / "readout.json").write_bytes(body)
    (staged / "index.html").write_bytes(page)
    record = {
        "format": FORMAT,
        "tool_version": readout.get("tool_version"),
        "experiment": readout["experiment"],
        "version": readout["version"],
        "created_at": created_at.isoformat().replace("+00:00", "Z"),
        "design_sha256": (readout.get("design") or {}).get("sha256"),
        "files": {"readout.json": hashlib.sha256(body).hexdigest(),
                  "index.html": hashlib.sha256(page).hexdigest()},
        **(manifest or {}),
    }
    (staged / "manifest.json").write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    os.chmod(staged, 0o755)


def _same_content(path: Path, readout: dict) -> bool:
    if not path.is_file():
        return False
    try:
        earlier = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return False
    earlier.pop("version", None)
    current = {key: value for key, value in readout.items() if key != "version"}
    return readout_bytes(earlier) == readout_bytes(json.loads(readout_bytes(current)))


def _point_latest(folder: Path, version: int) -> None:
    """Swap the ``latest`` link atomically to the newest version."""
    staged = folder / f".latest-{os.getpid()}"
    if staged.is_symlink() or staged.exists():
        staged.unlink()
    os.symlink(f"v{version}", staged, target_is_directory=True)
    os.replace(staged, folder / "latest")


def _located(folder: Path, experiment: str, version: int, *, new: bool) -> Published:
    target = folder / f"v{version}"
    return Published(experiment=experiment, version=version, folder=str(target),
                     readout_path=str(target / "readout.json"),
                     report_path=str(target / "index.html"), new=new)
