"""JSON lines read by pyarrow give the frame the line-by-line reader gives — columns and
their order, dtypes, the 1-based line index, every cell's type and value — or the reader
falls back to reading line by line, so its errors still name the line (issue 19)."""

import json
import random

import pytest

from langchef_core.inputs.columnar import read_jsonl_columns
from langchef_core.inputs.id_lists import is_text_lists
from langchef_core.inputs.errors import InputError
from langchef_core.inputs.tables import _read_jsonl, read_table


def _cells(frame):
    """What a frame holds. A column of lists of text read by pyarrow stays an Arrow list
    column (``id_lists``): the same cells, told apart from the line reader's only by dtype."""
    return (list(frame.columns),
            ["object" if is_text_lists(dtype) else str(dtype) for dtype in frame.dtypes],
            list(frame.index),
            str(frame.index.dtype),
            [[(type(cell), "nan" if cell != cell else cell) for cell in frame[column].tolist()]
             for column in frame.columns])


def _value(r, kind):
    return {"str": lambda: r.choice(["a", "b c", "é", "", " x ", "1"]),
            "int": lambda: r.randint(-5, 10**12),
            "float": lambda: r.choice([r.random(), 1.0, 0.1, 1e-300, 3]),
            "bool": lambda: r.random() < .5,
            "stamp": lambda: f"2026-0{r.randint(1, 9)}-1{r.randint(0, 9)}T0{r.randint(0, 9)}:00:00Z",
            "list": lambda: [r.choice(["d1", "d2", "d3"]) for _ in range(r.randint(0, 4))],
            "mixed": lambda: r.choice([1, "a", 2.5]),
            "object": lambda: {"k": 1}}[kind]()


def _files(count=150, seed=11):
    r = random.Random(seed)
    kinds = ["str", "str", "int", "float", "bool", "stamp", "list", "mixed", "object"]
    for case in range(count):
        columns = {f"c{i}": r.choice(kinds) for i in range(r.randint(1, 5))}
        rows = []
        for _ in range(r.randint(1, 30)):
            row = {}
            for name, kind in columns.items():
                roll = r.random()
                if roll < .06:
                    continue  # a missing key
                row[name] = None if roll < .12 else _value(r, kind)
            rows.append(row)
        text = "".join(json.dumps(row, ensure_ascii=r.random() < .5) + "\n" for row in rows)
        yield case, (text.rstrip("\n") if r.random() < .1 else text)


@pytest.mark.parametrize("case, text", list(_files()), ids=lambda v: str(v) if isinstance(v, int) else "")
def test_pyarrow_gives_the_line_by_line_frame_or_declines(tmp_path, case, text):
    path = tmp_path / "table.jsonl"
    path.write_text(text, encoding="utf-8")
    fast = read_jsonl_columns(path)
    if fast is not None:
        assert _cells(fast) == _cells(_read_jsonl(path, "table.jsonl"))


def test_a_realistic_run_file_takes_the_fast_path(tmp_path):
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps({"example_id": f"g{i}", "output": "x", "created_at": "2026-01-02T03:04:05Z",
                                        "latency_ms": 10.5 + i, "retrieved": ["d1", "d2"], "verdict": "pass",
                                        "criterion": None if i % 2 else "tone", "judge": "j"}) + "\n"
                            for i in range(50)), encoding="utf-8")
    fast = read_jsonl_columns(path)
    assert fast is not None
    assert _cells(fast) == _cells(_read_jsonl(path, "run.jsonl"))
    assert fast["created_at"].iloc[0] == "2026-01-02T03:04:05Z"


@pytest.mark.parametrize("text, row", [('{"a": 1}\n{"a": \n', 2), ('{"a": 1}\n\n[1]\n', 3),
                                       ('{"a": 1}\n{"a": NaN}\n{"a": }\n', 3)])
def test_broken_lines_are_still_named_by_number(tmp_path, text, row):
    path = tmp_path / "broken.jsonl"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as raised:
        read_table(path, label="runs/x/broken.jsonl")
    assert raised.value.row == row and raised.value.file == "runs/x/broken.jsonl"


