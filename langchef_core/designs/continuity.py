"""A workspace's ledger is its own, and not an older copy of it.

The hash chain proves that no row of a ledger was changed; it cannot prove that the ledger
is the newest one. Replacing the ledger with an older copy of itself (a backup from before a
look) or with another workspace's ledger leaves a consistent chain. What gives either away
is the workspace's published versions: every manifest.json carries the identity of the
ledger that recorded it, the chain's head right after its publication row and the number of
links the chain then held. So when a
workspace opens its ledger, the newest manifest of each experiment is read, and

- a manifest of this ledger whose head the chain does not hold means the ledger is an older
  copy (or lost rows): refused;
- a manifest of another ledger means a foreign ledger, unless this ledger was started in a
  workspace that already held that ledger's manifests (the documented way back after a lost
  ledger: its identity row lists the ledgers it succeeds).

Manifests written before langchef recorded identities carry none and are not checked.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from ..store.location import StoreError
from .ledger_pins import LedgerIdentity

MAX_MANIFEST_BYTES = 1 << 20


@dataclass(frozen=True)
class Stamp:
    """What a published manifest says about the ledger that recorded it."""

    file: Path
    identity: str
    head: str
    rows: int | None
    created_at: str


def newest_stamps(reports_root: Path) -> list[Stamp]:
    """The ledger stamp of each experiment's newest manifest that carries one."""
    stamps = []
    root = Path(reports_root)
    if not root.is_dir():
        return stamps
    for experiment in sorted(root.iterdir()):
        if not experiment.is_dir() or experiment.is_symlink():
            continue
        versions = sorted((int(entry.name[1:]), entry) for entry in experiment.iterdir()
                          if entry.name[:1] == "v" and entry.name[1:].isdigit()
                          and entry.is_dir() and not entry.is_symlink())
        for _, folder in reversed(versions):
            stamp = read_stamp(folder / "manifest.json")
            if stamp is not None:
                stamps.append(stamp)
                break
    return stamps


def read_stamp(path: Path) -> Stamp | None:
    """The manifest's ledger identity and head, or None when it has none (or is unreadable:
    the report index marks such a version damaged; it is no evidence either way)."""
    try:
        if path.stat().st_size > MAX_MANIFEST_BYTES:
            return None
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    if not isinstance(manifest, dict):
        return None
    identity, head = manifest.get("ledger_identity"), manifest.get("ledger_head")
    if not (isinstance(identity, str) and isinstance(head, str)):
        return None
    rows = manifest.get("ledger_rows")
    return Stamp(path, identity, head, rows if isinstance(rows, int) else None,
                 str(manifest.get("created_at")))


def check_continuity(ledger, reports_root: Path, *, shown=str) -> LedgerIdentity:
    """The ledger's identity (written now for a ledger that has none), once every newest
    manifest in ``reports_root`` is shown to belong to it; ``StoreError`` otherwise.

    ``shown(path)`` is how a manifest is named in the sentence (workspace-relative)."""
    stamps = newest_stamps(reports_root)
    identity = ledger.ensure_identity(lambda: [stamp.identity for stamp in stamps])
    missing = _unheld(ledger, stamps, identity)
    if missing:
        # The chain was walked when the ledger opened, before the manifests were read: a
        # version another process published in between is stamped with a head that walk
        # could not see. A publication row commits before its manifest is written, so a
        # walk taken now holds every head an honest ledger recorded.
        ledger.verify()
        missing = _unheld(ledger, stamps, identity)
    foreign = [stamp for stamp in stamps if stamp.identity != identity.workspace_id
               and stamp.identity not in identity.succeeds]
    if missing:
        newest = max(missing, key=lambda stamp: stamp.created_at)
        raise StoreError(
            f"this ledger is an older copy: its hash chain does not hold the head "
            f"{newest.head[:12]} that {shown(newest.file)} (published {newest.created_at}) "
            "recorded, so the readouts, approvals and look pins written since are missing",
            file=ledger.path, hint="restore the newest copy of the ledger (one that holds every "
                                   "published version); an older one would forget the looks "
                                   "taken since")
    if foreign:
        newest = max(foreign, key=lambda stamp: stamp.created_at)
        raise StoreError(
            f"this is not the workspace's ledger: {shown(newest.file)} was published under "
            f"ledger {newest.identity[:12]}, and this one ({identity.workspace_id[:12]}) "
            "neither is nor succeeds it (another workspace's ledger?)",
            file=ledger.path, hint="put back this workspace's own ledger (langchef.sqlite, or "
                                   "point LANGCHEF_DATABASE_URL at the workspace's database)")
    return identity


def _unheld(ledger, stamps: list[Stamp], identity: LedgerIdentity) -> list[Stamp]:
    """This ledger's stamps whose head its last walked chain does not hold where they say."""
    missing = []
    for stamp in stamps:
        if stamp.identity == identity.workspace_id:
            position = ledger.link_position(stamp.head)
            if position is None or (stamp.rows is not None and position != stamp.rows):
                missing.append(stamp)
    return missing
