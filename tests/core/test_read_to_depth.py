"""A run read to a depth (issue 31): ``RankedRun.from_file(path, depth=k)`` cuts a parquet
file's ranked lists to k as each batch is decoded, once the batch's lists pass as whole lists
of ids, so a 10^6 × 100 run never holds its 10^8 ids at once. It must be the very run that
reading the whole file and cutting after validation gives, and a bad id past rank k must be
refused with the same sentence and row. ``threads.ahead``, which decodes the next batch while
this one is cut, keeps the order, raises a producer's error in its place and stops early."""

import threading

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from langchef_core.inputs import tables
from langchef_core.inputs.errors import InputError
from langchef_core.inputs.threads import ahead
from langchef_core.scoring.retrieval.inputs import RankedRun
from langchef_core.scoring.retrieval import metrics
from langchef_core.scoring.retrieval.judgements import Judgements
from langchef_core.scoring.retrieval.metrics import METRICS, retrieval_metrics, score_run, scoring_inputs


def arm_run(seed: int, rows: int = 300) -> dict:
    r = np.random.default_rng(seed)
    order = r.permutation(rows)
    return {"example_id": [f"q{i}" for i in order],
            "retrieved": [[f"d{d}" for d in r.choice(60, int(r.integers(0, 13)), replace=False)]
                          for _ in order]}


def write(folder, name: str, columns: dict, **options):
    import pyarrow as pa
    import pyarrow.parquet as pq
    path = folder / name
    if name.endswith(".jsonl"):
        pd.DataFrame(columns).to_json(path, orient="records", lines=True)
    else:
        pq.write_table(pa.table(columns), path, **options)
    return path


LAYOUTS = {"one row group": {}, "row groups of 100": {"row_group_size": 100},
           "plain text": {"use_dictionary": False},
           "plain text in row groups of 23": {"use_dictionary": False, "row_group_size": 23},
           "json lines": None}


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_a_run_read_to_a_depth_is_the_run_cut_after_reading_it_whole(tmp_path, monkeypatch, layout):
    """Parquet lists of ids kept as dictionary codes (pyarrow's default for 60 distinct ids)
    are read as codes, cut and scored as codes; plain text is cut as it is decoded."""
    monkeypatch.setattr(tables, "BATCH_ROWS", 7)  # many batches, some cut, at every depth
    columns = arm_run(seed=len(layout))
    options = LAYOUTS[layout]
    path = write(tmp_path, "run.jsonl" if options is None else "run.parquet", columns, **(options or {}))
    coded = options is not None and not layout.startswith("plain")
    if options is not None:
        assert coded == (tables._dictionary_coded(path, ["retrieved"]) == ["retrieved.list.element"])
    positives = pd.DataFrame({"query_id": [f"q{i}" for i in range(0, 300, 3)],
                              "doc_id": [f"d{i % 60}" for i in range(0, 300, 3)]})
    for depth in (1, 4, 12, 50):
        read_cut = RankedRun.from_file(path, file="run", depth=depth)
        cut_after = RankedRun.from_frame(tables.read_table(path), file="run", depth=depth)
        assert read_cut.depth == cut_after.depth == depth
        assert pa.types.is_dictionary(read_cut.lists.lists.type.value_type) == coded
        assert np.array_equal(read_cut.queries, cut_after.queries)
        assert np.array_equal(read_cut.lists.rows, cut_after.lists.rows)
        assert np.array_equal(read_cut.lists.query_rank, cut_after.lists.query_rank)
        assert read_cut.lists.lists.to_pylist() == cut_after.lists.lists.to_pylist() == \
            [items[:depth] for items in columns["retrieved"]]
        for k in sorted({1, min(depth, 5)}):
            ours, theirs = (score_run(run, positives, positives["query_id"].unique(), k=k)[1]
                            for run in (read_cut, cut_after))
            for metric in METRICS:
                assert np.array_equal(ours.values(metric), theirs.values(metric), equal_nan=True)
    whole = RankedRun.from_file(path, file="run")
    assert whole.depth is None and whole.lists.lists.to_pylist() == columns["retrieved"]


def test_lists_whose_arrow_type_is_a_dictionary_are_scored_as_their_text(tmp_path):
    """A file written from Arrow dictionary-typed lists reads back as codes, read whole or to
    a depth; validation, entries and every metric are those of the same lists as text."""
    columns = arm_run(seed=9)
    coded_type = pa.list_(pa.dictionary(pa.int32(), pa.string()))
    coded = write(tmp_path, "coded.parquet", {"example_id": columns["example_id"],
                                              "retrieved": pa.array(columns["retrieved"]).cast(coded_type)})
    plain = write(tmp_path, "plain.parquet", columns)
    positives = pd.DataFrame({"query_id": [f"q{i}" for i in range(0, 300, 2)],
                              "doc_id": [f"d{i % 60}" for i in range(0, 300, 2)]})
    for depth in (None, 3):
        ours, theirs = (RankedRun.from_file(path, file="run", depth=depth) for path in (coded, plain))
        assert pa.types.is_dictionary(ours.lists.lists.type.value_type)
        assert ours.entries.equals(theirs.entries)
        for k in (1, 3):
            got, expected = (score_run(run, positives, positives["query_id"].unique(), k=k)[1]
                             for run in (ours, theirs))
            for metric in METRICS:
                assert np.array_equal(got.values(metric), expected.values(metric), equal_nan=True)


