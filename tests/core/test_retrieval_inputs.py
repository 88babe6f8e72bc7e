"""Bad retrieval input: each case raises one InputError naming file, column and row."""

import json

import numpy as np
import pandas as pd
import pytest

import langchef_core as lc
from langchef_core.inputs.errors import InputError
from langchef_core.inputs.tables import read_table
from langchef_core.scoring.retrieval import candidate_pool, long_run, qrels_table
from langchef_core.scoring.retrieval.metrics import LISTS_PER_BLOCK, lists_per_block, score_run


def write_jsonl(path, records):
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


def write_csv(path, text):
    path.write_text(text)
    return path


def raised(call) -> InputError:
    with pytest.raises(InputError) as info:
        call()
    return info.value


def check(error: InputError, *, file, column, row, words):
    assert error.file == file and error.column == column and error.row == row, error.describe()
    assert words in str(error)
    assert str(error).startswith(f"{file}, column '{column}', row {row}:")


def test_run_row_without_a_rank(tmp_path):
    path = write_jsonl(tmp_path / "run.jsonl", [
        {"query_id": "q1", "doc_id": "a", "rank": 1},
        {"query_id": "q1", "doc_id": "b"}])
    error = raised(lambda: long_run(read_table(path), file="runs/x/base.jsonl"))
    check(error, file="runs/x/base.jsonl", column="rank", row=2, words="missing rank")


def test_run_without_a_rank_column():
    frame = pd.DataFrame({"query_id": ["q1"], "doc_id": ["a"]})
    error = raised(lambda: long_run(frame, file="run.csv"))
    assert error.column == "rank" and "missing column" in str(error)


@pytest.mark.parametrize("rank, words", [("1.5", "not a whole number"), ("abc", "not a whole number"),
                                         ("0", "not positive"), ("-2", "not positive")])
def test_non_integer_or_non_positive_rank_in_a_csv(tmp_path, rank, words):
    path = write_csv(tmp_path / "run.csv", f"query_id,doc_id,rank\nq1,a,1\nq1,b,{rank}\n")
    error = raised(lambda: long_run(read_table(path), file="run.csv"))
    check(error, file="run.csv", column="rank", row=2, words=words)


@pytest.mark.parametrize("rank", [2.5, True, 0, -1])
def test_non_integer_or_non_positive_rank_in_json(tmp_path, rank):
    path = write_jsonl(tmp_path / "run.jsonl", [{"query_id": "q", "doc_id": "a", "rank": 1},
                                               {"query_id": "q", "doc_id": "b", "rank": 2},
                                               {"query_id": "q", "doc_id": "c", "rank": rank}])
    error = raised(lambda: long_run(read_table(path), file="run.jsonl"))
    assert (error.file, error.column, error.row) == ("run.jsonl", "rank", 3)


def test_whole_number_ranks_written_as_strings_or_floats_are_accepted():
    frame = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "b"], "rank": ["1", 2.0]})
    assert long_run(frame)["rank"].tolist() == [1, 2]


def test_duplicated_query_and_rank(tmp_path):
    path = write_jsonl(tmp_path / "run.jsonl", [
        {"query_id": "q1", "doc_id": "a", "rank": 1},
        {"query_id": "q2", "doc_id": "a", "rank": 1},
        {"query_id": "q1", "doc_id": "b", "rank": 1}])
    error = raised(lambda: long_run(read_table(path), file="run.jsonl"))
    check(error, file="run.jsonl", column="rank", row=3, words="tie in rank")


@pytest.mark.parametrize("relevant", [2, -1, 0.5, "yes", None])
def test_relevance_outside_zero_one(tmp_path, relevant):
    path = write_jsonl(tmp_path / "qrels.jsonl", [
        {"query_id": "q1", "doc_id": "a", "relevant": 1, "source": "human"},
        {"query_id": "q1", "doc_id": "b", "relevant": relevant, "source": "human"}])
    error = raised(lambda: qrels_table(read_table(path), file="qrels/s.jsonl"))
    assert (error.file, error.column, error.row) == ("qrels/s.jsonl", "relevant", 2)


