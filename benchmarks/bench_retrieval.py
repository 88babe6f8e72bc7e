"""Retrieval metrics from the files a user has: langchef against ranx and pytrec_eval.

One seeded synthetic collection (N queries, each with a ranked list of D distinct documents
from a corpus of 10^7 or ``--corpus``, and 1-10 positives per query, about half of them
ranked) is written to disk once, untimed, in each tool's own format: TREC run and qrels
files for the peers, and a
langchef workspace's arm run (``example_id``, ``retrieved``) and qrels (``query_id``,
``doc_id``, ``relevant``) as JSONL and as parquet. Each tool then runs in its own process
and is timed from its files to per-query recall@k, MRR@k and nDCG@k and their means (its
imports included; they are also timed apart, for a second ratio between processes that have
their modules loaded), with its own loader: pytrec_eval's ``parse_run``/``parse_qrel``, ranx's
``Run.from_file``/``Qrels.from_file``, and langchef's ``scoring_inputs`` (the loader of
``retrieval_metrics``: ``RankedRun.from_file`` and ``read_table`` → ``Judgements``, the
validation a readout applies, a parquet run read beside its qrels) → ``Judgements.over`` →
``score_run``, as a readout scores an arm. langchef validates every list whole and keeps
each list's first k ids (``RankedRun.from_file(depth=k)``, which cuts a parquet file's
lists batch by batch as they are decoded), as any caller that scores at k may. No table is
built by one side and charged to the other. pytrec_eval's reciprocal rank has no cut-off, so it is also
evaluated on the run cut at k, and that cut is part of its time. Each tool's CPU time over
the same span (all its threads) is printed too: langchef's, over the machine's cores, bounds
the ratio it could reach there however well its work overlapped. Peak resident memory is read
from each process's own rusage (``os.wait4``); the means are printed so agreement can be seen.
Each process's data segment is capped (``--memory-limit-gb``); a tool that runs out fails
alone, and the ratios against it use the time and memory it had used when it failed, so
they are printed as bounds (``≥``, ``≤``). A peer whose memory, estimated from the bytes per
ranked entry it used at 10^5 queries, exceeds the cap is not run at all, and the report says
so and why (``--run-all`` runs it anyway). The langchef workers run with a langchef
process's settings (``langchef_pipeline``: pyarrow's jemalloc allocator on Linux).

    python benchmarks/bench_retrieval.py --queries 100000 --docs 20
    python benchmarks/bench_retrieval.py --queries 100000 --docs 100 --corpus 100000
    python benchmarks/bench_retrieval.py --queries 1000000 --docs 100 --files /tmp/bench-1m \
        --json benchmarks/results/retrieval.json
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

CORPUS = 10_000_000
LIBRARIES = ("langchef-jsonl", "langchef-parquet", "ranx", "pytrec_eval")
# Peak memory of each peer per ranked entry, from its runs at 10^5 × 20 and 10^5 × 100
# (README): both hold a Python dict entry per (query, doc), so their memory grows linearly
# with the entries. A peer whose estimate exceeds the cap is not run (--run-all to try).
PEER_BYTES_PER_ENTRY = {"pytrec_eval": 206.0, "ranx": 411.0}


def generate(n_queries: int, list_length: int, seed: int, corpus: int = CORPUS):
    """Seeded collection as integer arrays: docs (query-major, rank order), positives."""
    rng = np.random.default_rng(seed)
    start = rng.integers(0, corpus, n_queries)
    # Stride below corpus / (2·list_length): list and unretrieved positives stay distinct.
    stride = rng.integers(1, corpus // (2 * list_length), n_queries)
    docs = np.empty(n_queries * list_length, np.int32)
    block = 50_000  # rows of the query × rank matrix per step, to keep temporaries small
    ranks = np.arange(list_length, dtype=np.int64)[None, :]
    for q0 in range(0, n_queries, block):
        q1 = min(n_queries, q0 + block)
        docs[q0 * list_length:q1 * list_length] = (
            (start[q0:q1, None] + ranks * stride[q0:q1, None]) % corpus).ravel()
    n_positive = rng.integers(1, 11, n_queries)
    positive_query = np.repeat(np.arange(n_queries, dtype=np.int32), n_positive)
    index = np.arange(positive_query.size) - np.repeat(np.cumsum(n_positive) - n_positive, n_positive)
    # Distinct ranks for a query's positives: offset + j·unit (mod list length), unit coprime.
    units = np.array([u for u in range(1, list_length) if np.gcd(u, list_length) == 1])
    offset = rng.integers(0, list_length, n_queries)[positive_query]
    unit = units[rng.integers(0, units.size, n_queries)][positive_query]
    position = np.where(rng.random(positive_query.size) < 0.5,
                        (offset + index * unit) % list_length, list_length + index)
    positive_doc = ((start[positive_query] + position * stride[positive_query]) % corpus).astype(np.int32)
    return docs, positive_query, positive_doc


def write_files(folder: Path, docs, positive_query, positive_doc, n_queries, list_length) -> None:
    """The same collection in every tool's format (untimed), its text built by pyarrow a block
    of queries at a time: 10^8 entries as Python strings took over 10 GB to write."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.parquet as pq

    def names(prefix, numbers):
        return pc.binary_join_element_wise(prefix, pa.array(numbers).cast(pa.string()), "")

    def write(handle, *parts):
        """One line per row, its parts concatenated; the bytes as they lie in the array."""
        text = pc.binary_join_element_wise(*parts, "\n", "")
        offsets = np.frombuffer(text.buffers()[1], np.int32, len(text) + 1, text.offset * 4)
        handle.write(memoryview(text.buffers()[2])[offsets[0]:offsets[-1]])

    order = np.random.default_rng(1).permutation(n_queries)  # run rows in no particular order
    query_names = names("q", np.arange(n_queries))
    block = 50_000
    example_ids, retrieved = [], []
    with open(folder / "run.trec", "wb") as trec, open(folder / "run.jsonl", "wb") as jsonl:
        for q0 in range(0, n_queries, block):
            queries = order[q0:q0 + block]
            doc_ids = names("d", docs[(queries[:, None] * list_length + np.arange(list_length)).ravel()])
            query_ids = query_names.take(pa.array(queries))
            ranks = np.tile(np.arange(1, list_length + 1), queries.size)
            write(trec, query_ids.take(pa.array(np.repeat(np.arange(queries.size), list_length))), " Q0 ",
                  doc_ids, " ", pa.array(ranks).cast(pa.string()), " ",
                  pa.array(list_length - ranks + 1).cast(pa.string()), " bench")
            lists = pa.ListArray.from_arrays(
                pa.array(np.arange(0, queries.size * list_length + 1, list_length, dtype=np.int32)), doc_ids)
            write(jsonl, '{"example_id":"', query_ids, '","retrieved":["', pc.binary_join(lists, '","'), '"]}')
            example_ids.append(query_ids)
            retrieved.append(lists)
    run = pa.table({"example_id": pa.chunked_array(example_ids).combine_chunks(),
                    "retrieved": pa.chunked_array(retrieved).combine_chunks()})
    pq.write_table(run, folder / "run.parquet")
    del run, example_ids, retrieved
    qrels = pa.table({"query_id": query_names.take(pa.array(positive_query)),
                      "doc_id": names("d", positive_doc),
                      "relevant": pa.array(np.ones(positive_query.size, np.int64))})
    pq.write_table(qrels, folder / "qrels.parquet")
    with open(folder / "qrels.trec", "wb") as trec, open(folder / "qrels.jsonl", "wb") as jsonl:
        for start in range(0, qrels.num_rows, block):
            query_ids = qrels.column("query_id").slice(start, block).combine_chunks()
            doc_ids = qrels.column("doc_id").slice(start, block).combine_chunks()
            write(trec, query_ids, " 0 ", doc_ids, " 1")
            write(jsonl, '{"query_id":"', query_ids, '","doc_id":"', doc_ids, '","relevant":1}')


