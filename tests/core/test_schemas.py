"""pandera validation of every workspace input: failure tables, messages, normalised frames."""

import json
import math
import pickle

import numpy as np
import pandas as pd
import pytest

from langchef_core.inputs.errors import InputError
from langchef_core.inputs.schemas import (FAILURE_COLUMNS, SchemaViolation, read_input, schema_for,
                                          validate_table)

GOLDENS, RUN = "goldens/qa.jsonl", "runs/exp/variant.jsonl"
QRELS, POOLS, ANCHORS = "qrels/qa.jsonl", "pools/qa.jsonl", "anchors/core.jsonl"


def table(records):
    """A frame as read_table returns it: the index is the 1-based data row."""
    frame = pd.DataFrame.from_records(records)
    frame.index = pd.RangeIndex(1, len(frame) + 1, name="row")
    return frame


def violation(records, kind, file, **options) -> SchemaViolation:
    with pytest.raises(SchemaViolation) as caught:
        validate_table(table(records), kind, file=file, **options)
    return caught.value


def rows_of(error: SchemaViolation) -> list[tuple]:
    """The failure table as (column, row, value, check) tuples, rows as plain ints."""
    return [(record.column, None if pd.isna(record.row) else int(record.row), record.value,
             record.check) for record in error.failures.itertuples(index=False)]


def only_failure(error: SchemaViolation) -> tuple:
    assert len(error.failures) == 1, error.failures
    return rows_of(error)[0]


def run_row(example_id="q1", **columns):
    return {"example_id": example_id, **columns}


# --- goldens ----------------------------------------------------------------------------------

def test_goldens_are_normalised_and_keep_slice_columns():
    frame = validate_table(table([
        {"example_id": 7, "input": "a", "ideal": "x", "lang": "en"},
        {"example_id": 8.0, "input": "b", "ideal": None, "lang": "de"},
        {"example_id": "q9", "input": "c", "ideal": 3, "lang": "en"},
    ]), "goldens", file=GOLDENS, required_columns=["lang"])
    # JSON numbers are ids too: 7 -> "7" and 8.0 -> "8", deliberately (never "8.0").
    assert frame["example_id"].tolist() == ["7", "8", "q9"]
    assert str(frame["example_id"].dtype) == "str"
    assert frame["ideal"].iloc[0] == "x" and pd.isna(frame["ideal"].iloc[1])
    assert frame["ideal"].iloc[2] == "3"
    assert frame["lang"].tolist() == ["en", "de", "en"]
    assert frame.index.tolist() == [1, 2, 3]


def test_goldens_duplicated_id():
    error = violation([{"example_id": "q1", "input": "a"}, {"example_id": "q2", "input": "b"},
                       {"example_id": "q1", "input": "c"}], "goldens", GOLDENS)
    assert only_failure(error) == ("example_id", 3, "q1", "duplicated id")
    assert str(error) == ("goldens/qa.jsonl, column 'example_id', row 3: duplicated id 'q1'; "
                          "first seen at row 1, make each id unique.")


def test_goldens_id_given_as_number_and_as_text_is_one_id():
    error = violation([{"example_id": 7, "input": "a"}, {"example_id": "7", "input": "b"}],
                      "goldens", GOLDENS)
    assert only_failure(error) == ("example_id", 2, "7", "duplicated id")


def test_goldens_missing_id_is_never_the_text_nan():
    error = violation([{"example_id": "q1", "input": "a"}, {"example_id": None, "input": "b"},
                       {"example_id": float("nan"), "input": "c"}], "goldens", GOLDENS)
    assert rows_of(error) == [("example_id", 2, None, "missing value"),
                              ("example_id", 3, None, "missing value")]
    assert str(error).startswith("goldens/qa.jsonl, column 'example_id', row 2: missing value;")


def test_goldens_missing_required_column():
    error = violation([{"example_id": "q1", "ideal": "x"}], "goldens", GOLDENS)
    assert only_failure(error) == ("input", None, None, "required column missing")
    assert str(error) == ("goldens/qa.jsonl, column 'input': required column missing; "
                          "add it to the table.")