@pytest.mark.parametrize("content, fast", [
    (b'{"a": 1}\n{"a": 2}\n', True), (b'{"a": 1}\n{"a": 2}', True),
    (b'{"a": 1}\n\n{"a": 2}\n', False),                  # a blank line pyarrow would skip
    (b'{"a": 1}\n {"a": 2}\n', False), (b'{"a": 1}\n{"a": 2}\n\n', False),
    (b'{"a": 1}\n\n{"a": 2} {"a": 3}\n', False),         # a skipped line made up by two on one
])
def test_only_files_whose_every_line_opens_an_object_take_the_fast_path(tmp_path, content, fast):
    path = tmp_path / "t.jsonl"
    path.write_bytes(content)
    assert (read_jsonl_columns(path) is not None) == fast


@pytest.mark.parametrize("content", [
    b'{"example_id": "a"}\n{"example_id": "caf\xe9"}\n',                     # bad UTF-8
    b'{"example_id": "a"}\n' + b'{"x": ' * 100_000 + b"1" + b"}" * 100_000 + b"\n",  # deep
])
def test_lines_pyarrow_would_pass_or_crash_on_are_left_to_the_line_reader(tmp_path, content):
    """pyarrow passes bad UTF-8 through, and its recursive parser would crash the whole
    process on a hostile nested line: both go to the line reader, which names the line."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(content)
    assert read_jsonl_columns(path) is None


def test_ranked_lists_stay_arrow_lists_without_a_string_per_id(tmp_path):
    """A list column of text is kept as pyarrow read it (no Python string per id), and its
    cells are still the line reader's; a list with a missing item is read as before."""
    rng = random.Random(3)
    path = tmp_path / "run.jsonl"
    path.write_text("".join(json.dumps({"example_id": f"g{i}", "retrieved": [
        f"d{rng.randrange(500)}" for _ in range(rng.randrange(0, 20))]}) + "\n" for i in range(2_000)),
        encoding="utf-8")
    fast = read_jsonl_columns(path)
    assert is_text_lists(fast["retrieved"].dtype)
    assert _cells(fast) == _cells(_read_jsonl(path, "run.jsonl"))
    path.write_text('{"example_id": "a", "retrieved": ["d1", null]}\n', encoding="utf-8")
    fast = read_jsonl_columns(path)
    assert fast is None or fast["retrieved"].dtype == object


