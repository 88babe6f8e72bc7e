"""Issue 13, defect 1: a design cannot send a secret anywhere.

A chat-completions server on 127.0.0.1 stands in for "anywhere". A design that names it
without the operator allowing it, or that names a key variable, must make `langchef` send
it nothing at all; once the operator allows it, the key that arrives is the operator's."""

from __future__ import annotations

import json

import pytest

from .conftest import one_sentence, write_jsonl

LLM_DESIGN = """\
experiment: llm-judged
hypothesis: The new prompt passes as often.
suite: faq
arms: {{baseline: current, variant: short}}
kind: superiority
primary: pass_rate
judge:
  kind: openai_compatible
  base_url: {base_url}
  model: judge-small
  prompt_version: v1
  max_retries: 0
  timeout_s: 5
{extra}criteria: [Correctness, Groundedness, Directness]
bootstrap: {{resamples: 1000, seed: 0}}
"""


def llm_workspace(root, base_url, extra=""):
    (root / "experiments").mkdir(parents=True, exist_ok=True)
    (root / "experiments" / "llm-judged.yaml").write_text(
        LLM_DESIGN.format(base_url=base_url, extra=extra), encoding="utf-8")
    ids = [f"g{i:02d}" for i in range(12)]
    write_jsonl(root / "goldens" / "faq.jsonl",
                [{"example_id": i, "input": f"question {i}", "ideal": f"answer {i}"} for i in ids])
    for arm in ("current", "short"):
        # No created_at: traffic time is then reported as unverifiable, which is allowed.
        write_jsonl(root / "runs" / "llm-judged" / f"{arm}.jsonl",
                    [{"example_id": i, "output": f"{arm} says {i}"} for i in ids])
    return root


SECRET = {"AWS_SECRET_ACCESS_KEY": "aws-very-secret", "LANGCHEF_JUDGE_API_KEY": "sk-operator"}


@pytest.mark.slow
def test_an_endpoint_the_operator_did_not_allow_receives_nothing(langchef, tmp_path, chat_server):
    root = llm_workspace(tmp_path / "evals", chat_server.base_url)
    checked = langchef("design", "check", "llm-judged", "--workspace", root, env=SECRET)
    assert checked.code == 0, checked.stderr
    assert f"the judge would call {chat_server.base_url}/chat/completions, which is NOT " \
           "allowed here" in checked.stdout
    approved = langchef("approve", "llm-judged", "--by", "ada", "--workspace", root, env=SECRET)
    assert approved.code == 0 and "NOT allowed" in approved.stdout, approved.stderr
    refused = langchef("readout", "llm-judged", "--workspace", root, env=SECRET)
    assert refused.code == 2
    sentence = one_sentence(refused.stderr)
    assert "is not on the operator's allow-list, so nothing was sent to it" in sentence
    assert "LANGCHEF_JUDGE_ENDPOINTS" in sentence
    assert chat_server.requests == []
    # Issue 15: the refusal is published as evidence, never with a verdict.
    refused = json.loads((root / "reports" / "llm-judged" / "v1" / "readout.json").read_text())
    assert "primary" not in refused and refused["gate"]["passed"] is False

    # The positive control: the operator allows it on the command line; the key that
    # arrives is LANGCHEF_JUDGE_API_KEY, never anything the design could name.
    allowed = langchef("readout", "llm-judged", "--workspace", root,
                       "--judge-endpoint", chat_server.base_url, env=SECRET)
    assert allowed.code == 0, allowed.stderr
    assert chat_server.requests, "the allowed endpoint should have been asked"
    assert {request["authorization"] for request in chat_server.requests} == {"Bearer sk-operator"}
    assert not any("aws-very-secret" in json.dumps(request) for request in chat_server.requests)


@pytest.mark.slow
def test_a_design_naming_a_key_variable_is_refused_before_any_request(langchef, tmp_path,
                                                                     chat_server):
    root = llm_workspace(tmp_path / "evals", chat_server.base_url,
                         extra="  api_key_env: AWS_SECRET_ACCESS_KEY\n")
    env = {**SECRET, "LANGCHEF_JUDGE_ENDPOINTS": chat_server.base_url}
    for command in (("design", "check", "llm-judged"), ("approve", "llm-judged", "--by", "ada"),
                    ("readout", "llm-judged")):
        result = langchef(*command, "--workspace", root, env=env)
        assert result.code == 2, (command, result.stdout)
        sentence = one_sentence(result.stderr)
        assert "experiments/llm-judged.yaml, field 'judge.api_key_env', line 14" in sentence
        assert "export the judge's key as LANGCHEF_JUDGE_API_KEY" in sentence
    assert chat_server.requests == []


def test_plain_http_to_another_host_is_refused_in_the_design(langchef, tmp_path):
    root = llm_workspace(tmp_path / "evals", "http://judge.example.org/v1")
    result = langchef("design", "check", "llm-judged", "--workspace", root)
    assert result.code == 2
    assert "field 'judge.base_url'" in result.stderr and "must use https" in result.stderr


def test_design_check_names_an_allowed_endpoint(langchef, tmp_path):
    root = llm_workspace(tmp_path / "evals", "https://judge.example.org/v1")
    result = langchef("design", "check", "llm-judged", "--workspace", root, "--json",
                      env={"LANGCHEF_JUDGE_ENDPOINTS": "https://judge.example.org/"})
    assert result.code == 0, result.stderr
    assert result.json["judge_endpoint"] == {
        "endpoint": "https://judge.example.org/v1/chat/completions", "allowed": True,
        "allow_list_variable": "LANGCHEF_JUDGE_ENDPOINTS",
        "key_variable": "LANGCHEF_JUDGE_API_KEY",
        "sentence": "the judge would call https://judge.example.org/v1/chat/completions "
                    "(allowed by LANGCHEF_JUDGE_ENDPOINTS)"}