def test_goldens_missing_slice_column_named_by_the_design():
    error = violation([{"example_id": "q1", "input": "a"}], "goldens", GOLDENS,
                      required_columns=("lang",))
    assert only_failure(error) == ("lang", None, None, "required column missing")
    assert "the design uses it" in str(error)


def test_goldens_slice_column_needs_a_value_on_every_row():
    error = violation([{"example_id": "q1", "input": "a", "user": "u1"},
                       {"example_id": "q2", "input": "b", "user": None}], "goldens", GOLDENS,
                      required_columns=["user"])
    assert only_failure(error) == ("user", 2, None, "missing value")


def test_other_pandas_text_dtypes_are_accepted():
    rows = pd.RangeIndex(1, 3)
    frame = pd.DataFrame({"example_id": pd.Series(["q1", "q2"], index=rows, dtype="string"),
                          "input": pd.Series(["a", "b"], index=rows,
                                             dtype=pd.StringDtype("python"))})
    result = validate_table(frame, "goldens", file=GOLDENS)
    assert [str(result[column].dtype) for column in ("example_id", "input")] == ["str", "str"]
    assert result["example_id"].tolist() == ["q1", "q2"]


def test_the_callers_frame_is_not_changed():
    frame = table([run_row(7, latency_ms=3, retrieved=[1, 2])])
    before = frame.copy()
    validate_table(frame, "run", file=RUN)
    pd.testing.assert_frame_equal(frame, before)


def test_goldens_extra_columns_are_not_an_error():
    frame = validate_table(table([{"example_id": "q1", "input": "a", "anything": [1, 2]}]),
                           "goldens", file=GOLDENS)
    assert frame["anything"].iloc[0] == [1, 2]


@pytest.mark.parametrize("bad, check", [
    (7.5, "must be text or a whole number"),
    (True, "must be text or a whole number"),
    (["q1"], "must be text or a whole number"),
    ("  ", "must not be blank"),
    (float(2 ** 53), "must be text or a whole number below 2**53 (write large ids as text)"),
])
def test_goldens_ids_that_cannot_be_ids(bad, check):
    error = violation([{"example_id": "q1", "input": "a"}, {"example_id": bad, "input": "b"}],
                      "goldens", GOLDENS)
    assert only_failure(error) == ("example_id", 2, bad, check)


def test_goldens_input_must_be_text():
    error = violation([{"example_id": "q1", "input": {"q": "a"}}], "goldens", GOLDENS)
    assert only_failure(error) == ("input", 1, {"q": "a"}, "must be text")
    assert str(error) == ("goldens/qa.jsonl, column 'input', row 1: {\"q\": \"a\"} must be "
                          "text.")


# --- arm runs ---------------------------------------------------------------------------------

def test_run_is_normalised_to_typed_columns():
    frame = validate_table(table([
        run_row(1, output="o", created_at="2024-05-01T14:00:00+02:00", latency_ms=12,
                cost_usd=0.5, retrieved=["d1", 2], candidates=("d1", "d2", "d3"),
                predicted=0, verdict="fail", criterion=None, judge="j1", context="c"),
        run_row("q2", output=None, created_at="2024-05-01T12:30:00Z", latency_ms=3.5,
                cost_usd=0, retrieved=[], candidates=["d4"], predicted="spam",
                verdict="pass", criterion="tone", judge="j1", context=None),
    ]), "run", file=RUN)
    assert frame["example_id"].tolist() == ["1", "q2"]
    assert str(frame["created_at"].dtype) == "datetime64[ns, UTC]"
    assert frame["created_at"].tolist() == [pd.Timestamp("2024-05-01T12:00:00Z"),
                                            pd.Timestamp("2024-05-01T12:30:00Z")]
    assert frame["latency_ms"].dtype == np.float64 and frame["latency_ms"].tolist() == [12, 3.5]
    assert frame["retrieved"].tolist() == [["d1", "2"], []]
    assert frame["candidates"].tolist() == [["d1", "d2", "d3"], ["d4"]]
    assert all(type(ids) is list for ids in frame["candidates"])
    assert frame["predicted"].tolist() == ["0", "spam"]
    # A fail may cite nothing (unattributed); a pass citing a criterion is allowed.
    assert pd.isna(frame["criterion"].iloc[0]) and frame["criterion"].iloc[1] == "tone"
    for column in ("example_id", "output", "predicted", "verdict", "criterion", "judge"):
        assert str(frame[column].dtype) == "str", column


