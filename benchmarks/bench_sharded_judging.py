"""Wall time of judging with 1 shard and with N shards (issue 16's closing figure).

The same workspace as tests/pipeline/test_sharded_judging.py (10^4 goldens, two arms, so
2 x 10^4 calls), judged by the ``sharded_judging`` job under the multiprocess executor
against the chat-completions test server on 127.0.0.1 (50 ms per call). Each run gets a
fresh workspace, so each pays for every call:

    PYTHONPATH=. python benchmarks/bench_sharded_judging.py [--goldens 10000] [--shards 1 8]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goldens", type=int, default=10_000)
    parser.add_argument("--shards", type=int, nargs="+", default=[1, 8])
    arguments = parser.parse_args()
    os.environ["LANGCHEF_SHARD_TEST_GOLDENS"] = str(arguments.goldens)
    from tests.core.test_judge_shards import graded
    from tests.core.test_openai_judge import ChatServer
    from tests.pipeline import test_sharded_judging as case

    server = ChatServer(latency_s=0.05, default=graded, keep_bodies=False)
    server.thread.start()
    try:
        with tempfile.TemporaryDirectory() as folder:
            for shards in arguments.shards:
                root = case.judged_workspace(Path(folder) / f"s{shards}", server.base_url)
                before, server.max_in_flight = server.calls, 0
                result = case.finished(case.job_process(root, shards, server))
                print(f"{shards} shard(s): {result['seconds']:.1f} s wall for "
                      f"{server.calls - before:,} calls, at most {server.max_in_flight} in "
                      f"flight (max_concurrency {case.CONCURRENCY})", flush=True)
    finally:
        server.httpd.shutdown()


if __name__ == "__main__":
    main()
