"""The real Dagster webserver (`dagster dev`: webserver + daemon, from workspace.yaml) lists
the assets and checks over GraphQL, launches one experiment's readout and runs it to success;
the command line then produces the same readout.json."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from langchef_core.demo import build_demo_workspace
from langchef_pipeline.materialize import ensure_instance_yaml

REPO = Path(__file__).resolve().parents[2]
EXPERIMENT = "eager-hedging"
pytestmark = [pytest.mark.webserver, pytest.mark.slow]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def graphql(url: str, query: str, variables: dict | None = None) -> dict:
    body = json.dumps({"query": query, "variables": variables or {}}).encode()
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=60) as response:
        payload = json.loads(response.read())
    assert "errors" not in payload, payload["errors"]
    return payload["data"]


@pytest.fixture
def webserver(tmp_path):
    workspace = tmp_path / "evals"
    build_demo_workspace(workspace)
    home = tmp_path / "dagster_home"
    ensure_instance_yaml(home)  # the instance `make dev` gives: its event log kept open
    port = free_port()
    environment = {**os.environ, "DAGSTER_HOME": str(home), "LANGCHEF_WORKSPACE": str(workspace)}
    log = open(tmp_path / "webserver.log", "w")
    # `dagster dev` runs the daemon too: launched runs are queued and the daemon starts them.
    process = subprocess.Popen(
        [str(Path(sys.executable).parent / "dagster"), "dev", "-w", "workspace.yaml",
         "-h", "127.0.0.1", "-p", str(port)],
        cwd=REPO, env=environment, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        while True:
            try:
                with urllib.request.urlopen(base + "/server_info", timeout=5):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("webserver did not start:\n" + (tmp_path / "webserver.log").read_text()[-3000:])
                time.sleep(1)
        yield base + "/graphql", workspace, environment
    finally:
        os.killpg(process.pid, signal.SIGTERM)  # dagster dev, its webserver, daemon and code server
        try:
            process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
        log.close()


def wait_for_location(url: str) -> tuple[str, str]:
    deadline = time.monotonic() + 240
    query = """{ repositoriesOrError { __typename ... on RepositoryConnection {
                 nodes { name location { name } } } } }"""
    while time.monotonic() < deadline:
        data = graphql(url, query)["repositoriesOrError"]
        if data["__typename"] == "RepositoryConnection" and data["nodes"]:
            node = data["nodes"][0]
            return node["location"]["name"], node["name"]
        time.sleep(2)
    raise AssertionError("the code location never loaded")


def test_webserver_lists_assets_and_runs_a_readout_like_the_cli(webserver, tmp_path):
    url, workspace, environment = webserver
    location, repository = wait_for_location(url)
    selector = {"repositoryLocationName": location, "repositoryName": repository}

    nodes = graphql(url, """query($selector: RepositorySelector!) { repositoryOrError(repositorySelector: $selector) {
        ... on Repository { assetNodes { assetKey { path } groupName description
                                         assetChecksOrError { ... on AssetChecks { checks { name blocking } } } } } } }""",
                    {"selector": selector})["repositoryOrError"]["assetNodes"]
    assets = {"/".join(node["assetKey"]["path"]): node for node in nodes}
    assert {"design", "arm_runs", "item_scores", "paired_comparison", "readout", "readout_report"} <= set(assets)
    checks = {check["name"]: check["blocking"] for node in nodes
              for check in node["assetChecksOrError"].get("checks", [])}
    assert checks["design_is_approved"] and checks["runs_are_complete"] and checks["judge_has_not_drifted"]

    added = graphql(url, """mutation($selector: RepositorySelector!, $key: String!) {
        addDynamicPartition(repositorySelector: $selector, partitionsDefName: "experiments", partitionKey: $key) {
          __typename } }""", {"selector": selector, "key": EXPERIMENT})
    # The design sensor (running under the daemon) may have registered it first.
    assert added["addDynamicPartition"]["__typename"] in ("AddDynamicPartitionSuccess",
                                                          "DuplicateDynamicPartitionError")

    launched = graphql(url, """mutation($params: ExecutionParams!) { launchRun(executionParams: $params) {
        __typename ... on LaunchRunSuccess { run { runId } } ... on PythonError { message }
        ... on InvalidSubsetError { message } ... on RunConfigValidationInvalid { errors { message } } } }""",
                       {"params": {"selector": {**selector, "jobName": "__ASSET_JOB",
                                                "assetSelection": [{"path": [key]} for key in assets]},
                                   "executionMetadata": {"tags": [{"key": "dagster/partition", "value": EXPERIMENT}]}}})
    assert launched["launchRun"]["__typename"] == "LaunchRunSuccess", launched
    run_id = launched["launchRun"]["run"]["runId"]

    deadline, status = time.monotonic() + 600, None
    while time.monotonic() < deadline:
        status = graphql(url, """query($id: ID!) { runOrError(runId: $id) { ... on Run { status } } }""",
                         {"id": run_id})["runOrError"]["status"]
        if status in ("SUCCESS", "FAILURE", "CANCELED"):
            break
        time.sleep(3)
    assert status == "SUCCESS", (tmp_path / "webserver.log").read_text()[-3000:]

    # The webserver reads every event the run worker wrote through its kept-open event log.
    events = graphql(url, """query($id: ID!) { logsForRun(runId: $id, limit: 5000) {
        ... on EventConnection { events { __typename } } } }""", {"id": run_id})["logsForRun"]["events"]
    kinds = [event["__typename"] for event in events]
    assert "RunSuccessEvent" in kinds and kinds.count("MaterializationEvent") == len(assets), kinds

    ui_readout = workspace / "reports" / EXPERIMENT / "v1" / "readout.json"
    assert json.loads(ui_readout.read_text())["primary"]["verdict"] == "regression"

    # The command line, on a fresh build of the same demo workspace (its own ledger holding
    # the same approvals: a copied approval file without its ledger row is refused), writes
    # the same bytes.
    copy = tmp_path / "copy"
    build_demo_workspace(copy)
    cli = subprocess.run([str(Path(sys.executable).parent / "langchef"), "readout", EXPERIMENT,
                          "--workspace", str(copy)], capture_output=True, text=True,
                         env={k: v for k, v in environment.items() if k != "DAGSTER_HOME"})
    assert cli.returncode == 0, cli.stderr
    assert (copy / "reports" / EXPERIMENT / "v1" / "readout.json").read_bytes() == ui_readout.read_bytes()
