"""The ledger's identity and the pins of sequential looks: the rows that let a workspace
notice a ledger that is not its own (an older copy, another workspace's) and a look that does
not extend the looks before it. Methods of :class:`~.ledger.Ledger`; their readers are
``designs/continuity.py`` and the sequential look check of ``designs/pins.py``."""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone

import sqlalchemy as sa

from ..inputs.workspace import check_name
from ..stats.records import Record
from ..store import schema
from .stamps import check_sha256, format_utc


@dataclass(frozen=True)
class LedgerIdentity(Record):
    """Which workspace a ledger belongs to: a random id, and the ids of the ledgers whose
    published manifests the workspace held when this ledger was started."""

    workspace_id: str
    succeeds: tuple[str, ...]
    created_at: str


@dataclass(frozen=True)
class LookPin(Record):
    """The goldens one sequential look read, in traffic order."""

    id: int
    experiment: str
    design_sha256: str
    inputs_sha256: str
    ids: tuple[str, ...]
    recorded_at: str


class _Pins:
    """Look pins and the ledger's identity; mixed into :class:`~.ledger.Ledger`, whose
    ``_reading``, ``_transaction``, ``_insert`` and ``verify`` they use."""

    def identity(self) -> LedgerIdentity | None:
        """The ledger's identity, or None when no workspace opened it yet."""
        with self._reading():
            return self._identity()

    def _identity(self) -> LedgerIdentity | None:
        table = schema.ledger_identity.c
        row = self._connection.execute(sa.select(table.workspace_id, table.succeeds,
                                                 table.created_at).order_by(table.id).limit(1)).first()
        if row is None:
            return None
        return LedgerIdentity(row[0], tuple(json.loads(row[1])), row[2])

    def ensure_identity(self, earlier_ids) -> LedgerIdentity:
        """The identity, written now when the ledger has none; ``earlier_ids()`` (called only
        then, under the write lock) names the ledgers the workspace's manifests came from."""
        with self._transaction():
            found = self._identity()
            if found is not None:
                return found
            made = LedgerIdentity(uuid.uuid4().hex, tuple(sorted(set(earlier_ids()))),
                                  format_utc(datetime.now(timezone.utc)))
            self._insert("ledger_identity", {"workspace_id": made.workspace_id,
                                             "succeeds": json.dumps(list(made.succeeds)),
                                             "created_at": made.created_at})
        self.verify()  # the new link is part of the chain the manifests are checked against
        return made

    def record_look_pin(self, experiment: str, design_sha256: str, inputs_sha256: str,
                        ids) -> bool:
        """Pin a sequential look to the goldens it read; False when an identical pin of this
        design is already recorded (the same look taken again)."""
        ids = tuple(str(example) for example in ids)
        text = json.dumps(list(ids), separators=(",", ":"), ensure_ascii=False)
        digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
        pins = schema.look_prefixes.c
        with self._transaction():
            if self._connection.execute(sa.select(pins.id).where(
                    pins.design_sha256 == check_sha256(design_sha256, "design_sha256"),
                    pins.prefix_sha256 == digest).limit(1)).first() is not None:
                return False
            self._insert("look_prefixes", {
                "experiment": check_name(experiment), "design_sha256": design_sha256,
                "inputs_sha256": check_sha256(inputs_sha256, "inputs_sha256"), "n": len(ids),
                "prefix_sha256": digest, "ids": text,
                "recorded_at": format_utc(datetime.now(timezone.utc))})
        return True

    def look_pins(self, design_sha256: str) -> list[LookPin]:
        """The pinned looks of a design, oldest first."""
        pins = schema.look_prefixes.c
        with self._reading():
            rows = self._rows(sa.select(pins.id, pins.experiment, pins.design_sha256,
                                        pins.inputs_sha256, pins.ids, pins.recorded_at)
                              .where(pins.design_sha256 == design_sha256).order_by(pins.id))
        return [LookPin(row_id, experiment, design, inputs, tuple(json.loads(ids)), when)
                for row_id, experiment, design, inputs, ids, when in rows]