def run_langchef(folder: Path, k: int, suffix: str) -> dict:
    import langchef_pipeline  # noqa: F401  (the settings of a langchef process: pyarrow's allocator)
    from langchef_core.inputs.id_order import sorted_union
    from langchef_core.scoring.retrieval.metrics import score_run, scoring_inputs

    run, judgements = scoring_inputs(folder / f"run{suffix}", folder / f"qrels{suffix}", k=k)
    # As a readout scores an arm: the positives' query codes come from the judgements.
    queries = sorted_union(run.queries, judgements.queries)
    judged = judgements.over(queries)
    _, metrics = score_run(run, judged.positives, judgements.queries, k=k, queries=queries,
                           positive_query=judged.positive_query)
    return {"recall": float(np.mean(metrics.recall)), "mrr": float(np.mean(metrics.reciprocal_rank)),
            "ndcg": float(np.mean(metrics.ndcg))}


def run_ranx(folder: Path, k: int) -> dict:
    import ranx

    qrels = ranx.Qrels.from_file(str(folder / "qrels.trec"), kind="trec")
    run = ranx.Run.from_file(str(folder / "run.trec"), kind="trec")
    values = ranx.evaluate(qrels, run, [f"recall@{k}", f"mrr@{k}", f"ndcg@{k}"], return_mean=False)
    return {"recall": float(np.mean(values[f"recall@{k}"])), "mrr": float(np.mean(values[f"mrr@{k}"])),
            "ndcg": float(np.mean(values[f"ndcg@{k}"]))}


