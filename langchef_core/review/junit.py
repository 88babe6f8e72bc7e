"""The gate as a JUnit XML test report, the format CI systems show as test results (GitLab's
merge-request widget, Jenkins, GitHub test-report actions).

One test case per readout: a gate that passed is a passing case, a gate that did not pass is
a ``<failure>`` carrying every reason, and a readout a blocking check refused is an
``<error>``: there was no verdict to test. The document is a pure function of the decisions
(no timestamps, no host name, ``time="0"``), so the same readouts give the same bytes.
``tests/review/junit.xsd`` is the schema the report is checked against.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from ..readout.gate import ReadoutGate

SUITE = "langchef gate"
CLASSNAME = "langchef.gate"
# XML 1.0 cannot carry these characters at all, even escaped: each is written as \uXXXX.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


@dataclass(frozen=True)
class GateCase:
    """One readout's gate decision and the file it was read from."""

    file: str
    decision: ReadoutGate
    line: str | None = None   # the readout's one-line verdict, shown as the case's output


def xml_text(value) -> str:
    return _NOT_XML.sub(lambda match: f"\\u{ord(match.group()):04x}", str(value))


def case_name(case: GateCase) -> str:
    decision = case.decision
    name = decision.experiment or case.file
    return name + (f" v{decision.version}" if decision.version is not None else "")


def junit_xml(cases: list[GateCase]) -> bytes:
    failures = sum(not case.decision.passed and case.decision.verdict != "refused"
                   for case in cases)
    errors = sum(case.decision.verdict == "refused" for case in cases)
    counts = {"tests": str(len(cases)), "failures": str(failures), "errors": str(errors),
              "skipped": "0", "time": "0"}
    root = ET.Element("testsuites", {"name": SUITE, **counts})
    suite = ET.SubElement(root, "testsuite", {"name": SUITE, **counts})
    for case in cases:
        suite.append(test_case(case))
    ET.indent(root)
    return b'<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="utf-8") \
        + b"\n"


def test_case(case: GateCase) -> ET.Element:
    decision = case.decision
    element = ET.Element("testcase", {"name": xml_text(case_name(case)),
                                      "classname": CLASSNAME, "file": xml_text(case.file),
                                      "time": "0"})
    reasons = [xml_text(reason) for reason in decision.reasons]
    if decision.verdict == "refused":
        outcome = ET.SubElement(element, "error", {"type": "refused",
                                                   "message": reasons[0] if reasons else ""})
        outcome.text = "\n".join(reasons)
    elif not decision.passed:
        outcome = ET.SubElement(element, "failure", {
            "type": "gate", "message": f"gate not passed: {len(reasons)} reason"
                                       + ("" if len(reasons) == 1 else "s")})
        outcome.text = "\n".join(reasons)
    notes = [case.line] if case.line else []
    if decision.passed and decision.missing_proofs:
        notes.append("proofs missing (" + ", ".join(decision.missing_proofs)
                     + "); `--strict` would fail this readout")
    if notes:
        ET.SubElement(element, "system-out").text = xml_text("\n".join(notes))
    return element
