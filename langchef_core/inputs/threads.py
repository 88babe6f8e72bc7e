"""Work spread over the processor's cores on threads: for steps whose time goes to numpy and
pyarrow calls on whole arrays, which let go of the interpreter while they run, so two
threads on two cores take about 60% of the time of one (issue 31)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor


def on_threads(function: Callable, items: Iterable) -> list:
    """``[function(item) for item in items]``, on one thread per core (at most one per item);
    in order, and the first error raised as it would be in the loop."""
    items = list(items)
    cores = os.cpu_count() or 1
    if len(items) < 2 or cores < 2:
        return [function(item) for item in items]
    with ThreadPoolExecutor(max_workers=min(len(items), cores)) as pool:
        return list(pool.map(function, items))