def run_pytrec_eval(folder: Path, k: int) -> dict:
    import pytrec_eval

    with open(folder / "run.trec") as handle:
        run = pytrec_eval.parse_run(handle)
    with open(folder / "qrels.trec") as handle:
        qrels = pytrec_eval.parse_qrel(handle)
    cut = {q: dict(sorted(ranked.items(), key=lambda item: -item[1])[:k]) for q, ranked in run.items()}
    scores = pytrec_eval.RelevanceEvaluator(qrels, {f"recall.{k}", f"ndcg_cut.{k}"}).evaluate(run)
    first = pytrec_eval.RelevanceEvaluator(qrels, {"recip_rank"}).evaluate(cut)
    return {"recall": float(np.mean([s[f"recall_{k}"] for s in scores.values()])),
            "mrr": float(np.mean([s["recip_rank"] for s in first.values()])),
            "ndcg": float(np.mean([s[f"ndcg_cut_{k}"] for s in scores.values()]))}


# What each tool imports before it reads a file: timed apart, so the report can also give the
# time from files to metrics in a process that has them loaded already.
IMPORTS = {"langchef": ("langchef_pipeline", "langchef_core.inputs.id_order",
                        "langchef_core.scoring.retrieval.metrics"),
           "ranx": ("ranx",), "pytrec_eval": ("pytrec_eval",)}


def worker(args) -> None:
    import importlib
    started, cpu = time.perf_counter(), time.process_time()  # the process's CPU: every thread's
    for module in IMPORTS[args.worker.split("-")[0]]:
        importlib.import_module(module)
    imported = time.perf_counter()
    if args.worker.startswith("langchef"):
        means = run_langchef(args.dir, args.k, ".jsonl" if args.worker.endswith("jsonl") else ".parquet")
    elif args.worker == "ranx":
        means = run_ranx(args.dir, args.k)
    else:
        means = run_pytrec_eval(args.dir, args.k)
    print(json.dumps({"library": args.worker, "total_s": time.perf_counter() - started,
                      "import_s": imported - started, "cpu_s": time.process_time() - cpu,
                      "means": means}))


