"""Shared pieces of the reliability suite: a small workspace that reads out, the real
console script (from tests/cli), a chat-completions server on 127.0.0.1 that records what it
receives, and a subprocess runner for crash tests."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.cli.conftest import langchef, one_sentence, python_cli  # noqa: F401 - fixtures
from tests.pipeline.factory import DESIGN, JUDGE, recorded_workspace, write_jsonl  # noqa: F401

ROOT = Path(__file__).resolve().parents[2]


def environment(extra: dict | None = None) -> dict:
    env = {key: value for key, value in os.environ.items()
           if key not in ("LANGCHEF_WORKSPACE", "LANGCHEF_JUDGE_ENDPOINTS",
                          "LANGCHEF_JUDGE_API_KEY", "LANGCHEF_FAULT_AT")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.update(extra or {})
    return env


def run_python(code: str, *, env: dict | None = None, cwd=None, timeout: float = 300):
    """Run a Python snippet in a fresh interpreter; returns the CompletedProcess."""
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, env=environment(env),
                          capture_output=True, text=True, timeout=timeout)


def rewrite_runs(workspace_root: Path, *, broke: int, name: str = "short-prompt", n: int = 40):
    """Replace the variant's run file: the first ``broke`` goldens fail on Directness."""
    ids = [f"g{i:03d}" for i in range(n)]
    failing = set(ids[:broke])
    write_jsonl(workspace_root / "runs" / name / "short.jsonl", [
        {"example_id": i, "output": f"short answer {i}", "created_at": "2026-02-01T10:00:00Z",
         "verdict": "fail" if i in failing else "pass",
         "criterion": "Directness" if i in failing else None, "judge": JUDGE} for i in ids])


class RecordingChatServer:
    """A chat-completions endpoint that passes every answer and records every request."""

    def __init__(self):
        self.requests: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 - the http.server naming
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                server.requests.append({"path": self.path, "body": body.decode("utf-8", "replace"),
                                        "authorization": self.headers.get("Authorization")})
                content = json.dumps({"verdict": "pass", "criterion": None, "rationale": "ok"})
                payload = json.dumps({"choices": [{"index": 0, "message": {
                    "role": "assistant", "content": content}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            do_GET = do_POST  # noqa: N815

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,), daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"


@pytest.fixture
def chat_server():
    server = RecordingChatServer()
    server.thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()
