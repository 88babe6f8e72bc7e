"""langchef_pipeline: the Dagster orchestration around langchef_core (assets, checks, CLI)."""

import os
import sys

# pyarrow's allocator for langchef's own processes (the CLI, `dagster dev`), read when pyarrow
# first allocates. On Linux, jemalloc scores a 10^6 × 100 retrieval run from parquet in 21 s
# where the default, mimalloc, takes 27 s, most of the difference page faults (issue 19;
# benchmarks/bench_retrieval.py). A value the user set is kept.
if sys.platform.startswith("linux"):
    os.environ.setdefault("ARROW_DEFAULT_MEMORY_POOL", "jemalloc")