@pytest.mark.parametrize("column", [[1, 0, 2], [1.0, 0.0, 0.5], [1, 0, -1]])
def test_typed_relevance_outside_zero_one_is_named_as_written(column):
    """A typed column (parquet, a JSONL file of numbers) is checked without a call per value;
    the message still quotes the value as the file has it, not a numpy repr."""
    frame = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": list("abc"), "relevant": column})
    error = raised(lambda: qrels_table(frame, file="qrels.parquet"))
    assert (error.column, error.row) == ("relevant", 3)
    assert f"relevance {column[2]!r} is outside" in str(error)


def test_typed_relevance_columns_are_read_as_zero_one():
    for column in ([1, 0, 1], [1.0, 0.0, 1.0], [True, False, True]):
        frame = pd.DataFrame({"query_id": ["q"] * 3, "doc_id": list("abc"), "relevant": column})
        assert qrels_table(frame)["relevant"].tolist() == [1, 0, 1]


def test_relevance_spellings_that_are_binary_are_accepted():
    frame = pd.DataFrame({"query_id": ["q"] * 4, "doc_id": list("abcd"),
                          "relevant": [True, "0", 1.0, "1"]})
    assert qrels_table(frame)["relevant"].tolist() == [1, 0, 1, 1]


@pytest.mark.parametrize("source", ["Human", "expert", "", None])
def test_unknown_source(tmp_path, source):
    path = write_jsonl(tmp_path / "qrels.jsonl", [
        {"query_id": "q1", "doc_id": "a", "relevant": 1, "source": "click"},
        {"query_id": "q1", "doc_id": "b", "relevant": 1, "source": source}])
    error = raised(lambda: qrels_table(read_table(path), file="qrels.jsonl"))
    assert (error.file, error.column, error.row) == ("qrels.jsonl", "source", 2)


def test_workspace_qrels_must_say_their_source():
    frame = pd.DataFrame({"query_id": ["q"], "doc_id": ["a"], "relevant": [1]})
    error = raised(lambda: lc.Judgements.from_frame(frame, file="qrels.jsonl", require_source=True))
    assert error.column == "source" and "missing column" in str(error)


def test_the_same_judgement_twice_is_refused():
    frame = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "a"], "relevant": [1, 0],
                          "source": ["human", "human"]})
    error = raised(lambda: qrels_table(frame, file="qrels.csv"))
    assert (error.column, error.row) == ("doc_id", 2)


def test_queries_in_a_run_that_are_not_goldens(tmp_path):
    path = write_jsonl(tmp_path / "arm.jsonl", [
        {"example_id": "g1", "retrieved": ["a"]},
        {"example_id": "stray", "retrieved": ["b"]}])
    error = raised(lambda: lc.arm_run_to_long(read_table(path), file="runs/e/variant.jsonl",
                                              goldens=["g1", "g2"]))
    check(error, file="runs/e/variant.jsonl", column="example_id", row=2, words="not one of the goldens")
    long = pd.DataFrame({"query_id": ["g1", "g9"], "doc_id": ["a", "b"], "rank": [1, 1]})
    error = raised(lambda: lc.RankedRun.from_frame(long, file="run.csv", goldens=["g1"]))
    assert (error.column, error.row) == ("query_id", 2)


