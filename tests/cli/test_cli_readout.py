"""`langchef readout NAME`: wiring to langchef_pipeline.materialize, errors as exit 2.

The materialisation itself is tested with its module; here a stand-in module is put in
its place inside a fresh interpreter, so these tests pin the command line's behaviour
whether or not the real module exists yet.
"""

import textwrap

from .conftest import one_sentence, write_design

PRELUDE = textwrap.dedent("""\
    import sys, types
    from pathlib import Path
    from langchef_core.inputs.errors import InputError
    from langchef_core.designs.gate_checks import GateRefusal, Refusal
    fake = types.ModuleType("langchef_pipeline.materialize")
    sys.modules["langchef_pipeline.materialize"] = fake
    """)
CALL = ("from langchef_pipeline.cli import main\n"
        "code = main(['readout', 'rerank', '--workspace', 'evals'])\n"
        "print('EXIT', code, 'DAGSTER', any(m.split('.')[0] == 'dagster' for m in sys.modules))\n")


def test_a_missing_materialize_module_is_a_clear_error(python_cli, workspace):
    write_design(workspace)
    result = python_cli("import sys\nsys.modules['langchef_pipeline.materialize'] = None\n" + CALL)
    assert "EXIT 2" in result.stdout, result.stderr
    assert "`langchef readout` is not available" in one_sentence(result.stderr)


def test_the_readout_path_and_its_gate_are_printed(python_cli, workspace):
    write_design(workspace)
    stand_in = PRELUDE + textwrap.dedent("""\
        import json
        def readout_experiment(workspace, experiment):
            path = workspace.reports / experiment / "v1" / "readout.json"
            path.parent.mkdir(parents=True)
            path.write_text(json.dumps({"version": 1, "gate": {"passed": False}}))
            return path
        fake.readout_experiment = readout_experiment
        """)
    result = python_cli(stand_in + CALL)
    assert "EXIT 0 DAGSTER False" in result.stdout, result.stderr
    assert "readout written to" in result.stdout and "gate did not pass" in result.stdout
    assert (workspace / "reports" / "rerank" / "v1" / "readout.json").is_file()


def test_refusals_and_input_errors_are_one_sentence_exit_2(python_cli, workspace):
    write_design(workspace)
    refusing = PRELUDE + textwrap.dedent("""\
        def readout_experiment(workspace, experiment):
            raise GateRefusal([Refusal("design_edited", "rerank was edited after approval")])
        fake.readout_experiment = readout_experiment
        """)
    result = python_cli(refusing + CALL)
    assert "EXIT 2" in result.stdout
    assert one_sentence(result.stderr) == ("langchef: error: readout refused: rerank was edited "
                                           "after approval")
    bad_input = PRELUDE + textwrap.dedent("""\
        def readout_experiment(workspace, experiment):
            raise InputError("duplicated id 'q7'", file="goldens/qa.jsonl",
                             column="example_id", row=12)
        fake.readout_experiment = readout_experiment
        """)
    result = python_cli(bad_input + CALL)
    assert "EXIT 2" in result.stdout
    assert "goldens/qa.jsonl, column 'example_id', row 12: duplicated id 'q7'" in result.stderr


def test_a_pipeline_refusal_lists_every_blocking_reason_on_one_line(python_cli, workspace):
    write_design(workspace)
    failing = PRELUDE + textwrap.dedent("""\
        class ReadoutFailed(RuntimeError):
            def __init__(self, reasons):
                self.reasons = reasons
                super().__init__(reasons[0])
        def readout_experiment(workspace, experiment):
            raise ReadoutFailed(["rerank has no approval.", "3 of 90 goldens missing."])
        fake.ReadoutFailed = ReadoutFailed
        fake.readout_experiment = readout_experiment
        """)
    result = python_cli(failing + CALL)
    assert "EXIT 2" in result.stdout, result.stderr
    assert one_sentence(result.stderr) == ("langchef: error: readout refused: rerank has no "
                                           "approval; 3 of 90 goldens missing.")
