"""The published site: which files a reports folder publishes, and what a publish must write.

A site is the reports folder as a reviewer's link reaches it: ``index.html``, every version
folder ``<experiment>/v<N>/`` (``index.html``, ``readout.json``, ``manifest.json``), and
``<experiment>/latest/`` holding a copy of the version ``latest`` names (an object store has
no links; the pages' links are relative, so a copy one folder beside its version reads the
same). ``manifest.json`` at the root records the SHA-256 of every file.

Version folders are immutable: a publish writes a version's files only where the destination
has none, skips those it already holds byte for byte, and refuses the whole publish, before
writing anything, when a version file there differs (from the reports, or from the hash the
destination's own manifest recorded): a link in a review must keep showing what it showed.
``index.html``, ``latest/`` and the manifest are the only files ever replaced.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from ..inputs.errors import InputError
from ..readout.publish import published_versions, read_intact_version
from .readouts import latest_version, listed_experiments

FORMAT = 1
SITE_MANIFEST = "manifest.json"
INDEX = "index.html"
AGAIN = ("published versions are never edited; take the readout again with `langchef "
         "readout`, which writes a new version")


@dataclass(frozen=True)
class SiteFile:
    path: str          # relative POSIX path inside the site
    data: bytes
    immutable: bool    # inside a version folder: written once, never replaced

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()


@dataclass(frozen=True)
class PublishPlan:
    """What a publish writes, in order (new versions, then ``latest`` copies, then the index,
    then the site manifest), and what the destination already holds."""

    writes: tuple[SiteFile, ...]
    unchanged: tuple[str, ...]


def site_files(reports_root: Path) -> list[SiteFile]:
    """Every file of the site built from a reports folder (the site manifest is added by
    :func:`plan_publish`, which knows what the destination keeps). Refuses a
    damaged version (its manifest's hashes not matching its files) and a folder without the
    index, naming the file."""
    root = Path(reports_root)
    if not (root / INDEX).is_file():
        raise InputError("has no index.html to publish", file=str(root),
                         hint="read an experiment out first (`langchef readout NAME` writes the "
                              "reports and their index), or pass --reports DIR")
    files = [SiteFile(INDEX, (root / INDEX).read_bytes(), immutable=False)]
    for experiment in listed_experiments(root):
        versions = {version: version_files(root, experiment, version)
                    for version in published_versions(root, experiment)}
        for version_files_ in versions.values():
            files += version_files_
        latest = latest_version(root, experiment)
        files += [SiteFile(f"{experiment}/latest/{item.path.rsplit('/', 1)[1]}", item.data,
                           immutable=False) for item in versions[latest]]
    return files


def version_files(root: Path, experiment: str, version: int) -> list[SiteFile]:
    """A version's files as its manifest lists them (plus the manifest), hashes checked."""
    folder = root / experiment / f"v{version}"
    if read_intact_version(folder) is None:
        raise InputError("is damaged: its readout.json or manifest.json is missing, unreadable "
                         "or does not match the SHA-256 the manifest records",
                         file=str(folder), hint=AGAIN)
    manifest_bytes = (folder / "manifest.json").read_bytes()
    listed = json.loads(manifest_bytes).get("files") or {}
    files = []
    for name, expected in sorted(listed.items()):
        path = folder / name
        data = path.read_bytes() if path.is_file() and "/" not in name else None
        if data is None or hashlib.sha256(data).hexdigest() != expected:
            raise InputError("does not match the SHA-256 its version's manifest.json records",
                             file=str(path), hint=AGAIN)
        files.append(SiteFile(f"{experiment}/v{version}/{name}", data, immutable=True))
    files.append(SiteFile(f"{experiment}/v{version}/manifest.json", manifest_bytes,
                          immutable=True))
    return files


def site_manifest(files: list[SiteFile], kept: dict[str, str] | None = None) -> bytes:
    """The root manifest: format and the SHA-256 of every file; ``kept`` adds the version
    files the destination holds that these reports do not (published from elsewhere)."""
    hashes = {**(kept or {}), **{item.path: item.sha256 for item in files}}
    document = {"format": FORMAT, "generator": "langchef publish",
                "files": dict(sorted(hashes.items()))}
    return (json.dumps(document, indent=2, sort_keys=True) + "\n").encode("utf-8")


def plan_publish(files: list[SiteFile], held: dict[str, str | None],
                 recorded: dict[str, str], *, destination: str) -> PublishPlan:
    """What to write to a destination that holds ``held`` (path → SHA-256, None when absent,
    for every path of ``files`` and of ``recorded``) and whose manifest recorded ``recorded``
    (path → SHA-256). Raises ``InputError`` when a version file there was changed."""
    for path, expected in sorted(recorded.items()):
        if _is_version_path(path) and held.get(path) not in (None, expected):
            raise InputError("was changed after it was published: its SHA-256 is not the one "
                             "the destination's manifest.json records", file=f"{destination}/"
                                                                           f"{path}",
                             hint="restore it from the reports (or remove it) and publish again; "
                                  "a published version is never rewritten")
    for item in files:
        if item.immutable and held.get(item.path) not in (None, item.sha256):
            raise InputError("differs from the version in the reports: a published version is "
                             "never rewritten", file=f"{destination}/{item.path}",
                             hint="if the destination is right, the reports are not the ones "
                                  "published there; publish them somewhere else")
    paths = {item.path for item in files}
    kept = {path: sha for path, sha in recorded.items()
            if _is_version_path(path) and path not in paths}
    files = [*files, SiteFile(SITE_MANIFEST, site_manifest(files, kept), immutable=False)]
    writes = [item for item in files if held.get(item.path) != item.sha256]
    # New versions first, then what links to them: no page ever links to a missing file.
    writes.sort(key=lambda item: (not item.immutable, item.path == INDEX,
                                  item.path == SITE_MANIFEST))
    return PublishPlan(writes=tuple(writes),
                       unchanged=tuple(item.path for item in files
                                       if held.get(item.path) == item.sha256))


def recorded_hashes(manifest: bytes | None, *, destination: str) -> dict[str, str]:
    """The file hashes a destination's manifest.json records ({} when there is none)."""
    if manifest is None:
        return {}
    try:
        document = json.loads(manifest.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError):
        document = None
    files = document.get("files") if isinstance(document, dict) else None
    if not isinstance(files, dict) or not all(isinstance(key, str) and isinstance(value, str)
                                              for key, value in files.items()):
        raise InputError("is not a langchef site manifest", file=f"{destination}/"
                                                                 f"{SITE_MANIFEST}",
                         hint="publish to an empty folder or bucket prefix, or to one langchef "
                              "published to before")
    return files


def _is_version_path(path: str) -> bool:
    parts = path.split("/")
    return len(parts) == 3 and parts[1].startswith("v") and parts[1][1:].isdigit()
