"""Where things live in a workspace folder (ARCHITECTURE.md §4)."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from .errors import InputError
from .formats import TABLE_SUFFIXES

DEFAULT_WORKSPACE = "evals"
# Experiment, suite, arm and anchor-set names become file and folder names: keep them plain.
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}\Z")  # \Z: no trailing newline
SEED_SUFFIX = re.compile(r"^seed[0-9]{1,6}\Z")


def check_name(name: str, kind: str = "experiment") -> str:
    """Refuse names that could escape the workspace or break a path (``../x``, ``a/b``)."""
    if not isinstance(name, str) or not NAME_PATTERN.match(name) or ".." in name:
        raise InputError(f"{kind} name {name!r} is not allowed",
                         hint="use letters, digits, '-', '_' and '.', starting with a letter or "
                              "digit, without '..' or path separators")
    return name


def is_allowed_name(name: str) -> bool:
    """Whether ``check_name`` accepts ``name`` (a folder met while listing, not a request)."""
    try:
        check_name(name)
    except InputError:
        return False
    return True


def resolve_workspace(explicit: str | os.PathLike | None = None) -> Path:
    """--workspace DIR, else $LANGCHEF_WORKSPACE, else ./evals."""
    chosen = explicit or os.environ.get("LANGCHEF_WORKSPACE") or DEFAULT_WORKSPACE
    return Path(chosen).expanduser().resolve()


@dataclass(frozen=True)
class Workspace:
    root: Path
    reports_root: Path | None = None

    @classmethod
    def at(cls, explicit=None, *, reports=None) -> "Workspace":
        return cls(resolve_workspace(explicit), Path(reports).resolve() if reports else None)

    @property
    def experiments(self) -> Path:
        return self.root / "experiments"

    @property
    def approvals(self) -> Path:
        return self.root / "approvals"

    @property
    def reports(self) -> Path:
        return self.reports_root or self.root / "reports"

    @property
    def ledger(self) -> Path:
        return self.root / "langchef.sqlite"

    def design_path(self, experiment: str) -> Path:
        return self.experiments / f"{check_name(experiment)}.yaml"

    def approval_path(self, experiment: str) -> Path:
        return self.approvals / f"{check_name(experiment)}.json"

    def failures_table(self, experiment: str) -> Path:
        """Where a refusal writes its whole problem table when its sentence shows only the
        first few problems (``failures/<experiment>.csv``)."""
        return self.root / "failures" / f"{check_name(experiment)}.csv"

    def experiment_names(self) -> list[str]:
        if not self.experiments.is_dir():
            return []
        return sorted(path.stem for path in self.experiments.glob("*.yaml"))

    def goldens_path(self, suite: str) -> Path:
        return self._table(self.root / "goldens", check_name(suite, "suite"))

    def qrels_path(self, suite: str) -> Path:
        return self._table(self.root / "qrels", check_name(suite, "suite"))

    def pools_path(self, suite: str) -> Path:
        return self._table(self.root / "pools", check_name(suite, "suite"))

    def anchors_path(self, anchor_set: str) -> Path:
        return self._table(self.root / "anchors", check_name(anchor_set, "anchor set"))

    def run_path(self, experiment: str, run: str) -> Path:
        """The run file of an arm, or of one training seed of it (``<arm>@seed<k>``)."""
        arm, _, seed = run.partition("@")
        check_name(arm, "arm")
        if seed and not SEED_SUFFIX.match(seed):
            raise InputError(f"run name {run!r} is not allowed",
                             hint="name a seed's run <arm>@seed<k>, e.g. variant@seed2")
        return self._table(self.root / "runs" / check_name(experiment), run)

    def run_arms(self, experiment: str) -> list[str]:
        """Arm names that have a run file for this experiment (file stem, any table type)."""
        folder = self.root / "runs" / check_name(experiment)
        if not folder.is_dir():
            return []
        return sorted({path.stem for path in folder.iterdir() if path.suffix in TABLE_SUFFIXES})

    def relative(self, path: Path) -> str:
        """How a file is named in messages: relative to the workspace when inside it."""
        try:
            return str(Path(path).resolve().relative_to(self.root))
        except ValueError:
            return str(path)

    def _table(self, stem_folder: Path, name: str) -> Path:
        """The existing table for a name, whatever its extension; .jsonl when none exists.
        Two files for one name (``a.jsonl`` and ``a.csv``) are refused, naming both: reading
        one silently would leave the other unread and out of the fingerprint."""
        found = [stem_folder / f"{name}{suffix}" for suffix in TABLE_SUFFIXES
                 if (stem_folder / f"{name}{suffix}").exists()]
        if len(found) > 1:
            names = " and ".join(self.relative(path) for path in found)
            raise InputError(f"{names} are one table in {len(found)} formats; langchef will not "
                             "guess which one to read", hint="keep exactly one of them")
        return found[0] if found else stem_folder / f"{name}.jsonl"
