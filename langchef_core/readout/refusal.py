"""A readout that a blocking check refused, kept as evidence like any readout.

When a blocking check stops an experiment (the judge drifted, the runs are incomplete,
the design is not approved …) no number is read out — but a reviewer browsing the reports
must still see that the experiment was tried and why it stopped. ``refusal_document``
writes what is known without reading any result: which check refused and its sentence,
the design as approved, and the fingerprints of the input files as they are on disk. It is
published by ``publish_readout`` into the next version folder like any readout, and it
never carries a verdict: it has no ``primary`` section, its gate did not pass, and its
``summary`` answers REFUSED.

A refusal is not a look at the data (nothing was computed), so the ledger does not count
it among the readouts that ``looks`` warns about.
"""

from __future__ import annotations

import hashlib
import json

from .._version import __version__
from ..inputs.errors import InputError
from ..inputs.loading import file_sha256
from ..inputs.workspace import Workspace
from .assemble import FORMAT


def split_reason(reason: str) -> tuple[str, str]:
    """"judge_has_not_drifted: Do not act …" → ("judge_has_not_drifted", "Do not act …")."""
    check, separator, sentence = str(reason).partition(": ")
    if not separator or " " in check:
        return "readout", str(reason)
    return check, sentence


def refusal_document(workspace: Workspace, experiment: str, reasons: list[str]) -> dict:
    """The refused readout of ``experiment``: the first reason names the check that refused."""
    from ..designs.approval import format_utc
    from .experiment import load_design_state
    from .verdict import summary_record
    reasons = [str(reason) for reason in reasons] or ["readout: the readout run failed"]
    check, sentence = split_reason(reasons[0])
    design_section, hypothesis, design = {"sha256": None, "kind": None}, None, None
    try:
        state = load_design_state(workspace, experiment)
        design, approval = state.design, state.approval
        hypothesis = design.hypothesis
        design_section = {
            "sha256": design.sha256,
            "approved_by": approval.approved_by if approval else None,
            "approved_at": format_utc(approval.approved_at) if approval else None,
            "kind": design.kind, "primary": design.primary, "suite": design.suite,
            "arms": design.arms.to_dict(), "alpha": design.alpha, "power": design.power,
            "margin": design.margin, "bootstrap": design.bootstrap.to_dict(),
            "criteria": list(design.criteria), "as_approved": design.to_dict()}
    except (InputError, ValueError, OSError) as error:
        design_section["unreadable"] = str(error)
    inputs_sha256, files = input_fingerprints(workspace, experiment, design)
    document = {
        "format": FORMAT,
        "tool_version": __version__,
        "experiment": experiment,
        "version": None,
        "hypothesis": hypothesis,
        "design": design_section,
        "inputs": {"sha256": inputs_sha256, "files": files},
        "refused": {"check": check, "sentence": sentence, "reasons": reasons},
        "warnings": [],
        "gate": {"passed": False, "reasons": reasons},
    }
    document["summary"] = summary_record(document)
    return document


def input_fingerprints(workspace: Workspace, experiment: str, design) -> tuple[str, dict]:
    """SHA-256 and size of every input file of the experiment that exists (the design, its
    goldens, runs, labels, pools and anchors), by workspace-relative name, and one hash over
    them — the same kind of fingerprint a readout records, taken without parsing a table."""
    where = [lambda: workspace.design_path(experiment)]
    if design is not None:
        where.append(lambda: workspace.goldens_path(design.suite))
        where += [lambda run=run: workspace.run_path(experiment, run)
                  for run in workspace.run_arms(experiment)]
        if design.retrieval is not None:
            where += [lambda: workspace.qrels_path(design.suite),
                      lambda: workspace.pools_path(design.suite)]
        if design.anchors is not None:
            where.append(lambda: workspace.anchors_path(design.anchors.set))
    paths = []
    for locate in where:
        try:
            paths.append(locate())
        except InputError:
            continue  # e.g. one table in two formats: the check that refused says so
    files = {}
    for path in paths:
        if path.is_file():
            files[workspace.relative(path)] = {"sha256": file_sha256(path),
                                               "bytes": path.stat().st_size}
    files = dict(sorted(files.items()))
    text = json.dumps({label: entry["sha256"] for label, entry in files.items()}, sort_keys=True,
                      separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest(), files


def is_refusal(readout) -> bool:
    return isinstance(readout, dict) and isinstance(readout.get("refused"), dict)
