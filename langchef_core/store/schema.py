"""The tables of the ledger and of the verdict cache, as statements are built from them, and
the arithmetic of the ledger's hash chain.

The tables' DDL (types, checks, indexes, identity columns, triggers) is written once, in the
Alembic revisions under ``migrations/versions``: they are the schema's history and its
single definition. What the code needs to build statements is the tables' names and
columns, here; a test checks them against the schema the revisions build, on both dialects.

The order of a chained table's columns is the order its rows are hashed in: never reorder
them (a new column goes at the end, with a revision that adds it).
"""

from __future__ import annotations

import hashlib
import json

import sqlalchemy as sa


def _table(name: str, *columns: str) -> sa.TableClause:
    return sa.table(name, *(sa.column(column) for column in columns))


readouts = _table("readouts", "id", "experiment", "design_sha256", "inputs_sha256", "version",
                  "verdict", "taken_at")
anchor_runs = _table("anchor_runs", "id", "anchor_set", "anchor_set_sha256", "judge_id", "kappa",
                     "counts", "level", "taken_at", "verdicts")
approvals = _table("approvals", "id", "experiment", "design_sha256", "approved_by", "approved_at",
                   "recorded_at", "tool_version")
publications = _table("publications", "id", "experiment", "version", "readout_sha256",
                      "started_at")
ledger_identity = _table("ledger_identity", "id", "workspace_id", "succeeds", "created_at")
look_prefixes = _table("look_prefixes", "id", "experiment", "design_sha256", "inputs_sha256", "n",
                       "prefix_sha256", "ids", "recorded_at")
chain = _table("chain", "seq", "table_name", "row_id", "row_sha256", "link_sha256")
verdicts = _table("verdicts", "judge_id", "item_sha256", "verdict", "criterion", "rationale",
                  "recorded_at")

# The tables the chain covers, oldest first (the order rows written before the chain existed
# were linked in), each with its columns in the order its rows are hashed.
CHAINED_TABLES = {table.name: table for table in (readouts, anchor_runs, approvals, publications,
                                                  ledger_identity, look_prefixes)}
CHAINED = {name: tuple(table.c.keys()) for name, table in CHAINED_TABLES.items()}
LEDGER_TABLES = (*CHAINED, "chain")
GENESIS = "0" * 64


def row_sha256(values) -> str:
    """SHA-256 of a row's values (in its CHAINED order) as compact JSON."""
    text = json.dumps(list(values), separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def link_sha256(previous: str, table: str, row_id: int, row_sha: str) -> str:
    """The chain link of a row: over the link before it, its table, id and row hash."""
    return hashlib.sha256(f"{previous}\n{table}\n{int(row_id)}\n{row_sha}".encode()).hexdigest()


def link(connection: sa.Connection, previous: str, table: str, row) -> str:
    """Append the chain link of ``row`` (its values in CHAINED order) after ``previous``;
    inside the caller's write transaction. Returns the new link."""
    row_sha = row_sha256(row)
    new = link_sha256(previous, table, row[0], row_sha)
    connection.execute(sa.insert(chain).values(table_name=table, row_id=int(row[0]),
                                               row_sha256=row_sha, link_sha256=new))
    return new
