"""Retrieval metrics at scale: langchef against ranx and pytrec_eval, side by side.

Every library gets the same seeded synthetic collection, built as integer arrays: N queries,
each with a ranked list of D distinct documents (default 100) from a corpus of 10^7, and
1-10 positives per query, about half of them ranked somewhere in the list. Each library
then builds its own input from those arrays (timed: langchef takes integer codes directly;
ranx and pytrec_eval need nested dicts of string ids) and computes recall@k, MRR@k and
nDCG@k per query and their means (timed). pytrec_eval's reciprocal rank has no cut-off, so
it is evaluated on the run cut at k, and that cut is part of its input building.

Each library runs in its own subprocess, one after the other, and its peak resident memory
is read from that process's rusage (``os.wait4``), which counts the shared data generation
too. The means of the three libraries are printed so agreement can be seen.

    python benchmarks/bench_retrieval.py --queries 100000
    python benchmarks/bench_retrieval.py --queries 1000000 --json benchmarks/results/retrieval.json

At 10^6 queries × 100 documents each peer needs about 8-9 GB; the default is 10^5.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

CORPUS = 10_000_000  # also ≥ the number of queries, whose ids share the same id table
LIBRARIES = ("langchef", "ranx", "pytrec_eval")


def generate(n_queries: int, list_length: int, seed: int):
    """Seeded collection as integer arrays: docs (query-major, rank order), positives."""
    rng = np.random.default_rng(seed)
    start = rng.integers(0, CORPUS, n_queries)
    # Stride below CORPUS / (2·list_length): list and unretrieved positives stay distinct.
    stride = rng.integers(1, CORPUS // (2 * list_length), n_queries)
    docs = np.empty(n_queries * list_length, np.int32)
    block = 50_000  # rows of the query × rank matrix per step, to keep temporaries small
    ranks = np.arange(list_length, dtype=np.int64)[None, :]
    for q0 in range(0, n_queries, block):
        q1 = min(n_queries, q0 + block)
        docs[q0 * list_length:q1 * list_length] = (
            (start[q0:q1, None] + ranks * stride[q0:q1, None]) % CORPUS).ravel()
    n_positive = rng.integers(1, 11, n_queries)
    positive_query = np.repeat(np.arange(n_queries, dtype=np.int32), n_positive)
    index = np.arange(positive_query.size) - np.repeat(np.cumsum(n_positive) - n_positive, n_positive)
    # Distinct ranks for a query's positives: offset + j·unit (mod list length), unit coprime.
    units = np.array([u for u in range(1, list_length) if np.gcd(u, list_length) == 1])
    offset = rng.integers(0, list_length, n_queries)[positive_query]
    unit = units[rng.integers(0, units.size, n_queries)][positive_query]
    position = np.where(rng.random(positive_query.size) < 0.5,
                        (offset + index * unit) % list_length, list_length + index)
    positive_doc = ((start[positive_query] + position * stride[positive_query]) % CORPUS).astype(np.int32)
    return docs, positive_query, positive_doc


def run_langchef(docs, positive_query, positive_doc, n_queries, list_length, k):
    import langchef_core as lc

    started = time.perf_counter()
    offsets = np.arange(0, n_queries * list_length + 1, list_length, dtype=np.int64)
    built = time.perf_counter()
    metrics = lc.retrieval_metrics_arrays(offsets, docs, positive_query, positive_doc, k=k)
    means = {"recall": float(metrics.recall.mean()), "mrr": float(metrics.reciprocal_rank.mean()),
             "ndcg": float(metrics.ndcg.mean())}
    return built - started, time.perf_counter() - built, means


def nested_dicts(docs, positive_query, positive_doc, n_queries, list_length):
    """The {query: {doc: score}} run and {query: {doc: 1}} qrels that both peers take.

    Every doc id string is made once and shared by all the lists that hold it (as a loader
    with an id table would), which spares the peers about 5 GB at 10^6 queries: a
    conservative setup for this comparison.
    """
    names = list(map(str, range(CORPUS)))
    scores = [float(list_length - i) for i in range(list_length)]
    rows = docs.reshape(n_queries, list_length)
    run = {names[q]: dict(zip(map(names.__getitem__, rows[q].tolist()), scores))
           for q in range(n_queries)}
    bounds = np.r_[0, np.cumsum(np.bincount(positive_query, minlength=n_queries))].tolist()
    labels = positive_doc.tolist()
    qrels = {names[q]: dict.fromkeys(map(names.__getitem__, labels[bounds[q]:bounds[q + 1]]), 1)
             for q in range(n_queries)}
    return run, qrels


def run_ranx(docs, positive_query, positive_doc, n_queries, list_length, k):
    import ranx

    started = time.perf_counter()
    run, qrels = nested_dicts(docs, positive_query, positive_doc, n_queries, list_length)
    ranx_qrels, ranx_run = ranx.Qrels(qrels), ranx.Run(run)
    del run, qrels
    built = time.perf_counter()
    values = ranx.evaluate(ranx_qrels, ranx_run, [f"recall@{k}", f"mrr@{k}", f"ndcg@{k}"])
    means = {"recall": float(values[f"recall@{k}"]), "mrr": float(values[f"mrr@{k}"]),
             "ndcg": float(values[f"ndcg@{k}"])}
    return built - started, time.perf_counter() - built, means


def run_pytrec_eval(docs, positive_query, positive_doc, n_queries, list_length, k):
    import itertools

    import pytrec_eval

    started = time.perf_counter()
    run, qrels = nested_dicts(docs, positive_query, positive_doc, n_queries, list_length)
    # Dicts keep rank order, so the first k items are the top k.
    cut = {q: dict(itertools.islice(ranked.items(), k)) for q, ranked in run.items()}
    at_k = pytrec_eval.RelevanceEvaluator(qrels, {f"recall.{k}", f"ndcg_cut.{k}"})
    reciprocal = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"})
    built = time.perf_counter()
    scores = at_k.evaluate(run)
    first = reciprocal.evaluate(cut)
    means = {"recall": float(np.mean([s[f"recall_{k}"] for s in scores.values()])),
             "mrr": float(np.mean([s["recip_rank"] for s in first.values()])),
             "ndcg": float(np.mean([s[f"ndcg_cut_{k}"] for s in scores.values()]))}
    return built - started, time.perf_counter() - built, means


WORKERS = {"langchef": run_langchef, "ranx": run_ranx, "pytrec_eval": run_pytrec_eval}


def worker(args) -> None:
    data = generate(args.queries, args.docs, args.seed)
    build, compute, means = WORKERS[args.worker](*data, args.queries, args.docs, args.k)
    print(json.dumps({"library": args.worker, "build_s": build, "compute_s": compute,
                      "total_s": build + compute, "means": means}))


def measure(library: str, args) -> dict:
    """Run one library in its own process; peak RSS from that process's own rusage.

    The process's data segment is capped (``--memory-limit-gb``) so that a peer that
    outgrows the machine fails alone instead of pushing other work into the OOM killer.
    """
    command = [sys.executable, __file__, "--worker", library, "--queries", str(args.queries),
               "--docs", str(args.docs), "--k", str(args.k), "--seed", str(args.seed)]
    limit = int(args.memory_limit_gb * 1e9)

    def cap_memory():
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        process = subprocess.Popen(command, stdout=out, stderr=err, text=True, preexec_fn=cap_memory)
        # wait4 gives this child's own rusage: its peak RSS, whatever ran before it.
        _, status, usage = os.wait4(process.pid, 0)
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        stdout, stderr = out.read(), err.read()
    peak = usage.ru_maxrss * 1024 / 1e9  # ru_maxrss is in KiB on Linux
    if process.returncode != 0:
        last = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit {process.returncode}"
        return {"library": library, "failed": last, "peak_rss_gb": peak}
    result = json.loads(stdout.strip().splitlines()[-1])
    result["peak_rss_gb"] = peak
    return result


def report(results: list[dict], args) -> str:
    lines = [f"recall/MRR/nDCG@{args.k}: {args.queries:,} queries × {args.docs} ranked docs, "
             f"1-10 positives each, seed {args.seed}",
             f"{'library':<12}{'build s':>10}{'compute s':>11}{'total s':>10}{'peak GB':>9}"
             f"{'recall':>10}{'MRR':>10}{'nDCG':>10}"]
    for r in results:
        if "failed" in r:
            lines.append(f"{r['library']:<12} did not finish (peak {r['peak_rss_gb']:.2f} GB under the "
                         f"{args.memory_limit_gb:g} GB cap): {r['failed']}")
            continue
        m = r["means"]
        lines.append(f"{r['library']:<12}{r['build_s']:>10.2f}{r['compute_s']:>11.2f}"
                     f"{r['total_s']:>10.2f}{r['peak_rss_gb']:>9.2f}{m['recall']:>10.6f}"
                     f"{m['mrr']:>10.6f}{m['ndcg']:>10.6f}")
    done = [r for r in results if "failed" not in r]
    ours = next((r for r in done if r["library"] == "langchef"), None)
    peers = [r for r in done if r["library"] != "langchef"]
    if ours and peers:
        fastest = min(peers, key=lambda r: r["total_s"])
        smallest = min(peers, key=lambda r: r["peak_rss_gb"])
        lines.append(f"speed-up vs the faster peer ({fastest['library']}): "
                     f"{fastest['total_s'] / ours['total_s']:.1f}× end to end (target ≥ 15×)")
        lines.append(f"peak memory vs the leaner peer ({smallest['library']}): "
                     f"{ours['peak_rss_gb'] / smallest['peak_rss_gb']:.2f} of it (target ≤ 0.20)")
        worst = max(abs(ours["means"][m] - p["means"][m]) for p in peers for m in ours["means"])
        lines.append(f"largest difference of a mean from a peer: {worst:.2e}")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--docs", type=int, default=100, help="ranked documents per query")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--libraries", default=",".join(LIBRARIES),
                        help="comma-separated subset of " + ", ".join(LIBRARIES))
    parser.add_argument("--memory-limit-gb", type=float, default=14.0,
                        help="cap on each library process's data segment (default 14)")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--worker", choices=LIBRARIES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
        return
    results = []
    for library in args.libraries.split(","):
        results.append(measure(library.strip(), args))
        done = results[-1]
        print(f"  {library}: " + (f"failed ({done['failed']})" if "failed" in done else
                                  f"{done['total_s']:.2f} s") + f", {done['peak_rss_gb']:.2f} GB",
              flush=True)
    text = report(results, args)
    print(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"settings": vars(args) | {"json": str(args.json)},
                                         "results": results, "report": text}, indent=2))


if __name__ == "__main__":
    main()