def test_a_chunk_whose_dictionary_fell_back_to_plain_text_is_read_as_text(tmp_path):
    """pyarrow's writer stops coding once a chunk's dictionary passes its limit (1 MB by
    default; 64 bytes here) and writes the rest as plain text, which reading as codes would
    hash again: such a column is read as text."""
    columns = {"example_id": [f"q{i}" for i in range(300)],
               "retrieved": [[f"d{10 * i + j}" for j in range(10)] for i in range(300)]}
    fell_back = write(tmp_path, "fell-back.parquet", columns, dictionary_pagesize_limit=64)
    assert tables._dictionary_coded(fell_back, ["retrieved"]) == []
    coded = write(tmp_path, "coded.parquet", {"example_id": columns["example_id"],
                                              "retrieved": [["d1", "d2"]] * 300})
    assert tables._dictionary_coded(coded, ["retrieved"]) == ["retrieved.list.element"]
    assert RankedRun.from_file(fell_back, depth=3).lists.lists.to_pylist() == \
        [items[:3] for items in columns["retrieved"]]
    # Lists whose leaf is named as older writers name it are found too; lists of numbers not.
    older = write(tmp_path, "older.parquet", {"example_id": columns["example_id"],
                                              "retrieved": [["d1", "d2"]] * 300},
                  use_compliant_nested_type=False)
    assert tables._dictionary_coded(older, ["retrieved"]) == ["retrieved.list.item"]
    assert RankedRun.from_file(older, depth=1).lists.lists.to_pylist() == [["d1"]] * 300
    numbers = write(tmp_path, "numbers.parquet", {"example_id": columns["example_id"],
                                                  "retrieved": [[1, 2]] * 300})
    assert tables._dictionary_coded(numbers, ["retrieved"]) == []


@pytest.mark.parametrize("dictionary", [True, False])
@pytest.mark.parametrize("bad", ["", None])
def test_a_bad_id_past_the_depth_is_refused_as_when_the_run_is_read_whole(tmp_path, monkeypatch, bad,
                                                                          dictionary):
    monkeypatch.setattr(tables, "BATCH_ROWS", 7)
    columns = arm_run(seed=5)
    columns["retrieved"][200] = [f"d{i}" for i in range(8)] + [bad, "d99"]  # rank 9, batch 29
    path = write(tmp_path, "run.parquet", columns, use_dictionary=dictionary)
    assert bool(tables._dictionary_coded(path, ["retrieved"])) == dictionary
    with pytest.raises(InputError) as whole:
        RankedRun.from_frame(tables.read_table(path, label="runs/a.parquet"), file="runs/a.parquet", depth=3)
    with pytest.raises(InputError) as read_cut:
        RankedRun.from_file(path, file="runs/a.parquet", depth=3)
    assert str(read_cut.value) == str(whole.value) and read_cut.value.row == whole.value.row == 201
    assert "item 9 of the list" in str(read_cut.value)


def qrels_of(seed: int) -> dict:
    r = np.random.default_rng(seed)
    return {"query_id": [f"q{i}" for i in range(0, 330, 3)],
            "doc_id": [f"d{d}" for d in r.integers(0, 60, 110)], "relevant": r.integers(0, 2, 110).tolist()}


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_retrieval_metrics_of_files_are_those_of_their_tables(tmp_path, suffix):
    """``retrieval_metrics`` takes the files a user has, the run read to depth k; long runs too."""
    run, qrels = arm_run(seed=11), qrels_of(seed=12)
    run_path, qrels_path = write(tmp_path, "run" + suffix, run), write(tmp_path, "qrels" + suffix, qrels)
    long = pd.DataFrame(RankedRun.from_frame(pd.DataFrame(run)).entries)
    long_path = write(tmp_path, "long" + suffix, {column: long[column].tolist() for column in long})
    for k in (1, 5, 20):
        expected = retrieval_metrics(pd.DataFrame(run), pd.DataFrame(qrels), k=k)
        pd.testing.assert_frame_equal(retrieval_metrics(run_path, qrels_path, k=k), expected)
        pd.testing.assert_frame_equal(retrieval_metrics(str(long_path), str(qrels_path), k=k),
                                      retrieval_metrics(long, pd.DataFrame(qrels), k=k))
    read_run, judgements = scoring_inputs(run_path, qrels_path, k=5)
    assert read_run.depth == 5 and read_run.file == str(run_path) and judgements.file == str(qrels_path)


