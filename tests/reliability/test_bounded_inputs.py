"""Issue 13, defects 7 and 9 and the low items on bounded input: every hostile or broken
input is one sentence naming the file (and row), never a traceback, a hang or a guess."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pandas as pd
import pytest

from langchef_core.designs.traffic import approved_before_traffic
from langchef_core.inputs.errors import InputError
from langchef_core.inputs.tables import read_table
from langchef_core.inputs.workspace import Workspace, check_name
from langchef_core.readout.publish import readout_bytes
from langchef_core.report import render_report
from tests.core.test_report_render import CREATED_AT, regression_readout

from .conftest import DESIGN, JUDGE, one_sentence, recorded_workspace

NAME = "short-prompt"
BOMB = "".join(f'{chr(97 + i)}: &{chr(97 + i)} [' + ", ".join([f"*{chr(96 + i)}"] * 9) + "]\n"
               for i in range(1, 10))
BOMB = 'a0: &` ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]\n' + BOMB


def design_text(**extra_lines) -> str:
    return DESIGN.format(name=NAME, judge=JUDGE) + "".join(extra_lines.values())


def test_a_yaml_alias_bomb_is_refused_at_once_and_does_not_break_status(langchef, tmp_path):
    # Defect 7: about 600 bytes that expand to 10^9 strings.
    root = tmp_path / "evals"
    recorded_workspace(root)
    bomb = root / "experiments" / "bomb.yaml"
    bomb.write_text("experiment: bomb\n" + BOMB.replace("&`", "&z").replace("*`", "*z"),
                    encoding="utf-8")
    assert len(bomb.read_bytes()) < 1000
    checked = langchef("design", "check", "bomb", "--workspace", root)
    assert checked.code == 2
    assert "experiments/bomb.yaml, line 2: uses a YAML anchor or alias" in \
        one_sentence(checked.stderr)
    rows = {row["experiment"]: row for row in
            langchef("status", "--workspace", root, "--json").json["experiments"]}
    assert rows["bomb"]["state"] == "invalid" and rows[NAME]["state"] == "approved"


def test_deep_and_huge_designs_are_one_sentence(langchef, tmp_path):
    root = tmp_path / "evals"
    recorded_workspace(root, approved=False)
    path = root / "experiments" / f"{NAME}.yaml"
    path.write_text(design_text(deep="notes: " + "[" * 5000 + "]" * 5000 + "\n"), encoding="utf-8")
    deep = langchef("design", "check", NAME, "--workspace", root)
    assert deep.code == 2 and "is nested more than 32 levels deep" in one_sentence(deep.stderr)
    path.write_text(design_text() + "# " + "x" * 300_000 + "\n", encoding="utf-8")
    huge = langchef("design", "check", NAME, "--workspace", root)
    assert huge.code == 2 and "larger than 256 KiB" in one_sentence(huge.stderr)
    path.write_bytes(design_text().encode() + b"notes: caf\xe9\n")
    latin = langchef("design", "check", NAME, "--workspace", root)
    assert latin.code == 2
    assert f"experiments/{NAME}.yaml, line 15: the file is not UTF-8 text" in \
        one_sentence(latin.stderr)


def test_bootstrap_resamples_has_an_upper_bound(langchef, tmp_path):
    root = tmp_path / "evals"
    recorded_workspace(root, approved=False)
    path = root / "experiments" / f"{NAME}.yaml"
    path.write_text(design_text().replace("resamples: 2000", "resamples: 2000000000"),
                    encoding="utf-8")
    result = langchef("approve", NAME, "--by", "ada", "--workspace", root)
    assert result.code == 2
    assert "field 'bootstrap.resamples'" in result.stderr
    assert "must be at most 100000, got 2000000000; use 1000 to 100000 resamples" in result.stderr


def test_a_table_in_two_formats_is_refused_naming_both(tmp_path):
    # Defect 9.
    workspace = Workspace(recorded_workspace(tmp_path / "evals", approved=False).root)
    (workspace.root / "goldens" / "faq.csv").write_text("example_id,input\ng000,q\n")
    with pytest.raises(InputError) as caught:
        workspace.goldens_path("faq")
    assert str(caught.value).startswith("goldens/faq.jsonl and goldens/faq.csv are one table "
                                        "in 2 formats")
    pd.DataFrame({"example_id": ["g000"]}).to_parquet(workspace.root / "runs" / NAME /
                                                      "short.parquet")
    with pytest.raises(InputError, match="runs/short-prompt/short.jsonl and "
                                         "runs/short-prompt/short.parquet are one table"):
        workspace.run_path(NAME, "short")


@pytest.mark.slow  # one readout through Dagster
def test_a_run_in_two_formats_stops_the_readout(langchef, tmp_path):
    root = tmp_path / "evals"
    recorded_workspace(root)
    (root / "runs" / NAME / "short.csv").write_text("example_id\ng000\n")
    result = langchef("readout", NAME, "--workspace", root)
    assert result.code == 2
    assert "runs/short-prompt/short.jsonl and runs/short-prompt/short.csv are one table" in \
        one_sentence(result.stderr)


def test_names_are_matched_in_full(langchef, tmp_path):
    # Low item: a trailing newline made "x\n" a different experiment that still ran.
    for name in ("short-prompt\n", "short-prompt\n\n", "v1\n"):
        with pytest.raises(InputError, match="is not allowed"):
            check_name(name)
    root = tmp_path / "evals"
    recorded_workspace(root)
    result = langchef("design", "check", f"{NAME}\n", "--workspace", root)
    assert result.code == 2 and "experiment name 'short-prompt\\n' is not allowed" in result.stderr


def test_traffic_from_the_future_is_refused(tmp_path):
    workspace = recorded_workspace(tmp_path / "evals")
    approval = load_state_approval(workspace)
    runs = {"current": pd.DataFrame({"created_at": ["2026-02-01T10:00:00Z"]}, index=[1]),
            "short": pd.DataFrame({"created_at": ["2026-02-01T10:00:00Z", "2099-01-01T00:00:00Z"]},
                                  index=[1, 2])}
    now = datetime(2026, 3, 1, tzinfo=timezone.utc)
    check = approved_before_traffic(approval, runs, files={"short": "runs/x/short.jsonl"}, now=now)
    assert not check.passed
    assert check.sentence.startswith("runs/x/short.jsonl, column 'created_at', row 2: created at "
                                     "2099-01-01T00:00:00Z, in the future")
    runs["short"].loc[2, "created_at"] = "2026-03-01T00:04:00Z"  # within the clock skew
    assert approved_before_traffic(approval, runs, now=now).passed


def load_state_approval(workspace):
    from langchef_core.designs.approval import verified_approval
    return verified_approval(workspace, NAME)


@pytest.mark.parametrize("name, content, words", [
    ("bad.jsonl", b'{"example_id": "a"}\n{"example_id": "caf\xe9"}\n',
     "bad.jsonl, row 2: line is not UTF-8 text"),
    ("bad.csv", b"example_id,input\ng1,ok\ng2,caf\xe9\n",
     "bad.csv, row 2: is not UTF-8 text (byte 30, on line 3"),
    ("dupe.csv", b"example_id,output,output\ng1,a,b\n",
     "dupe.csv, column 'output': appears twice in the header (columns 2 and 3)"),
    ("deep.jsonl", b'{"example_id": "a"}\n' + b'{"x": ' * 100_000 + b"1" + b"}" * 100_000 + b"\n",
     "deep.jsonl, row 2: line is nested too deeply to read"),
])
def test_broken_tables_name_the_file_and_row(tmp_path, name, content, words):
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(InputError) as caught:
        read_table(path, label=name)
    assert str(caught.value).startswith(words)


def test_terminal_output_neutralises_control_and_bidi_characters(langchef, tmp_path):
    root = tmp_path / "evals"
    recorded_workspace(root)
    path = root / "approvals" / f"{NAME}.json"
    record = json.loads(path.read_text(encoding="utf-8"))
    record["approved_by"] = "Rita\x1b[2J\x1b]0;owned\x07 \u202eweiveR\u009b31m"
    path.write_text(json.dumps(record), encoding="utf-8")
    design = root / "experiments" / f"{NAME}.yaml"
    design.write_text(design.read_text(encoding="utf-8").replace(
        "hypothesis: The shorter prompt answers at least as well as the current one.",
        "hypothesis: \"\u202eThe \\u009b shorter prompt.\""), encoding="utf-8")
    for command in (("status",), ("status", "--json"), ("design", "check", NAME),
                    ("design", "check", NAME, "--json")):
        result = langchef(*command, "--workspace", root)
        assert result.code == 0, result.stderr
        for raw in ("\x1b", "\x07", "\u202e", "\u009b"):
            assert raw not in result.stdout, command
        assert "Rita" in result.stdout or command[0] == "design"
    checked = langchef("design", "check", NAME, "--workspace", root, "--json")
    assert "\\u202eThe \\u009b shorter" in checked.stdout  # shown, as escapes
    assert checked.json["design"]["hypothesis"].startswith("\u202eThe \u009b")  # same value


def test_bidi_text_is_isolated_in_the_page_and_long_cells_are_cut(tmp_path):
    readout = regression_readout()
    readout["hypothesis"] = "Stale documents \u202eon dah\u202c do not hurt."
    huge = "x" * 10_000_000
    readout["broke"][0]["variant_output"] = huge
    html = render_report(readout, CREATED_AT)
    assert "<bdi>Stale documents \u202eon dah\u202c do not hurt.</bdi>" in html
    assert len(html) < 1_000_000
    assert "9,996,000 more characters not shown; the full text is in readout.json" in html
    assert huge.encode() in readout_bytes(readout)  # the readout keeps every character
