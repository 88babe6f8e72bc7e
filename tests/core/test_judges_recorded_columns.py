"""The recorded judge read column by column gives exactly what the row-by-row reading gives:
the same frame (columns, dtypes, index, every cell's type and value), the same usage, and the
same error (type, message, file, column, row, hint) on a bad row (issue 19)."""

import numpy as np
import pandas as pd
import pytest

from langchef_core.scoring.judges.recorded import RecordedJudge

SOURCE = "runs/exp/variant.jsonl"


def _frames():
    r = np.random.default_rng(9)
    n = 600
    passed = r.random(n) < .7
    base = pd.DataFrame({"example_id": [f"ex{i}" for i in range(n)], "verdict": np.where(passed, "pass", "fail"),
                         "criterion": np.where(passed, None, r.choice(["accuracy", "tone", " ", ""], n)).tolist(),
                         "judge": "rubric:abc", "rationale": r.choice(["ok", "", None, np.nan], n).tolist()})
    both = ("accuracy", "tone")
    yield "plain", base, both
    f = base.copy(); f["verdict"] = passed; yield "numpy bool verdicts", f, both
    f = base.copy(); f["verdict"] = f["verdict"].astype(object)
    f.loc[::7, "verdict"] = " PASS "; f.loc[::11, "verdict"] = True; f.loc[::13, "verdict"] = np.False_
    yield "mixed object verdicts", f, both
    f = base.copy(); f.index = pd.Index(np.arange(2, n + 2), name="row"); yield "row index", f, None
    yield "no criterion or rationale", base.drop(columns=["criterion", "rationale"]), ("accuracy",)
    f = base.copy(); f["rationale"] = r.random(n); yield "numeric rationale", f, None
    f = base.copy(); f["rationale"] = f["rationale"].astype(object); yield "object rationale", f, None
    f = base.copy(); f["criterion"] = pd.Series(f["criterion"], dtype=object); f.loc[5, "verdict"] = "fail"
    f.loc[5, "criterion"] = 3; yield "int criterion", f, both
    # Criteria match case-insensitively and take the design's spelling (issue 14).
    f = base.copy(); f["criterion"] = f["criterion"].str.upper(); yield "criteria in other case", f, both
    for kind, value in (("1", 1), ("None", None), ("maybe", "maybe"), ("nan", np.nan), ("list", ["pass"])):
        f = base.copy(); f["verdict"] = f["verdict"].astype(object); f.loc[1, "verdict"] = True
        f.at[300, "verdict"] = value; yield f"bad verdict {kind}", f, both
    f = base.copy(); f["verdict"] = f["verdict"].astype(object); f.loc[300, "verdict"] = "nope"
    f.loc[100, "verdict"] = "fail"; f.loc[100, "criterion"] = "style"; yield "bad criterion first", f, both
    f = base.copy(); f["verdict"] = f["verdict"].astype(object); f.loc[100, "verdict"] = "nope"
    f.loc[300, "verdict"] = "fail"; f.loc[300, "criterion"] = "style"; yield "bad verdict first", f, both
    f = base.copy(); f.loc[77, "judge"] = "other:1"; yield "wrong judge", f, None
    f = base.copy(); f["judge"] = f["judge"].astype(object); f.loc[77, "judge"] = None; yield "missing judge", f, None
    f = base.copy(); f.loc[10, "example_id"] = "ex3"; yield "duplicate id", f, None
    f = base.copy(); f["example_id"] = f["example_id"].astype(object); f.loc[10, "example_id"] = " "; yield "blank id", f, None
    f = base.copy(); f["example_id"] = np.arange(n); yield "integer ids", f, None
    # Text (str dtype) columns are read by distinct values (issue 31): the same frame and errors.
    text = base.astype({"verdict": "str", "criterion": "str", "judge": "str", "example_id": "str"})
    text["criterion"] = pd.Series(np.where(passed, None, r.choice(["accuracy", " Tone", "TONE "], n)), dtype="str")
    yield "text columns", text, both
    f = text.copy(); f["criterion"] = base["criterion"].astype("str"); yield "text: blank criteria, none listed", f, None
    yield "text columns, no criteria listed", text, None
    yield "text columns, empty criteria list", text, ()
    f = text.copy(); f.loc[40, "verdict"] = " Fail"; f.loc[41, "verdict"] = "PASS"; yield "text verdicts in other case", f, both
    f = text.copy(); f.loc[300, "verdict"] = "maybe"; f.loc[100, "verdict"] = "fail"
    f.loc[100, "criterion"] = "style"; yield "text: bad criterion before bad verdict", f, both
    f = text.copy(); f.loc[300, "verdict"] = "maybe"; yield "text: bad verdict", f, both
    f = text.copy(); f.loc[200, "verdict"] = "fail"; f.loc[200, "criterion"] = None; yield "text: uncited fail", f, both
    f = text.copy(); f.loc[200, "verdict"] = "fail"; f.loc[200, "criterion"] = "\u3000"; yield "text: blank fail", f, both
    f = text.copy(); f.loc[5, "criterion"] = "accuracy"; f.loc[5, "verdict"] = "pass"; yield "text: criterion on a pass", f, both
    f = text.copy(); f.loc[9, "judge"] = "other:1"; yield "text: wrong judge", f, None
    f = text.copy(); f.loc[9, "judge"] = None; yield "text: missing judge", f, None
    for blank in (" ", "", "\x1c", "\u3000\u2028", "\x85"):
        f = text.copy(); f.loc[10, "example_id"] = blank; yield f"text: blank id {blank!r}", f, None
    f = text.copy(); f.loc[10, "example_id"] = None; yield "text: missing id", f, None
    f = text.copy(); f.loc[10, "example_id"] = "ex3"; yield "text: duplicate id", f, None
    f = text.copy(); f.loc[10, "example_id"] = " ex10\u3000"; yield "text: padded id", f, None
    yield "text, no criterion column", text.drop(columns=["criterion"]), None
    yield "text, no criterion column, criteria listed", text.drop(columns=["criterion"]), both
    yield "no verdict column", base.drop(columns=["verdict"]), None
    yield "anchor ids", base.rename(columns={"example_id": "anchor_id"}), None
    yield "one row", base.iloc[:1], None
    yield "empty", base.iloc[:0], None


def _outcome(run, frame):
    try:
        judgement = run(frame, source=SOURCE)
    except Exception as error:  # compared by everything an error carries
        return ("error", type(error).__name__, str(error), *(getattr(error, name, None)
                                                             for name in ("file", "column", "row", "hint")))
    frame = judgement.verdicts
    return ("ok", list(frame.columns), [str(dtype) for dtype in frame.dtypes], list(frame.index),
            frame.index.name, [[(type(cell), cell) for cell in frame[column].tolist()] for column in frame.columns],
            judgement.usage)


@pytest.mark.parametrize("name, frame, criteria", list(_frames()), ids=[case[0] for case in _frames()])
def test_columns_and_rows_give_the_same_judgement(name, frame, criteria):
    judge = RecordedJudge("rubric:abc", criteria)
    assert _outcome(judge.run, frame) == _outcome(judge._run_by_rows, frame)