def test_a_parquet_run_file_and_its_qrels_file_are_read_side_by_side(tmp_path, monkeypatch):
    """A parquet run's reader and the qrels' wait at a barrier each must reach: read one after
    the other, the first would wait in vain."""
    run_path = write(tmp_path, "run.parquet", arm_run(seed=3))
    qrels_path = write(tmp_path, "qrels.parquet", qrels_of(seed=4))
    both = threading.Barrier(2, timeout=10)
    real_run, real_table = RankedRun.from_file.__func__, metrics.read_table
    monkeypatch.setattr(RankedRun, "from_file",
                        classmethod(lambda cls, *a, **o: (both.wait(), real_run(cls, *a, **o))[1]))
    monkeypatch.setattr(metrics, "read_table", lambda *a, **o: (both.wait(), real_table(*a, **o))[1])
    run, judgements = scoring_inputs(run_path, qrels_path, k=10)
    assert isinstance(run, RankedRun) and isinstance(judgements, Judgements)
    # A JSON-lines run, which pyarrow reads on every core, is read before the qrels.
    monkeypatch.setattr(metrics, "on_threads", None)
    jsonl_run = write(tmp_path, "run.jsonl", arm_run(seed=3))
    monkeypatch.setattr(RankedRun, "from_file", classmethod(real_run))
    monkeypatch.setattr(metrics, "read_table", real_table)
    assert scoring_inputs(jsonl_run, qrels_path, k=10)[0].file == str(jsonl_run)


def test_of_two_bad_files_the_runs_error_is_raised_and_a_bad_qrels_file_is_named(tmp_path):
    run = arm_run(seed=6)
    run["retrieved"][40] = ["d1", ""]
    bad_run = write(tmp_path, "bad-run.parquet", run)
    good_run = write(tmp_path, "run.parquet", arm_run(seed=6))
    qrels = qrels_of(seed=7)
    qrels["relevant"][9] = 7
    bad_qrels = write(tmp_path, "qrels.parquet", qrels)
    with pytest.raises(InputError) as both:
        scoring_inputs(bad_run, bad_qrels, k=10)
    assert both.value.file == str(bad_run) and both.value.row == 41
    with pytest.raises(InputError) as qrels_only:
        scoring_inputs(good_run, bad_qrels, k=10)
    assert qrels_only.value.file == str(bad_qrels) and qrels_only.value.row == 10


@pytest.mark.parametrize("rows, batches", [(300, 8), (70_000, 8), (600_000, 10), (5, 5)])
def test_a_small_file_is_read_in_several_batches(tmp_path, monkeypatch, rows, batches):
    """Each batch is cut while the next one decodes: a file of few rows is read in batches
    of an eighth of its rows, so the cut left after the last decode is an eighth of the
    file, not half; a large file in batches of BATCH_ROWS."""
    lengths = []
    kept = tables._kept
    monkeypatch.setattr(tables, "_kept", lambda lists, **options: (lengths.append(len(lists)),
                                                                    kept(lists, **options))[1])
    path = write(tmp_path, "run.parquet", {"example_id": pa.array(np.arange(rows)).cast(pa.string()),
                                           "retrieved": pa.array([["d1", "d2"]] * rows)})
    assert len(RankedRun.from_file(path, depth=1).queries) == rows
    assert len(lengths) == batches and sum(lengths) == rows  # the lists, batch by batch
    assert max(lengths) == min(-(-rows // 8), tables.BATCH_ROWS)


def test_ahead_keeps_the_order_raises_in_place_and_stops_early():
    assert list(ahead(iter(range(1000)), buffered=3)) == list(range(1000))

    def failing():
        yield from range(5)
        raise ValueError("batch 6 is broken")

    seen = []
    with pytest.raises(ValueError, match="batch 6 is broken"):
        for item in ahead(failing()):
            seen.append(item)
    assert seen == [0, 1, 2, 3, 4]

    produced = []

    def endless():
        while True:
            produced.append(len(produced))
            yield produced[-1]

    items = ahead(endless(), buffered=2)
    assert [next(items) for _ in range(3)] == [0, 1, 2]
    items.close()  # the caller stops: the producer stops too, a few items ahead at most
    assert not [t for t in threading.enumerate() if t.name == "langchef-ahead"]
    assert len(produced) <= 3 + 2 + 1


def test_files_read_at_once_give_the_default_pool_back_when_the_last_ends():
    """Parquet lists are decoded with jemalloc (``tables._list_columns``); a readout reads
    its run files on threads, so the process-wide default pool is switched by the first
    read and given back by the last, not by whichever ends first."""
    import pyarrow as pa
    if "jemalloc" not in pa.supported_memory_backends():
        pytest.skip("this pyarrow has no jemalloc")
    before = pa.default_memory_pool()
    pa.set_memory_pool(pa.system_memory_pool())
    try:
        first, second = tables._jemalloc_while_reading(), tables._jemalloc_while_reading()
        first.__enter__()
        second.__enter__()
        first.__exit__(None, None, None)
        assert pa.default_memory_pool().backend_name == "jemalloc"  # the second still reads
        second.__exit__(None, None, None)
        assert pa.default_memory_pool().backend_name == "system"
    finally:
        pa.set_memory_pool(before)
