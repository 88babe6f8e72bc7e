"""Publishing a site to a folder or an object store, through ``fsspec`` (``s3://`` with
s3fs, ``gs://`` with gcsfs, ``az://`` with adlfs: whichever the team installed).

Credentials and endpoints come from the operator's environment as each library reads it
(for S3: ``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_ENDPOINT_URL``, …), never
from a design or a workspace file.

Each file is written whole: in a folder through a temporary name renamed into place, in an
object store by one PUT (an object is replaced atomically). The plan writes new versions
before the ``latest`` copies, the index and the manifest that link to them, so whatever a
reader follows from the index exists completely.
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ..inputs.errors import InputError
from ..stats.records import Record
from .site import SITE_MANIFEST, PublishPlan, SiteFile, plan_publish, recorded_hashes, site_files

CONTENT_TYPES = {".html": "text/html; charset=utf-8", ".json": "application/json"}
# How each object store's fsspec library takes an object's content type: served from a
# bucket, a page without one is downloaded instead of shown.
CONTENT_TYPE_ARGUMENT = {"s3": "ContentType", "s3a": "ContentType", "gs": "content_type",
                         "gcs": "content_type"}


@dataclass(frozen=True)
class Publication(Record):
    destination: str
    written: tuple[str, ...]
    unchanged: int


def open_destination(destination: str):
    """(filesystem, root path) for a folder or a URL; one sentence when the library for the
    URL's scheme is not installed."""
    import fsspec

    try:
        return fsspec.core.url_to_fs(destination)
    except (ImportError, ValueError) as error:
        scheme = destination.split("://", 1)[0]
        raise InputError(f"cannot be opened ({error})", file=destination,
                         hint=f"install the fsspec library for {scheme}:// (s3fs, gcsfs or "
                              "adlfs), e.g. `pip install 'langchef[s3]'`") from None


def publish_site(reports_root: Path, destination: str) -> Publication:
    """Publish the reports to ``destination``; writes nothing when it already holds them."""
    fs, root = open_destination(destination)
    root = root.rstrip("/")
    _refuse_the_reports_themselves(fs, root, reports_root, destination)
    files = site_files(reports_root)
    with storage_errors("read", destination):
        manifest = _read(fs, f"{root}/{SITE_MANIFEST}")
        recorded = recorded_hashes(manifest, destination=destination)
        held = {path: _sha256(_read(fs, f"{root}/{path}"))
                for path in sorted({item.path for item in files} | set(recorded))}
        held[SITE_MANIFEST] = _sha256(manifest)
    plan = plan_publish(files, held, recorded, destination=destination)
    with storage_errors("write to", destination):
        write_plan(fs, root, plan)
    return Publication(destination=destination, written=tuple(item.path for item in plan.writes),
                       unchanged=len(plan.unchanged))


@contextmanager
def storage_errors(action: str, destination: str):
    """A storage library's failure (no connection, no credentials, access denied) as one
    sentence naming the destination. Each library has its own exception types, hence the
    broad catch, around storage calls only."""
    try:
        yield
    except InputError:
        raise
    except Exception as error:  # noqa: BLE001 (see the docstring)
        sentence = " ".join(str(error).split()) or type(error).__name__
        raise InputError(f"could not {action} it ({type(error).__name__}: {sentence})",
                         file=destination,
                         hint="check the address and the credentials in the environment (for "
                              "S3: AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_ENDPOINT_URL)"
                         ) from None


def write_plan(fs, root: str, plan: PublishPlan) -> None:
    local = _is_local(fs)
    for item in plan.writes:
        target = f"{root}/{item.path}"
        if local:
            _replace_local(Path(target), item.data)
        else:
            fs.pipe_file(target, item.data, **_content_type(fs, item))


def _replace_local(target: Path, data: bytes) -> None:
    import tempfile

    target.parent.mkdir(parents=True, exist_ok=True)
    descriptor, staged = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(staged, 0o644)  # mkstemp makes 0600; a served site must be readable
        os.replace(staged, target)
    except BaseException:
        Path(staged).unlink(missing_ok=True)
        raise


def _content_type(fs, item: SiteFile) -> dict:
    argument = next((CONTENT_TYPE_ARGUMENT[p] for p in _protocols(fs)
                     if p in CONTENT_TYPE_ARGUMENT), None)
    kind = CONTENT_TYPES.get(os.path.splitext(item.path)[1])
    return {argument: kind} if argument and kind else {}


def _read(fs, path: str) -> bytes | None:
    try:
        return fs.cat_file(path)
    except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
        return None


def _sha256(data: bytes | None) -> str | None:
    import hashlib

    return hashlib.sha256(data).hexdigest() if data is not None else None


def _protocols(fs) -> tuple[str, ...]:
    return (fs.protocol,) if isinstance(fs.protocol, str) else tuple(fs.protocol)


def _is_local(fs) -> bool:
    return "file" in _protocols(fs)


def _refuse_the_reports_themselves(fs, root: str, reports_root: Path, destination: str) -> None:
    if not _is_local(fs):
        return
    target, reports = Path(root).resolve(), Path(reports_root).resolve()
    if target == reports or reports in target.parents or target in reports.parents:
        raise InputError("is the reports folder, inside it or around it", file=destination,
                         hint="publish to a folder of its own (e.g. site/) or a bucket")