def test_parquet_lists_of_text_stay_arrow_lists(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    path = tmp_path / "run.parquet"
    pq.write_table(pa.table({"example_id": ["a", "b", "c"], "retrieved": [["d1", "d2"], [], ["d3"]],
                             "latency_ms": [1.0, 2.0, 3.0]}), path)
    frame = read_table(path)
    assert list(frame.columns) == ["example_id", "retrieved", "latency_ms"]
    assert list(frame.index) == [1, 2, 3]
    assert is_text_lists(frame["retrieved"].dtype)
    assert frame["retrieved"].tolist() == [["d1", "d2"], [], ["d3"]]
    assert str(frame["example_id"].dtype) == "str" and frame["latency_ms"].dtype == float
    pq.write_table(pa.table({"example_id": ["a", "b"], "retrieved": [["d1", None], None]}), path)
    frame = read_table(path)  # a missing item or list: as pandas reads it, for the row rules
    assert frame["retrieved"].dtype == object


def test_brackets_are_counted_per_line_across_scan_slices(monkeypatch):
    """The nesting guard scans the file a slice at a time; a line cut by a slice border is
    still counted whole (slices of 7 bytes here, 16 MiB in use)."""
    from langchef_core.inputs import columnar
    monkeypatch.setattr(columnar, "_SCAN_BYTES", 7)
    rng = random.Random(8)
    for _ in range(2000):
        body = b"\n".join(bytes(rng.choice(b"{[ab") for _ in range(rng.randint(0, 90)))
                          for _ in range(rng.randint(1, 6)))
        most = max(line.count(b"{") + line.count(b"[") for line in body.split(b"\n"))
        assert columnar._most_brackets_on_a_line(body) == most, body
        # The guard's shortcut holds for lines that each open with "{", as read_jsonl_columns
        # makes sure of before asking.
        opened = b"\n".join(b"{" + line for line in body.split(b"\n"))
        assert columnar._too_deep(opened, body.count(b"\n") + 1) == \
            (most + 1 > columnar._MAX_BRACKETS_PER_LINE), body


def test_only_the_two_brackets_count_as_openers():
    """The scan finds "{" and "[" with one compare of the byte with bit 0x20 set; no other
    byte is taken for one."""
    from langchef_core.inputs import columnar
    every = bytes(range(256))
    assert columnar._most_brackets_on_a_line(every.replace(b"\n", b"")) == 2
    assert columnar._most_brackets_on_a_line(b"") == 0


def test_tables_beyond_available_memory_are_refused_before_reading(tmp_path, monkeypatch):
    """The memory rule (issue 31): a table is refused before it is read when about 4× its
    size (read in bulk: parquet, plain JSON lines) or 10× (read line by line: CSV, JSON lines
    pyarrow cannot take) exceeds the memory the process may still use; anything above the
    table limit is refused too. The refusal says how much is needed and what to do."""
    from langchef_core.inputs import tables
    plain = tmp_path / "run.jsonl"
    plain.write_text("".join(json.dumps({"example_id": f"q{i}", "retrieved": ["a", "b"]}) + "\n"
                             for i in range(20)))
    size = plain.stat().st_size
    monkeypatch.setattr(tables, "available_memory", lambda: 5 * size)
    assert len(tables.read_table(plain)) == 20
    blank = tmp_path / "blank.jsonl"
    blank.write_text(plain.read_text() + "\n")
    with pytest.raises(InputError, match=r"blank.jsonl: needs about .* of memory to read \(this "
                                         r"JSON-lines file cannot be read in bulk .* is read line by line, "
                                         r"which holds about 10 times the file's \d+ bytes\), and [\d.]+ KiB is "
                                         r"available; .*write it as parquet"):
        tables.read_table(blank)
    csv = tmp_path / "run.csv"
    csv.write_text("example_id,score\n" + "".join(f"q{i},1\n" for i in range(20)))
    monkeypatch.setattr(tables, "available_memory", lambda: 9 * csv.stat().st_size)
    with pytest.raises(InputError, match="a CSV file is read line by line"):
        tables.read_table(csv)
    monkeypatch.setattr(tables, "available_memory", lambda: 3 * size)
    with pytest.raises(InputError, match="a jsonl file is read in bulk, which holds about 4 times"):
        tables.read_table(plain)
    monkeypatch.setattr(tables, "available_memory", lambda: None)  # unknown: nothing refused
    assert len(tables.read_table(blank)) == 20
    monkeypatch.setattr(tables, "MAX_TABLE_BYTES", 64)
    with pytest.raises(InputError, match="is larger than 0 MiB; split the suite"):
        tables.read_table(plain)


def test_available_memory_is_bounded_by_the_process_limits():
    """The memory the rule compares against is never more than the system has available."""
    from langchef_core.inputs import tables
    available = tables.available_memory()
    if available is None:
        pytest.skip("no /proc/meminfo, cgroup or resource limits here")
    with open("/proc/meminfo") as handle:
        total = next(int(line.split()[1]) * 1024 for line in handle if line.startswith("MemTotal:"))
    assert 0 <= available <= total


def test_a_malformed_json_line_is_named_with_what_to_do(tmp_path):
    """The bulk reader gives way to the line reader for a broken line, whose error names the
    file, the line and what to do."""
    from langchef_core.inputs import tables
    path = tmp_path / "run.jsonl"
    path.write_text('{"example_id": "q1", "retrieved": ["a"]}\n{"example_id": "q2", "retrieved": [\n')
    with pytest.raises(InputError) as caught:
        tables.read_table(path, label="runs/exp/base.jsonl")
    error = caught.value
    assert (error.file, error.row) == ("runs/exp/base.jsonl", 2)
    assert "line is not valid JSON" in str(error) and "write one JSON object per line" in str(error)


def test_parquet_row_groups_are_read_in_parallel_to_the_same_frame(tmp_path):
    """A parquet file of several row groups has its list columns decoded one row group per
    thread (issue 31); the frame, its dtypes and its row numbers are those of the same table
    written as one row group."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    from langchef_core.inputs import tables
    table = pa.table({"example_id": [f"q{i}" for i in range(50)],
                      "retrieved": [[f"d{i}", f"d{i + 1}", "shared"][: 1 + i % 3] for i in range(50)],
                      "score": [float(i) for i in range(50)]})
    pq.write_table(table, tmp_path / "one.parquet")
    pq.write_table(table, tmp_path / "many.parquet", row_group_size=7)
    assert pq.ParquetFile(tmp_path / "many.parquet").metadata.num_row_groups == 8
    one, many = tables.read_table(tmp_path / "one.parquet"), tables.read_table(tmp_path / "many.parquet")
    assert one.dtypes.tolist() == many.dtypes.tolist() and one.index.equals(many.index)
    assert one.equals(many) and many["retrieved"].tolist() == table.column("retrieved").to_pylist()