def measure(library: str, args) -> dict:
    """Run one library in its own process; peak RSS from that process's own rusage.

    The process's data segment is capped (``--memory-limit-gb``) so that a peer that
    outgrows the machine fails alone instead of pushing other work into the OOM killer.
    """
    command = [sys.executable, __file__, "--worker", library, "--dir", str(args.dir), "--k", str(args.k)]
    limit = int(args.memory_limit_gb * 1e9)

    def cap_memory():
        resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))

    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err, text=True, preexec_fn=cap_memory)
        # wait4 gives this child's own rusage: its peak RSS, whatever ran before it.
        _, status, usage = os.wait4(process.pid, 0)
        ran = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0), err.seek(0)
        stdout, stderr = out.read(), err.read()
    peak = usage.ru_maxrss * 1024 / 1e9  # ru_maxrss is in KiB on Linux
    if process.returncode != 0:
        last = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit {process.returncode}"
        # Time and memory until it failed: lower bounds on what it would have needed.
        return {"library": library, "failed": last, "peak_rss_gb": peak, "ran_s": ran}
    result = json.loads(stdout.strip().splitlines()[-1])
    result["peak_rss_gb"] = peak
    return result


def beyond_the_cap(library: str, args) -> dict | None:
    """The reason a peer is not run at this size, or None: its memory, estimated from its
    measured bytes per ranked entry, exceeds the process cap."""
    per_entry = PEER_BYTES_PER_ENTRY.get(library)
    if per_entry is None or args.run_all:
        return None
    need = per_entry * args.queries * args.docs / 1e9
    if need <= args.memory_limit_gb:
        return None
    return {"library": library, "skipped": f"not run: it would need about {need:.0f} GB "
                                           f"({per_entry:.0f} bytes per ranked entry, as measured at "
                                           f"10^5 queries), over the {args.memory_limit_gb:g} GB cap; "
                                           f"at 10^6 × 100 it ran out of memory (README)"}


def report(results: list[dict], args) -> str:
    lines = [f"recall/MRR/nDCG@{args.k} from files: {args.queries:,} queries × {args.docs} ranked docs, "
             f"from a corpus of {args.corpus:,}, 1-10 positives each, seed {args.seed}",
             f"{'tool':<18}{'file → metrics s':>17}{'imports s':>10}{'CPU s':>8}{'peak GB':>9}"
             f"{'recall':>10}{'MRR':>10}{'nDCG':>10}"]
    for r in results:
        if "skipped" in r:
            lines.append(f"{r['library']:<18} {r['skipped']}")
            continue
        if "failed" in r:
            lines.append(f"{r['library']:<18} did not finish: failed after {r['ran_s']:.2f} s at "
                         f"{r['peak_rss_gb']:.2f} GB: {r['failed']}")
            continue
        m = r["means"]
        lines.append(f"{r['library']:<18}{r['total_s']:>17.2f}{r['import_s']:>10.2f}{r['cpu_s']:>8.2f}"
                     f"{r['peak_rss_gb']:>9.2f}{m['recall']:>10.6f}{m['mrr']:>10.6f}{m['ndcg']:>10.6f}")
    done = [r for r in results if "failed" not in r and "skipped" not in r]
    peers = [r for r in results if not r["library"].startswith("langchef") and "skipped" not in r]
    for ours in (r for r in done if r["library"].startswith("langchef")):
        if not peers:
            break
        lines.append(f"{ours['library']}: " + _against(ours, peers))
    return "\n".join(lines)


