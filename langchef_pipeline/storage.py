"""Where asset values live between steps: files in the run's storage, read back from memory
when the step that wrote them ran in this process.

Dagster's default IO manager pickles every output to a file and unpickles it again in each
downstream step: at 10^5 goldens that is dozens of loads of the same tables (issue 19). This
one writes the same kind of file (so `dagster dev`, a re-executed step or another process
still finds every value), and keeps the value it wrote in memory, keyed by that file and its
size and modification time: with the in-process executor (`langchef readout`, and the
readout job in the UI) a downstream step gets the object itself, and no table is unpickled
by a step that only needs a few numbers of it. A file written by another process is always
read from disk.

On an ephemeral instance (`langchef readout` with no $DAGSTER_HOME) the run's storage is a
temporary folder deleted with the process and every step runs in this process, so nothing
is written: pickling 10^6-golden tables only to throw the files away cost seconds and, with
pickle's memo of every object, gigabytes (issue 19).
"""

from __future__ import annotations

import os
import pickle
import tempfile
import threading
from pathlib import Path

import dagster as dg

from langchef_core.scoring.retrieval.inputs import keep_validated_frames

_MEMORY: dict[str, tuple[tuple[int, int], object]] = {}
_LOCK = threading.Lock()
_KEPT = 64  # values of recent steps kept in memory (a readout writes about 20 per partition)


def _stamp(path: Path) -> tuple[int, int]:
    status = path.stat()
    return status.st_size, status.st_mtime_ns


class StepValues(dg.IOManager):
    def __init__(self, base: Path, *, in_memory: bool = False):
        self.base, self.in_memory = base, in_memory
        self._values: dict[str, object] = {}  # this run's values, when kept in memory only

    def _path(self, context) -> Path:
        if context.has_asset_key:
            return self.base.joinpath(*context.get_asset_identifier())
        # A step inside a graph-backed asset (a judging shard): run id, step key, output.
        return self.base.joinpath(*context.get_identifier())

    def handle_output(self, context: dg.OutputContext, obj) -> None:
        path = self._path(context)
        if self.in_memory:
            self._values[str(path)] = obj
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path.parent, delete=False, prefix=".tmp-") as handle:
            pickle.dump(obj, handle, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(handle.name, path)  # a reader never sees half a file
        with _LOCK:
            _MEMORY.pop(str(path), None)
            _MEMORY[str(path)] = (_stamp(path), obj)
            while len(_MEMORY) > _KEPT:
                _MEMORY.pop(next(iter(_MEMORY)))

    def load_input(self, context: dg.InputContext):
        path = self._path(context)
        if str(path) in self._values:
            return self._values[str(path)]
        with _LOCK:
            kept = _MEMORY.get(str(path))
        if kept is not None and kept[0] == _stamp(path):
            return kept[1]
        with open(path, "rb") as handle:
            return pickle.load(handle)


class StepValueStorage(dg.ConfigurableIOManagerFactory):
    """Asset values in files under the instance's storage folder (``base_dir`` overrides
    it), read back from memory within the process that wrote them."""

    base_dir: str | None = None

    def create_io_manager(self, context) -> StepValues:
        # Step values are never edited in place, so each table is validated once per run.
        keep_validated_frames()
        base = Path(self.base_dir) if self.base_dir else Path(context.instance.storage_directory())
        return StepValues(base, in_memory=not self.base_dir and context.instance.is_ephemeral)
