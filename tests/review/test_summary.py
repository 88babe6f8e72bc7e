"""`langchef summary`: the demo's eight readouts as a golden file, byte for byte, and
escaping that holds against hostile names and hypotheses.

The golden files follow the demo's readouts (pinned by tests/pipeline/test_demo_readout_hashes.py):
a commit that moves a demo number on purpose regenerates them with
``langchef summary --workspace demo-workspace > tests/review/golden/summary-demo.md`` (and
``--format text`` for the .txt), and copies the .md into the README's "The comment, exactly".
"""

import json
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from langchef_core.review.markdown import WORD_JOINER, markdown_text
from langchef_core.review.readouts import latest_readouts
from langchef_core.review.summary import render_summary, summary_row
from tests.cli.conftest import console_script
from tests.cli.test_cli_gate import write_manifest

GOLDEN = Path(__file__).parent / "golden"


def summary(*arguments) -> str:
    import subprocess

    completed = subprocess.run([str(console_script()), "summary", *map(str, arguments)],
                               capture_output=True, text=True, timeout=120)
    assert completed.returncode == 0, completed.stderr
    return completed.stdout


@pytest.mark.slow
@pytest.mark.parametrize("output_format, golden", [("markdown", "summary-demo.md"),
                                                   ("text", "summary-demo.txt")])
def test_the_demo_summary_is_the_golden_file(demo_workspace, output_format, golden):
    found = summary("--workspace", demo_workspace, "--format", output_format)
    assert found == (GOLDEN / golden).read_text(encoding="utf-8")
    # Same readouts, same bytes: a second run, and a second copy of the workspace.
    assert summary("--workspace", demo_workspace, "--format", output_format) == found


def test_the_readme_shows_the_golden_comment_exactly():
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    golden = (GOLDEN / "summary-demo.md").read_text(encoding="utf-8")
    assert "````markdown\n" + golden + "````\n" in readme


@pytest.mark.slow
def test_the_demo_summary_links_under_a_base_url_and_names_experiments(demo_workspace):
    found = summary("--workspace", demo_workspace, "stale-index", "cheaper-model",
                    "--base-url", "https://evals.example.com/pr-7/", "--format", "json")
    rows = json.loads(found)["readouts"]
    assert [row["experiment"] for row in rows] == ["cheaper-model", "stale-index"]
    assert rows[1]["link"] == "https://evals.example.com/pr-7/stale-index/v1/index.html"
    assert rows[0]["lead"] == "HELD at -5.0 points" and rows[0]["gate_passed"] is True


# ----------------------------------------------------------------------------------------
# Hostile text
# ----------------------------------------------------------------------------------------

HOSTILE = [
    "![pixel](https://evil.example/t.png)",
    "<img src=x onerror=alert(1)>",
    "[click me](javascript:alert(1)) and <https://evil.example/a>",
    "https://evil.example/b www.evil.example mail@evil.example",
    "cell | breaker\nnew line | and more",
    "`code` **bold** _it_ ~~gone~~ $x^2$ <script>alert(1)</script> &lt;b&gt;",
    "@octocat and #12 and [ref]: https://evil.example/c",
]
BASE = "https://reports.example.com/site/"


def hostile_readout(experiment: str, hypothesis: str, guardrail: str) -> dict:
    return {"format": 1, "experiment": experiment, "version": 1, "hypothesis": hypothesis,
            "design": {"sha256": "a" * 64, "kind": "superiority"},
            "primary": {"metric": hypothesis[:40], "verdict": "improvement", "noninferiority": None,
                        "margin": None, "difference": 0.1, "low": 0.02, "high": 0.18},
            "guardrails": [{"name": guardrail, "kind": "cost", "breached": True,
                            "relative_low": 0.3, "max_increase": 0.1, "increase": 0.5}],
            "warnings": [], "gate": {"passed": False, "reasons": [hypothesis]}}


def hostile_reports(root: Path) -> Path:
    # Folder names are checked (letters, digits, '-', '_', '.'), but even those can be
    # Markdown: emphasis, or a bare domain GitHub would link.
    names = ["www.evil.example", "em_x_", "a__b__c"]
    for index, name in enumerate(names):
        folder = root / name / "v1"
        folder.mkdir(parents=True)
        text = HOSTILE[index % len(HOSTILE)] + " " + " ".join(HOSTILE)
        (folder / "readout.json").write_text(json.dumps(hostile_readout(name, text, text)),
                                             encoding="utf-8")
        write_manifest(folder / "readout.json")
    return root


def rendered(markdown: str) -> str:
    return MarkdownIt("gfm-like").enable(["linkify"]).render(markdown)


@pytest.mark.parametrize("output_format", ["markdown", "github"])
def test_hostile_names_and_hypotheses_add_no_link_image_or_html(tmp_path, output_format):
    published = latest_readouts(hostile_reports(tmp_path))
    text = render_summary([summary_row(item, BASE) for item in published], output_format)
    html = rendered(text)
    links = sorted(part.split('"')[1] for part in html.split("<a ")[1:])
    assert links == sorted(f"{BASE}{name}/v1/index.html"
                           for name in ("www.evil.example", "em_x_", "a__b__c"))
    for tag in ("<img", "<script", "<em>", "<code>", "<del>", "<s>"):
        assert tag not in html
    # One table row per readout: a line break or a pipe in a name did not split a row.
    assert html.count("<tr>") == 1 + len(published)
    # What a reader sees is the text itself.
    visible = html.replace(WORD_JOINER, "")
    assert "![pixel](https://evil.example/t.png)" in visible
    assert "&lt;img src=x onerror=alert(1)&gt;" in visible
    assert "@octocat and #12" in visible


def test_markdown_text_keeps_numbers_and_sentences_readable():
    assert markdown_text("-3.3 points, p = 0.375.") == "-3.3 points, p = 0.375."
    assert markdown_text("see www.x.org") == "see www\\.x\\.org"
    assert markdown_text("a\n|b") == "a \\|b"
    assert markdown_text("@team") == "\\@" + WORD_JOINER + "team"


def test_a_readout_changed_after_publishing_is_refused(tmp_path):
    from langchef_core.inputs.errors import InputError

    root = hostile_reports(tmp_path)
    folder = root / "em_x_" / "v1"
    (folder / "manifest.json").write_text(json.dumps({"files": {"readout.json": "0" * 64}}))
    with pytest.raises(InputError, match="does not match the file beside it"):
        latest_readouts(root)


def test_the_command_offers_every_format():
    from langchef_core.review import summary
    from langchef_pipeline.cli import summary as command

    assert command.FORMATS == summary.FORMATS


def test_summary_errors_are_one_sentence(langchef, tmp_path):
    missing = langchef("summary", "--workspace", tmp_path)
    assert missing.code == 2 and "no reports folder here" in missing.stderr
    bad_url = langchef("summary", "--workspace", tmp_path, "--base-url", "javascript:alert(1)")
    assert bad_url.code == 2 and "not a plain http(s) URL" in bad_url.stderr