def _against(ours: dict, peers: list[dict]) -> str:
    """Ratios to the faster and the leaner peer. A peer that failed is charged only the time
    and memory it had used when it failed, so against it the ratios are bounds ("≥", "≤")."""
    def seconds(r):
        return r["ran_s"] if "failed" in r else r["total_s"]

    fastest = min(peers, key=seconds)
    smallest = min(peers, key=lambda r: r["peak_rss_gb"])
    finished = [p for p in peers if "failed" not in p]
    speed = f"{'≥ ' if 'failed' in fastest else ''}{seconds(fastest) / ours['total_s']:.2f}×"
    memory = f"{'≤ ' if 'failed' in smallest else ''}{ours['peak_rss_gb'] / smallest['peak_rss_gb']:.2f}"
    text = (f"{speed} the faster peer ({fastest['library']}) end to end (target ≥ 15×); {memory} of "
            f"the leaner peer's memory ({smallest['library']}, target ≤ 0.33)")
    if "failed" not in fastest:
        after = (fastest["total_s"] - fastest["import_s"]) / (ours["total_s"] - ours["import_s"])
        text += f"; {after:.2f}× it once both have imported their modules"
    # However well its work overlaps, a process on c cores takes at least its CPU time / c.
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    text += (f"; its {ours['cpu_s']:.2f} CPU s on this machine's {cores} cores allow at most "
             f"{seconds(fastest) * cores / ours['cpu_s']:.1f}× the faster peer")
    if finished:
        worst = max(abs(ours["means"][m] - p["means"][m]) for p in finished for m in ours["means"])
        text += f"; largest difference of a mean: {worst:.1e}"
    return text


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queries", type=int, default=100_000)
    parser.add_argument("--docs", type=int, default=20, help="ranked documents per query")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--corpus", type=int, default=CORPUS,
                        help="documents the lists are drawn from (default 10^7, so a parquet run's "
                             "ids are stored as text; 10^5 keeps them as dictionary codes)")
    parser.add_argument("--libraries", default=",".join(LIBRARIES),
                        help="comma-separated subset of " + ", ".join(LIBRARIES))
    parser.add_argument("--memory-limit-gb", type=float, default=14.0,
                        help="cap on each tool process's data segment (default 14)")
    parser.add_argument("--run-all", action="store_true",
                        help="run the peers even where their estimated memory exceeds the cap")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--files", type=Path,
                        help="keep the written files in this folder and reuse them when they are "
                             "already there for the same settings (writing 10^8 entries takes minutes)")
    parser.add_argument("--worker", choices=LIBRARIES, help=argparse.SUPPRESS)
    parser.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        worker(args)
        return
    with tempfile.TemporaryDirectory(prefix="langchef-bench-retrieval-") as scratch:
        args.dir = args.files or Path(scratch)
        stamp = args.dir / "settings.json"
        if args.corpus < 4 * args.docs:
            parser.error("--corpus must be at least 4 × --docs (each list's ids are distinct)")
        settings = json.dumps({"queries": args.queries, "docs": args.docs, "seed": args.seed,
                               **({"corpus": args.corpus} if args.corpus != CORPUS else {})})
        if stamp.is_file() and stamp.read_text().strip() == settings:
            print(f"  reusing the files in {args.dir}", flush=True)
        else:
            args.dir.mkdir(parents=True, exist_ok=True)
            stamp.unlink(missing_ok=True)
            started = time.perf_counter()
            write_files(args.dir, *generate(args.queries, args.docs, args.seed, args.corpus),
                        args.queries, args.docs)
            stamp.write_text(settings)  # last: a folder whose writing was cut short is written again
            print(f"  files written in {time.perf_counter() - started:.1f} s (untimed)", flush=True)
        results = []
        for library in args.libraries.split(","):
            skipped = beyond_the_cap(library.strip(), args)
            results.append(skipped or measure(library.strip(), args))
            done = results[-1]
            if skipped:
                print(f"  {library}: {skipped['skipped']}", flush=True)
                continue
            print(f"  {library}: " + (f"failed ({done['failed']})" if "failed" in done else
                                      f"{done['total_s']:.2f} s") + f", {done['peak_rss_gb']:.2f} GB",
                  flush=True)
    text = report(results, args)
    print(text)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({"settings": {**vars(args), "dir": None, "json": str(args.json),
                                                       "files": str(args.files) if args.files else None},
                                         "results": results, "report": text}, indent=2))


if __name__ == "__main__":
    main()