def test_empty_files(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text("")
    error = raised(lambda: read_table(path, label="runs/e/base.jsonl"))
    assert "empty" in str(error) and error.file == "runs/e/base.jsonl"
    empty = pd.DataFrame(columns=["query_id", "doc_id", "rank"])
    for call in (lambda: long_run(empty, file="run.csv"),
                 lambda: qrels_table(empty.rename(columns={"rank": "relevant"}), file="qrels.csv"),
                 lambda: candidate_pool(empty[["query_id", "doc_id"]], file="pools.csv")):
        error = raised(call)
        assert "the table is empty" in str(error)


def test_a_doc_id_that_is_nan(tmp_path):
    path = write_csv(tmp_path / "run.csv", "query_id,doc_id,rank\nq1,a,1\nq1,,2\n")
    error = raised(lambda: long_run(read_table(path), file="run.csv"))
    check(error, file="run.csv", column="doc_id", row=2, words="missing id")
    frame = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", np.nan], "relevant": [1, 1]})
    error = raised(lambda: qrels_table(frame, file="qrels.jsonl"))
    assert (error.column, error.row) == ("doc_id", 2)
    pool = pd.DataFrame({"query_id": ["q", "q"], "doc_id": [np.nan, "b"]})
    assert raised(lambda: candidate_pool(pool, file="pools.jsonl")).row == 1


def test_a_nan_doc_id_inside_a_retrieved_list(tmp_path):
    path = tmp_path / "arm.jsonl"
    path.write_text('{"example_id": "g1", "retrieved": ["a"]}\n'
                    '{"example_id": "g2", "retrieved": ["b", NaN]}\n')
    error = raised(lambda: lc.arm_run_to_long(read_table(path), file="arm.jsonl"))
    check(error, file="arm.jsonl", column="retrieved", row=2, words="item 2 of the list")


def test_a_missing_retrieved_list_is_refused_but_an_empty_one_is_fine():
    frame = pd.DataFrame({"example_id": ["g1", "g2"], "retrieved": [[], None]})
    error = raised(lambda: lc.arm_run_to_long(frame, file="arm.jsonl"))
    assert (error.column, error.row) == ("retrieved", 2) and "write []" in str(error)


def test_repeated_examples_in_an_arm_run():
    frame = pd.DataFrame({"example_id": ["g1", "g1"], "retrieved": [["a"], ["b"]]})
    error = raised(lambda: lc.arm_run_to_long(frame, file="arm.jsonl"))
    assert (error.column, error.row) == ("example_id", 2)


def test_ids_are_compared_as_strings_and_odd_ids_are_refused():
    run = pd.DataFrame({"query_id": [1, 1], "doc_id": [17, 18], "rank": [1, 2]})
    labels = pd.DataFrame({"query_id": ["1"], "doc_id": ["17"], "relevant": [1]})
    assert lc.retrieval_metrics(run, labels, k=1)["recall"].tolist() == [1.0]
    for bad in (True, 1.5, ""):
        frame = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", bad], "rank": [1, 2]},
                             dtype=object)
        assert raised(lambda: long_run(frame, file="run.jsonl")).row == 2


def test_a_pool_listing_a_candidate_twice():
    pool = pd.DataFrame({"query_id": ["q", "q"], "doc_id": ["a", "a"]})
    error = raised(lambda: candidate_pool(pool, file="pools/s.jsonl"))
    assert (error.file, error.column, error.row) == ("pools/s.jsonl", "doc_id", 2)


def test_whole_number_doc_ids_inside_lists_and_runs_that_retrieved_nothing():
    arm = pd.DataFrame({"example_id": ["g1", "g2"], "retrieved": [[17, "x"], []]})
    assert lc.arm_run_to_long(arm)["doc_id"].tolist() == ["17", "x"]
    nothing = pd.DataFrame({"example_id": ["g1", "g2"], "retrieved": [[], []]})
    labels = pd.DataFrame({"query_id": ["g1"], "doc_id": ["17"], "relevant": [1]})
    frame = lc.retrieval_metrics(nothing, labels, k=3).set_index("query_id")
    assert frame.loc["g1", "recall"] == 0.0 and bool(frame.loc["g1", "in_run"])


def test_ranked_entries_are_text_columns_as_pandas_would_infer_them():
    """Built as Arrow strings directly (issue 19), the entries' id columns are the "str"
    columns pandas infers from Python strings, and object when the run retrieved nothing."""
    frame = pd.DataFrame({"example_id": ["q1", 7, "q3"], "retrieved": [["a", 2], [], ["c"]]})
    entries = lc.RankedRun.from_frame(frame).entries
    inferred = pd.DataFrame({"query_id": ["q1", "q1", "q3"], "doc_id": ["a", "2", "c"]})
    assert entries["query_id"].dtype == inferred["query_id"].dtype
    assert entries["doc_id"].dtype == inferred["doc_id"].dtype
    assert entries[["query_id", "doc_id"]].values.tolist() == inferred.values.tolist()
    assert entries["rank"].tolist() == [1, 2, 1] and entries.index.tolist() == [1, 1, 3]
    empty = lc.RankedRun.from_frame(pd.DataFrame({"example_id": ["q1"], "retrieved": [[]]}))
    assert empty.entries["doc_id"].dtype == object and empty.queries.tolist() == ["q1"]