def test_run_unknown_column_names_it_and_lists_the_allowed_ones():
    error = violation([run_row(verdict="pass", score=0.3)], "run", RUN)
    assert only_failure(error) == ("score", None, None, "column not allowed")
    assert str(error) == (
        "runs/exp/variant.jsonl, column 'score': column not allowed; remove or rename it "
        "(allowed: example_id, output, created_at, latency_ms, cost_usd, retrieved, "
        "candidates, predicted, verdict, criterion, judge, context, rationale, imported).")


def test_run_missing_example_id_column():
    error = violation([{"output": "o"}], "run", RUN)
    assert only_failure(error) == ("example_id", None, None, "required column missing")


def test_run_duplicated_id():
    error = violation([run_row("q1"), run_row("q2"), run_row("q2"), run_row("q1")], "run", RUN)
    assert rows_of(error) == [("example_id", 3, "q2", "duplicated id"),
                              ("example_id", 4, "q1", "duplicated id")]
    assert "row 3: duplicated id 'q2'; first seen at row 2" in str(error)


def test_run_verdict_not_allowed():
    error = violation([run_row("q1", verdict="pass"), run_row("q2", verdict="maybe")], "run",
                      RUN)
    assert only_failure(error) == ("verdict", 2, "maybe", "must be one of pass, fail")
    assert str(error) == ("runs/exp/variant.jsonl, column 'verdict', row 2: 'maybe' must be "
                          "one of pass, fail.")


@pytest.mark.parametrize("missing", [None, float("nan")])
def test_run_nan_verdict(missing):
    error = violation([run_row("q1", verdict="fail"), run_row("q2", verdict=missing)], "run",
                      RUN)
    assert only_failure(error) == ("verdict", 2, None, "missing value")
    assert str(error) == ("runs/exp/variant.jsonl, column 'verdict', row 2: missing value; "
                          "write pass or fail on every row.")


def test_run_verdict_missing_from_one_json_line():
    # The key is absent on line 2: pandas fills NaN, which must not pass as a verdict.
    error = violation([run_row("q1", verdict="pass"), run_row("q2")], "run", RUN)
    assert only_failure(error) == ("verdict", 2, None, "missing value")


@pytest.mark.parametrize("column", ["latency_ms", "cost_usd"])
def test_run_negative_latency_and_cost(column):
    error = violation([run_row("q1", **{column: 5}), run_row("q2", **{column: -0.5})], "run",
                      RUN)
    assert only_failure(error) == (column, 2, -0.5, "must be a finite number ≥ 0")
    assert str(error) == (f"runs/exp/variant.jsonl, column '{column}', row 2: -0.5 must be a "
                          "finite number ≥ 0.")


@pytest.mark.parametrize("bad, check", [
    ("fast", "must be a number"), (True, "must be a number"),
    (math.inf, "must be a finite number ≥ 0"),
])
def test_run_latency_must_be_a_finite_number(bad, check):
    error = violation([run_row("q1", latency_ms=1), run_row("q2", latency_ms=bad)], "run", RUN)
    assert only_failure(error) == ("latency_ms", 2, bad, check)


def test_run_naive_timestamp():
    error = violation([run_row("q1", created_at="2024-05-01T12:00:00Z"),
                       run_row("q2", created_at="2024-05-01T12:00:00")], "run", RUN)
    column, row, value, check = only_failure(error)
    assert (column, row, value) == ("created_at", 2, "2024-05-01T12:00:00")
    assert check.startswith("has no timezone")
    assert str(error) == ("runs/exp/variant.jsonl, column 'created_at', row 2: "
                          "'2024-05-01T12:00:00' has no timezone; write it as ISO-8601 with Z "
                          "or an offset such as +00:00.")


@pytest.mark.parametrize("bad", ["yesterday", "01/05/2024 12:00", 1714564800])
def test_run_timestamp_that_is_not_iso_8601(bad):
    error = violation([run_row("q1", created_at=bad)], "run", RUN)
    column, row, value, check = only_failure(error)
    assert (column, row, value) == ("created_at", 1, bad)
    assert check.startswith("must be an ISO-8601 timestamp with a timezone")


