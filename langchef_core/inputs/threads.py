"""Work spread over the processor's cores on threads: for steps whose time goes to numpy and
pyarrow calls on whole arrays, which let go of the interpreter while they run, so two
threads on two cores take about 60% of the time of one (issue 31)."""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterable, Iterator
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


_END = object()


def ahead(items: Iterable, *, buffered: int = 2) -> Iterator:
    """The items of ``items`` in order, produced on a thread of their own up to ``buffered``
    ahead of the caller: a parquet reader decodes the next batch while the caller works on
    this one. An error of the producer is raised where its item would have been; a caller
    that stops early stops the producer too. One core: the plain loop."""
    if (os.cpu_count() or 1) < 2:
        yield from items
        return
    slots: queue.Queue = queue.Queue(maxsize=max(1, buffered))
    stop = threading.Event()

    def put(entry) -> bool:
        while not stop.is_set():
            try:
                slots.put(entry, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def produce() -> None:
        try:
            for item in items:
                if not put((item, None)):
                    return
        except BaseException as error:  # raised in the caller's thread, at its place
            put((_END, error))
            return
        put((_END, None))

    producer = threading.Thread(target=produce, name="langchef-ahead", daemon=True)
    producer.start()
    try:
        while True:
            item, error = slots.get()
            if item is _END:
                if error is not None:
                    raise error
                return
            yield item
    finally:
        stop.set()
        producer.join()
