"""`langchef gate --junit FILE`: the gate's decisions as JUnit XML, valid against the schema CI
systems read (tests/review/junit.xsd, written from the documented format)."""

import json
from pathlib import Path

import pytest
from lxml import etree

from langchef_core.readout.gate import readout_gate
from langchef_core.review.junit import GateCase, junit_xml
from tests.cli.test_cli_gate import readout, write

SCHEMA = etree.XMLSchema(etree.parse(str(Path(__file__).parent / "junit.xsd")))


def valid(body: bytes) -> etree._Element:
    document = etree.fromstring(body)
    SCHEMA.assertValid(document)
    return document


@pytest.mark.slow
def test_the_demo_readouts_as_one_junit_report(langchef, demo_workspace, tmp_path):
    latest = sorted((demo_workspace / "reports").glob("*/latest"))
    assert len(latest) == 8
    report = tmp_path / "gate.xml"
    result = langchef("gate", *latest, "--junit", report)
    assert result.code == 1, result.stderr
    body = report.read_bytes()
    document = valid(body)
    suite = document.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("8", "5", "1")
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    assert sorted(cases) == sorted(f"{path.parent.name} v1" for path in latest)
    assert cases["cheaper-model v1"].find("failure") is None
    assert cases["lenient-judge v1"].find("error").get("type") == "refused"
    friendly = cases["friendly-tone v1"].find("failure")
    assert "protected slice 'new'" in friendly.text and "p95 latency_ms" in friendly.text
    assert "IMPROVEMENT" in cases["friendly-tone v1"].find("system-out").text
    # The same readouts give the same bytes.
    assert langchef("gate", *latest, "--junit", report).code == 1
    assert report.read_bytes() == body


def test_text_xml_cannot_carry_is_written_visibly_and_the_report_stays_valid():
    document = readout("regression", passed=False,
                       reasons=["bell \x07 and ]]> and <b> & \ufffe"])
    decision = readout_gate(document)
    body = junit_xml([GateCase(file="x/\x1b[31mreadout.json", decision=decision,
                               line="line\x00")])
    failure = valid(body).find("testsuite/testcase/failure")
    assert failure.text == "bell \\u0007 and ]]> and <b> & \\ufffe"


def test_a_passing_readout_is_a_passing_case():
    body = junit_xml([GateCase(file="r.json", decision=readout_gate(readout()))])
    case = valid(body).find("testsuite/testcase")
    assert case.get("name") == "rerank v3" and len(case) == 0


def test_the_schema_rejects_what_ci_systems_would_not_read():
    broken = b'<testsuites tests="1" failures="0" errors="0"><testsuite name="x" tests="1" ' \
             b'failures="0" errors="0"><testcase name="a" time="0"/></testsuite></testsuites>'
    assert not SCHEMA.validate(etree.fromstring(broken))  # no classname


def test_an_unreadable_readout_writes_no_report(langchef, tmp_path):
    good = write(tmp_path / "good", readout())  # with its manifest
    bad = tmp_path / "bad.json"
    bad.write_text("{not json", encoding="utf-8")
    report = tmp_path / "gate.xml"
    result = langchef("gate", good, bad, "--junit", report)
    assert result.code == 2 and "is not valid JSON" in result.stderr
    assert not report.exists() and list(tmp_path.glob(".gate.xml.*")) == []
    passed = langchef("gate", good, good.parent, "--junit", report, "--json")
    assert passed.code == 0 and passed.json["passed"] is True
    assert valid(report.read_bytes()).find("testsuite").get("tests") == "2"