@pytest.mark.parametrize("bad", ["d1", 3, {"doc": "d1"}, ["d1", None], ["d1", 0.5]])
def test_run_retrieved_must_be_a_list_of_doc_ids(bad):
    error = violation([run_row("q1", retrieved=["d1"]), run_row("q2", retrieved=bad)], "run",
                      RUN)
    assert only_failure(error) == ("retrieved", 2, bad,
                                   'must be a list of document ids, e.g. ["d1", "d2"]')


def test_run_ranking_may_not_repeat_a_document():
    error = violation([run_row("q1", candidates=["d1", "d2", "d1"])], "run", RUN)
    assert only_failure(error) == ("candidates", 1, ["d1", "d2", "d1"],
                                   "must not list the same document twice")


def test_arrow_list_columns_validate_as_python_lists_do():
    """Lists of text read by pyarrow (parquet, JSON lines) stay Arrow list columns through
    validation, and a repeated candidate is named on the same row as in Python lists."""
    import pyarrow as pa

    from langchef_core.inputs.id_lists import is_text_lists
    records = [run_row("q1", retrieved=["d1", "d2"], candidates=["d1", "d2", "d3"]),
               run_row("q2", retrieved=[], candidates=["d4", "d5", "d4"])]
    python = table(records)
    arrow = python.assign(**{column: pd.arrays.ArrowExtensionArray(
        pa.array(python[column].tolist(), pa.list_(pa.string()))) for column in ("retrieved", "candidates")})
    with pytest.raises(SchemaViolation) as from_arrow:
        validate_table(arrow, "run", file=RUN)
    with pytest.raises(SchemaViolation) as from_python:
        validate_table(python, "run", file=RUN)
    assert rows_of(from_arrow.value) == rows_of(from_python.value) == [
        ("candidates", 2, ["d4", "d5", "d4"], "must not list the same document twice")]
    valid = validate_table(arrow.iloc[:1], "run", file=RUN)
    assert is_text_lists(valid["retrieved"].dtype) and valid["retrieved"].tolist() == [["d1", "d2"]]


def test_run_criterion_needs_a_verdict_column():
    error = violation([run_row("q1", criterion="tone")], "run", RUN)
    assert only_failure(error) == ("criterion", None, None,
                                   "a 'criterion' column needs a 'verdict' column beside it")


def test_run_required_columns_from_the_design():
    error = violation([run_row("q1", output="o")], "run", RUN, required_columns=["verdict"])
    assert only_failure(error) == ("verdict", None, None, "required column missing")
    assert str(error) == ("runs/exp/variant.jsonl, column 'verdict': required column missing; "
                          "the design uses it, so add it.")


def test_a_required_optional_column_needs_a_value_on_every_row():
    # `ideal` may be missing in goldens, unless the design scores accuracy against it.
    records = [{"example_id": "q1", "input": "a", "ideal": "x"},
               {"example_id": "q2", "input": "b", "ideal": None}]
    assert validate_table(table(records), "goldens", file=GOLDENS)["ideal"].isna().sum() == 1
    error = violation(records, "goldens", GOLDENS, required_columns=["ideal"])
    assert only_failure(error) == ("ideal", 2, None, "missing value")


def test_strict_kinds_refuse_to_require_a_column_they_do_not_define():
    with pytest.raises(ValueError, match="run tables have no column 'lang'"):
        schema_for("run", ["lang"])


# --- qrels and pools --------------------------------------------------------------------------

def qrel(query_id="q1", doc_id="d1", relevant=1, source="human"):
    return {"query_id": query_id, "doc_id": doc_id, "relevant": relevant, "source": source}


def test_qrels_are_normalised():
    frame = validate_table(table([qrel(1, 10, 1, "human"), qrel("q1", "d2", 0.0, "click"),
                                  qrel("q2", "d1", "1", "teacher")]), "qrels", file=QRELS)
    assert frame["query_id"].tolist() == ["1", "q1", "q2"]
    assert frame["doc_id"].tolist() == ["10", "d2", "d1"]
    assert frame["relevant"].dtype == np.int8 and frame["relevant"].tolist() == [1, 0, 1]


