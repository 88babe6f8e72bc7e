"""langchef_pipeline: the Dagster orchestration around langchef_core (assets, checks, CLI)."""

import os
import sys

# pyarrow's allocator for langchef's own processes (the CLI, `dagster dev`), read when pyarrow
# first allocates. On Linux, jemalloc scores a 10^6 × 100 retrieval run from parquet in 21 s
# where the default, mimalloc, takes 27 s, most of the difference page faults (issue 19;
# benchmarks/bench_retrieval.py). A value the user set is kept.
if sys.platform.startswith("linux"):
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")
    # jemalloc keeps freed pages resident for a while and, by default, hands them back only
    # as the process allocates again: a retrieval run read whole and then cut to its top k
    # (``RankedRun.from_frame(depth=k)``) left its gigabyte resident while the qrels were
    # read on top of it (10^6 × 100 from parquet: peak 1.7–2.3 GB). A background thread
    # returns them within about 50 ms (peak 1.6–1.7 GB; 1.9 GB at 200 ms) for about 0.1–0.2 s
    # more page faults; forcing every free back at once (decay 0) costs about 0.9 s (issue 31).
    os.environ.setdefault("JE_ARROW_MALLOC_CONF", "background_thread:true,dirty_decay_ms:50,muzzy_decay_ms:0")

# One OpenBLAS thread, read when numpy first loads. The readout's matrix products are thin
# (resamples × units by a handful of integer columns), and OpenBLAS's extra threads spin
# while they wait: on the loaded 2-core machine the 10^6-golden cost bootstrap took 38.6 s
# with them and 14.9 s without (issue 31). No number moves: floating sums whose bits would
# depend on the kernel never go through BLAS (langchef_core/stats/products.py), and integer
# sums are exact. A value the user set is kept.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