def test_lists_are_coded_in_as_few_blocks_as_allowed_all_of_one_size_but_the_last():
    """Blocks of lists are coded on a thread per core: 10^5 lists in four blocks of 25,000,
    not three of 32,768 and one of 1,696 that leave a core idle."""
    assert [lists_per_block(n) for n in (0, 1, 32768, 32769, 100_000, 1_000_000)] == \
        [1, 1, 32768, 16385, 25_000, 32_259]
    for n in np.random.default_rng(3).integers(1, 10**7, 2000).tolist() + list(range(1, 200)):
        per = lists_per_block(n)
        blocks, last = -(-n // per), n - (-(-n // per) - 1) * per
        assert per <= LISTS_PER_BLOCK and blocks == -(-n // LISTS_PER_BLOCK)
        assert 0 <= per - last < blocks


@pytest.mark.parametrize("block_limit", [1 << 15, 1, 3])
def test_arrow_lists_give_the_entries_python_lists_give(block_limit, monkeypatch):
    """An Arrow list column (parquet, JSON lines read by pyarrow) is flattened without a
    Python string per entry into the very entries frame the per-item path builds, and scored
    from its lists cut at k, coded a block of lists at a time, to the same metrics; an empty
    id in it still gets the per-item message."""
    import pyarrow as pa

    from langchef_core.scoring.retrieval import metrics
    monkeypatch.setattr(metrics, "LISTS_PER_BLOCK", block_limit)
    rng = np.random.default_rng(4)
    for _ in range(200):
        n = int(rng.integers(1, 30))
        lists = [[f"d{int(d)}" for d in rng.integers(0, 40, int(rng.integers(0, 6)))]
                 for _ in range(n)]
        ids = [f"q{i}" for i in rng.permutation(n)]
        cells = np.empty(n, dtype=object)
        cells[:] = lists
        python = pd.DataFrame({"example_id": ids, "retrieved": cells},
                              index=pd.RangeIndex(1, n + 1, name="row"))
        arrow = python.assign(retrieved=pd.arrays.ArrowExtensionArray(pa.array(lists, pa.list_(pa.string()))))
        fast, slow = lc.RankedRun.from_frame(arrow), lc.RankedRun.from_frame(python)
        assert fast.lists is not None and slow.lists is None  # entries built when asked
        pd.testing.assert_frame_equal(fast.entries, slow.entries)
        assert fast.queries.tolist() == slow.queries.tolist()
        # Scored from the lists cut at k, the metrics are those of the whole entries, to the bit.
        positives = pd.DataFrame({"query_id": [f"q{int(q)}" for q in rng.integers(0, n + 3, 2 * n)],
                                  "doc_id": [f"d{int(d)}" for d in rng.integers(0, 40, 2 * n)]})
        k = int(rng.integers(1, 7))
        scored = [score_run(run, positives, positives["query_id"].unique(), k=k)
                  for run in map(lc.RankedRun.from_frame, (arrow, python))]
        assert scored[0][0].tolist() == scored[1][0].tolist()
        pd.testing.assert_frame_equal(scored[0][1].to_frame(), scored[1][1].to_frame())
    bad = pd.DataFrame({"example_id": ["q1", "q2"], "retrieved": pd.arrays.ArrowExtensionArray(
        pa.array([["a"], ["b", ""]], pa.list_(pa.string())))}, index=pd.RangeIndex(1, 3, name="row"))
    error = raised(lambda: lc.RankedRun.from_frame(bad, file="runs/x/variant.jsonl"))
    assert (error.column, error.row) == ("retrieved", 2) and "item 2 of the list" in str(error)


def test_a_run_read_to_a_depth_scores_as_the_whole_run_at_every_k_within_it():
    """``depth`` keeps the entries ranked at or above it, after the whole run is validated:
    scored at k ≤ depth, the metrics are those of the whole run, to the bit, whether the
    lists are Arrow lists, Python lists or a long run; deeper k is refused."""
    import pyarrow as pa

    rng = np.random.default_rng(7)
    lists = [[f"d{int(d)}" for d in rng.integers(0, 30, int(rng.integers(0, 9)))] for _ in range(40)]
    cells = np.empty(len(lists), dtype=object)
    cells[:] = lists
    python = pd.DataFrame({"example_id": [f"q{i}" for i in range(len(lists))], "retrieved": cells},
                          index=pd.RangeIndex(1, len(lists) + 1, name="row"))
    arrow = python.assign(retrieved=pd.arrays.ArrowExtensionArray(pa.array(lists, pa.list_(pa.string()))))
    positives = pd.DataFrame({"query_id": [f"q{int(q)}" for q in rng.integers(0, 45, 80)],
                              "doc_id": [f"d{int(d)}" for d in rng.integers(0, 30, 80)]})
    judged = positives["query_id"].unique()
    for frame in (arrow, python, lc.arm_run_to_long(python)):
        whole = lc.RankedRun.from_frame(frame)
        for depth in (1, 3, 8, 20):
            cut = lc.RankedRun.from_frame(frame, depth=depth)
            assert cut.depth == depth and cut.queries.tolist() == whole.queries.tolist()
            assert cut.entries["rank"].max() <= depth
            pd.testing.assert_frame_equal(cut.entries, whole.entries[whole.entries["rank"] <= depth])
            for k in range(1, depth + 1):
                assert score_run(cut, positives, judged, k=k)[1].to_frame().equals(
                    score_run(whole, positives, judged, k=k)[1].to_frame())
            with pytest.raises(ValueError, match="depth"):
                score_run(cut, positives, judged, k=depth + 1)
    # The whole run is validated before it is cut: a bad id past the depth is still named.
    bad = python.copy()
    bad.at[3, "retrieved"] = ["a", "b", ""]
    error = raised(lambda: lc.RankedRun.from_frame(bad, file="run.jsonl", depth=1))
    assert (error.column, error.row) == ("retrieved", 3) and "item 3 of the list" in str(error)
    for depth in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="depth"):
            lc.RankedRun.from_frame(python, depth=depth)


def test_lists_coded_by_their_place_among_the_sorted_queries_score_as_looked_up():
    """When the queries scored are the run's own, each list's code comes from the order the
    run's queries were sorted in when it was read; it gives the codes a lookup gives."""
    import dataclasses

    import pyarrow as pa

    rng = np.random.default_rng(11)
    ids = [f"q{int(i)}" for i in rng.permutation(300)]
    lists = [[f"d{int(d)}" for d in rng.integers(0, 50, int(rng.integers(0, 12)))] for _ in ids]
    arm = pd.DataFrame({"example_id": ids, "retrieved": pd.arrays.ArrowExtensionArray(
        pa.array(lists, pa.list_(pa.string())))}, index=pd.RangeIndex(1, len(ids) + 1, name="row"))
    positives = pd.DataFrame({"query_id": [ids[int(q)] for q in rng.integers(0, len(ids), 500)],
                              "doc_id": [f"d{int(d)}" for d in rng.integers(0, 50, 500)]})
    run = lc.RankedRun.from_frame(arm)
    assert sorted(ids) == run.queries.tolist()
    assert [run.queries[r] for r in run.lists.query_rank] == ids
    looked_up = dataclasses.replace(run, lists=dataclasses.replace(run.lists, query_rank=None))
    for k in (1, 5, 20):
        fast = score_run(run, positives, run.queries, k=k)
        slow = score_run(looked_up, positives, run.queries, k=k)
        assert fast[0].tolist() == slow[0].tolist() and fast[1].to_frame().equals(slow[1].to_frame())