@pytest.mark.parametrize("bad, check", [
    (2, "must be one of 0, 1"), (-1, "must be one of 0, 1"), (1000, "must be one of 0, 1"),
    (0.5, "must be a whole number"), (True, "must be a whole number"),
    ("yes", "must be a whole number"),
])
def test_qrels_relevance_not_allowed(bad, check):
    error = violation([qrel(), qrel(doc_id="d2", relevant=bad)], "qrels", QRELS)
    assert only_failure(error) == ("relevant", 2, bad, check)


def test_qrels_source_not_allowed():
    error = violation([qrel(source="crowd")], "qrels", QRELS)
    assert only_failure(error) == ("source", 1, "crowd", "must be one of human, click, teacher")
    assert str(error) == ("qrels/qa.jsonl, column 'source', row 1: 'crowd' must be one of "
                          "human, click, teacher.")


def test_qrels_nan_doc_id():
    error = violation([qrel(), qrel(doc_id=float("nan"))], "qrels", QRELS)
    assert only_failure(error) == ("doc_id", 2, None, "missing value")


def test_qrels_duplicated_pair():
    error = violation([qrel("q1", "d1"), qrel("q1", "d2"), qrel("q2", "d1"),
                       qrel("q1", "d1", relevant=0)], "qrels", QRELS)
    assert only_failure(error) == ("query_id, doc_id", 4, ("q1", "d1"),
                                   "duplicated (query_id, doc_id) pair")
    assert "first seen at row 1" in str(error)


def test_qrels_unknown_and_missing_columns():
    error = violation([{"query_id": "q1", "doc_id": "d1", "relevance": 1, "source": "human"}],
                      "qrels", QRELS)
    assert rows_of(error) == [("relevance", None, None, "column not allowed"),
                              ("relevant", None, None, "required column missing")]


def test_pools_are_validated():
    frame = validate_table(table([{"query_id": 1, "doc_id": "d1"},
                                  {"query_id": 1, "doc_id": "d2"}]), "pools", file=POOLS)
    assert frame["query_id"].tolist() == ["1", "1"]
    error = violation([{"query_id": "q1", "doc_id": "d1"}, {"query_id": "q1", "doc_id": "d1"},
                       {"query_id": "q1", "doc_id": "d2", "rank": 1}], "pools", POOLS)
    assert rows_of(error) == [("rank", None, None, "column not allowed"),
                              ("query_id, doc_id", 2, ("q1", "d1"),
                               "duplicated (query_id, doc_id) pair")]


# --- anchors ----------------------------------------------------------------------------------

def anchor(anchor_id="a1", **columns):
    return {"anchor_id": anchor_id, "input": "i", "output": "o", "human_verdict": "pass",
            **columns}


def test_anchors_are_normalised():
    frame = validate_table(table([anchor(1, human_criterion=None),
                                  anchor("a2", human_verdict="fail", human_criterion="tone",
                                         context="c", ideal="x")]), "anchors", file=ANCHORS)
    assert frame["anchor_id"].tolist() == ["1", "a2"]
    assert frame["human_verdict"].tolist() == ["pass", "fail"]


def test_anchors_failures():
    error = violation([anchor("a1"), anchor("a1", human_verdict="Fail"),
                       anchor("a3", output=None)], "anchors", ANCHORS)
    assert rows_of(error) == [("anchor_id", 2, "a1", "duplicated id"),
                              ("human_verdict", 2, "Fail", "must be one of pass, fail"),
                              ("output", 3, None, "missing value")]


def test_anchors_missing_human_verdict_column():
    records = [{key: value for key, value in anchor().items() if key != "human_verdict"}]
    error = violation(records, "anchors", ANCHORS)
    assert only_failure(error) == ("human_verdict", None, None, "required column missing")


# --- all problems, in the user's words --------------------------------------------------------

def test_a_repeated_column_name_is_reported_once():
    frame = pd.DataFrame([["q1", "a", "b"]], columns=["example_id", "input", "input"],
                         index=pd.RangeIndex(1, 2))
    with pytest.raises(SchemaViolation) as caught:
        validate_table(frame, "goldens", file=GOLDENS)
    assert only_failure(caught.value) == ("input", None, None, "column appears more than once")


