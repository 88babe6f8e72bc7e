"""`langchef init`, help texts, error conventions and a light start-up."""

import pytest

from .conftest import one_sentence, write_design

COMMANDS = [["init"], ["design", "check"], ["approve"], ["status"], ["power"], ["readout"],
            ["gate"], ["db", "upgrade"]]


def test_init_scaffolds_a_workspace_whose_example_design_checks(langchef, tmp_path):
    result = langchef("init", "my-evals")
    assert result.code == 0, result.stderr
    root = tmp_path / "my-evals"
    for folder in ("experiments", "approvals", "goldens", "runs", "qrels", "pools", "anchors",
                   "reports"):
        assert (root / folder).is_dir(), folder
    example = (root / "experiments" / "example.yaml").read_text(encoding="utf-8")
    assert example.startswith("#") and "langchef approve example" in example

    # Valid on its own, but not yet readable out: the suite it names does not exist.
    check = langchef("design", "check", "example", "--workspace", "my-evals")
    assert check.code == 2, check.stdout
    assert "goldens/example.jsonl: file not found (looked for goldens/example.jsonl, " \
        "goldens/example.csv and goldens/example.parquet)" in one_sentence(check.stderr)
    (root / "goldens" / "example.jsonl").write_text(
        '{"example_id": "g1", "input": "?"}\n', encoding="utf-8")
    check = langchef("design", "check", "example", "--workspace", "my-evals")
    assert check.code == 0, check.stderr
    assert "valid design" in check.stdout and "sha256" in check.stdout


def test_init_never_overwrites_and_reports_as_json(langchef, tmp_path):
    assert langchef("init", "--workspace", "w").code == 0
    example = tmp_path / "w" / "experiments" / "example.yaml"
    example.write_text(example.read_text(encoding="utf-8") + "# mine\n", encoding="utf-8")
    again = langchef("init", "w", "--json")
    assert again.code == 0
    assert again.json["created"] == [] and "experiments/example.yaml" in again.json["kept"]
    assert example.read_text(encoding="utf-8").endswith("# mine\n")


def test_init_onto_a_file_is_one_error_and_exit_2(langchef, tmp_path):
    (tmp_path / "taken").write_text("x", encoding="utf-8")
    result = langchef("init", "taken")
    assert result.code == 2 and "is not a folder" in one_sentence(result.stderr)


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_command_has_help_with_examples_workspace_and_json(langchef, command):
    result = langchef(*command, "--help")
    assert result.code == 0
    assert "examples:" in result.stdout and f"langchef {' '.join(command)}" in result.stdout
    assert "--workspace DIR" in result.stdout and "--json" in result.stdout


def test_no_command_is_a_usage_error(langchef):
    assert langchef().code == 2


def test_everyday_commands_do_not_load_dagster(python_cli, workspace):
    write_design(workspace)
    probe = ("import sys\n"
             "from langchef_pipeline.cli import main\n"
             "codes = [main(['design', 'check', 'rerank', '--workspace', 'evals']),\n"
             "         main(['approve', 'rerank', '--by', 'ada', '--workspace', 'evals']),\n"
             "         main(['status', '--workspace', 'evals']),\n"
             "         main(['power', '--goldens', '90', '--discordant-rate', '0.2'])]\n"
             "print('CODES', codes, 'DAGSTER', any(m.split('.')[0] == 'dagster' "
             "for m in sys.modules))\n")
    result = python_cli(probe)
    assert result.code == 0, result.stderr
    assert "CODES [0, 0, 0, 0] DAGSTER False" in result.stdout