def test_every_failure_is_reported_sorted_by_row_then_column():
    error = violation([
        run_row("q1", verdict="maybe", latency_ms=-1, created_at="2024-05-01", extra=1),
        run_row("q1", verdict=None, latency_ms="x", created_at="2024-05-01T00:00:00Z"),
        run_row(None, verdict="pass", latency_ms=1, created_at="2024-05-01T00:00:00Z"),
    ], "run", RUN)
    assert [(column, row) for column, row, _, _ in rows_of(error)] == [
        ("extra", None), ("created_at", 1), ("latency_ms", 1), ("verdict", 1),
        ("example_id", 2), ("latency_ms", 2), ("verdict", 2), ("example_id", 3)]
    assert list(error.failures.columns) == list(FAILURE_COLUMNS)
    assert set(error.failures["file"]) == {RUN}
    assert str(error.failures["row"].dtype) == "Int64"
    assert str(error) == (
        "runs/exp/variant.jsonl, column 'extra': column not allowed; remove or rename it "
        "(allowed: example_id, output, created_at, latency_ms, cost_usd, retrieved, "
        "candidates, predicted, verdict, criterion, judge, context, rationale, imported); also (2) column "
        "'created_at', row 1: '2024-05-01' has no timezone; write it as ISO-8601 with Z or an "
        "offset such as +00:00; (3) column 'latency_ms', row 1: -1.0 must be a finite number "
        "≥ 0; 5 more problems listed in the failure table.")


def test_no_pandera_wording_reaches_the_user():
    error = violation([run_row("q1", verdict="maybe", latency_ms="x", retrieved="d1",
                               created_at="2024-05-01", extra=1),
                       run_row("q1", verdict=None, latency_ms=-2)], "run", RUN)
    text = str(error) + error.to_markdown() + json.dumps(error.to_dict())
    for pandera_word in ("isin", "dtype", "column_in_schema", "not_nullable", "uniqueness",
                         "Rejected", "SchemaError", "greater_than"):
        assert pandera_word not in text
    assert error.__cause__ is None and error.__suppress_context__


def test_a_schema_violation_is_an_input_error_and_survives_pickling():
    error = violation([run_row("q1", verdict="maybe")], "run", RUN)
    assert isinstance(error, InputError) and isinstance(error, ValueError)
    assert (error.file, error.column, error.row, error.value) == (RUN, "verdict", 1, "maybe")
    copy = pickle.loads(pickle.dumps(error))
    assert str(copy) == str(error)
    pd.testing.assert_frame_equal(copy.failures, error.failures)


def test_markdown_rendering_escapes_cells_and_is_limited():
    error = violation([run_row(f"q{i}", verdict="a|b\nc") for i in range(5)], "run", RUN)
    text = error.to_markdown(limit=3)
    lines = text.splitlines()
    assert lines[0] == "| file | column | row | value | check |"
    # Markdown escapes: "\\|" shows a pipe, "\\\\" a backslash (repr wrote the line break
    # as backslash-n, so the cell stays on one line).
    assert lines[2] == ("| runs/exp/variant.jsonl | verdict | 1 | 'a\\|b\\\\nc' | must be one of "
                        "pass, fail |")
    assert len(lines) == 2 + 3 + 2 and lines[-1] == "… and 2 more."


def test_to_dict_is_json_ready():
    error = violation([qrel(relevant=np.int64(2)), qrel(doc_id="d2", source=None)], "qrels",
                      QRELS)
    assert json.loads(json.dumps(error.to_dict()))["failures"] == [
        {"file": QRELS, "column": "relevant", "row": 1, "value": 2,
         "check": "must be one of 0, 1"},
        {"file": QRELS, "column": "source", "row": 2, "value": None, "check": "missing value"}]


def test_a_table_without_rows_is_refused():
    error = violation([], "pools", POOLS)
    assert only_failure(error) == (None, None, None, "the table has no rows")


@pytest.mark.parametrize("call, message", [
    (lambda: validate_table([{"a": 1}], "run", file=RUN), "must be a pandas DataFrame"),
    (lambda: validate_table(table([run_row()]), "runs", file=RUN), "kind must be one of"),
    (lambda: validate_table(table([run_row()]), "run", file=""), "file must be"),
    (lambda: validate_table(table([run_row()]), "goldens", file=GOLDENS,
                            required_columns="lang"), "not one string"),
])
def test_programming_errors_are_value_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


# --- through files ----------------------------------------------------------------------------

def write_jsonl(path, records):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(record) + "\n" for record in records), encoding="utf-8")
    return path


def test_read_input_from_jsonl_names_the_line(tmp_path):
    path = write_jsonl(tmp_path / "runs" / "exp" / "variant.jsonl",
                       [run_row("q1", verdict="pass"), run_row("q2", verdict="maybe")])
    with pytest.raises(SchemaViolation) as caught:
        read_input(path, "run", label=RUN)
    assert only_failure(caught.value) == ("verdict", 2, "maybe", "must be one of pass, fail")


def test_read_input_from_csv_reads_numbers_and_lists(tmp_path):
    path = tmp_path / "variant.csv"
    pd.DataFrame({"example_id": ["q1", "q2"], "latency_ms": ["12.5", "3"],
                  "retrieved": ['["d1", "d2"]', "[]"], "verdict": ["pass", "fail"],
                  "criterion": ["", "tone"]}).to_csv(path, index=False)
    frame = read_input(path, "run")
    assert frame["latency_ms"].tolist() == [12.5, 3.0]
    assert frame["retrieved"].tolist() == [["d1", "d2"], []]
    assert pd.isna(frame["criterion"].iloc[0])  # an empty CSV cell is missing, not ""


def test_read_input_from_parquet_with_typed_columns(tmp_path):
    path = tmp_path / "variant.parquet"
    pd.DataFrame({"example_id": [1, 2],
                  "created_at": pd.to_datetime(["2024-05-01T12:00:00+02:00"] * 2, utc=True)
                  .tz_convert("Europe/Berlin"),
                  "retrieved": [["d1"], ["d2", "d3"]]}).to_parquet(path)
    frame = read_input(path, "run")
    assert frame["example_id"].tolist() == ["1", "2"]
    assert frame["created_at"].tolist() == [pd.Timestamp("2024-05-01T10:00:00Z")] * 2
    assert frame["retrieved"].tolist() == [["d1"], ["d2", "d3"]]
    assert frame.index.tolist() == [1, 2]


def test_naive_parquet_timestamps_are_refused(tmp_path):
    path = tmp_path / "variant.parquet"
    pd.DataFrame({"example_id": ["q1"],
                  "created_at": pd.to_datetime(["2024-05-01T12:00:00"])}).to_parquet(path)
    with pytest.raises(SchemaViolation) as caught:
        read_input(path, "run", label=RUN)
    column, row, value, check = only_failure(caught.value)
    assert (column, row, value) == ("created_at", 1, "2024-05-01T12:00:00")
    assert check.startswith("has no timezone")


def test_read_input_empty_file(tmp_path):
    path = tmp_path / "qa.jsonl"
    path.write_text("\n", encoding="utf-8")
    with pytest.raises(SchemaViolation) as caught:
        read_input(path, "goldens", label=GOLDENS)
    assert only_failure(caught.value) == (None, None, None, "the table is empty")
    assert str(caught.value) == "goldens/qa.jsonl: the table is empty; add at least one row."


def test_read_input_unreadable_file(tmp_path):
    path = tmp_path / "qa.jsonl"
    path.write_text('{"query_id": "q1", "doc_id": "d1"}\n{"query_id": \n', encoding="utf-8")
    with pytest.raises(SchemaViolation) as caught:
        read_input(path, "pools", label=POOLS)
    column, row, _, check = only_failure(caught.value)
    assert (column, row) == (None, 2) and check.startswith("line is not valid JSON")
    assert str(caught.value).startswith("pools/qa.jsonl, row 2: line is not valid JSON")


def test_read_input_missing_file(tmp_path):
    with pytest.raises(SchemaViolation, match="qrels/qa.jsonl: file not found"):
        read_input(tmp_path / "nowhere.jsonl", "qrels", label=QRELS)


# --- unique ids and keys by the fast route ------------------------------------------------------

def _by_pandera_alone(frame, kind, file):
    """What the full pandera schema returns or refuses, without the fast uniqueness route."""
    from pandera.errors import SchemaErrors

    from langchef_core.inputs.schemas.failures import translate
    schema = schema_for(kind)
    try:
        return schema.validate(frame, lazy=True), None
    except SchemaErrors as errors:
        return None, SchemaViolation(translate(errors, schema, file=file, design_columns=()))


@pytest.mark.parametrize("kind", ["goldens", "qrels"])
def test_unique_ids_and_keys_are_judged_as_pandera_judges_them(kind):
    """Random tables with and without repeated ids or (query, doc) pairs, some repeated only
    once numbers become text (7 and "7") and some with another failure too: the frame or
    the failure table is exactly the full schema's."""
    rng = np.random.default_rng(5)
    column = "input" if kind == "goldens" else "relevant"
    for trial in range(120):
        n = int(rng.integers(1, 12))
        ids = [str(i) if rng.random() < 0.5 else int(i) for i in rng.integers(0, 3 * n if trial % 2 else 100, n)]
        if kind == "goldens":
            records = [{"example_id": i, "input": "x"} for i in ids]
        else:
            docs = rng.integers(0, 3, n)
            records = [qrel(i, f"d{d}", int(rng.integers(0, 2))) for i, d in zip(ids, docs)]
        # Other failures beside any repeat (then the relaxed schema's failures are kept when
        # the keys hold no repeat): a bad value, a missing id, a column not allowed.
        if trial % 5 == 0:
            records[-1] = {**records[-1], column: [1]}
        elif trial % 5 == 1:
            records[0] = {**records[0], ("example_id" if kind == "goldens" else "query_id"): None}
        elif trial % 5 == 2 and kind == "qrels":
            records = [{**record, "extra": 1} for record in records]
        frame = table(records)
        expected, refused = _by_pandera_alone(frame.copy(), kind, "t.jsonl")
        if refused is None:
            pd.testing.assert_frame_equal(validate_table(frame, kind, file="t.jsonl"), expected)
        else:
            with pytest.raises(SchemaViolation) as caught:
                validate_table(frame, kind, file="t.jsonl")
            assert rows_of(caught.value) == rows_of(refused) and str(caught.value) == str(refused)


def test_timestamp_failures_are_found_as_pandera_finds_them(monkeypatch):
    """Run tables whose ``created_at`` mixes good times, naive ones, text that is no time,
    missing values and times out of range: the failure table (or the frame) is exactly the
    one pandera's own timestamp dtype gives. Only finding a failing column's culprits is
    quicker (``models._UtcTimestamps``: one bad time among 10^6 refused in 1.6 s, not 17 s)."""
    from langchef_core.inputs import schemas
    from langchef_core.inputs.schemas import models
    rng = np.random.default_rng(11)
    kinds = ["2024-05-01T12:00:00Z", "2024-05-01T12:00:00+02:00", "2024-05-01T12:00:00",
             "yesterday", None, "1500-01-01T00:00:00Z", 17, "2024-05-01 12:00:00.5-03:00"]
    outcomes = []
    for trial in range(40):
        n = int(rng.integers(1, 9))
        weights = np.array([8, 3, 1, 1, 1, 1, 1, 1], float) if trial % 2 else np.r_[1.0, np.zeros(7)]
        records = [run_row(f"q{i}", verdict="pass", created_at=kinds[rng.choice(8, p=weights / weights.sum())])
                   for i in range(n)]
        outcome = []
        for quick in (True, False):
            if not quick:
                monkeypatch.setattr(schemas, "with_quick_timestamps", lambda schema: schema)
            assert (type(schemas.schema_for("run").columns["created_at"].dtype) is
                    models._UtcTimestamps) is quick
            try:
                outcome.append(("frame", validate_table(table(records), "run", file=RUN)))
            except SchemaViolation as error:
                outcome.append(("refused", rows_of(error), str(error)))
            monkeypatch.undo()
        quick_result, pandera_result = outcome
        assert quick_result[0] == pandera_result[0]
        if quick_result[0] == "frame":
            pd.testing.assert_frame_equal(quick_result[1], pandera_result[1])
        else:
            assert quick_result[1:] == pandera_result[1:]
        outcomes.append(quick_result[0])
    assert {"frame", "refused"} <= set(outcomes)
