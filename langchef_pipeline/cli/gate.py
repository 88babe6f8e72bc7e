"""`langchef gate PATH`: exit 0 when a readout's gate passed, 1 when it did not, 2 when the
readout cannot be trusted (unreadable, malformed, not the one published, or contradicting its
own numbers)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import NamedTuple

from .options import add_command
from .output import CommandError, emit

MAX_READOUT_BYTES = 64 << 20


class Decided(NamedTuple):
    """One readout's gate: its label, decision, verdict line, the proofs it passed, and the
    open question a passed gate carried (None when none)."""

    label: str
    decision: object
    line: str | None
    verification: object
    note: str | None


DESCRIPTION = """
    Read a readout.json (or several) and exit 0 when its gate passed, 1 when it did not (a
    regression, a failed non-inferiority or a breached guardrail), printing why; 2 when the
    file is unreadable, malformed, not the readout langchef published, or its recorded gate
    contradicts its own numbers. Each readout is checked against its manifest, against the
    ledger of its workspace (the folder holding reports/NAME/vN/, or --workspace) and, with
    --verify-key, against the operator's signature. With --junit FILE also write the
    decisions as a JUnit XML test report. There is no override."""
EXAMPLES = ("langchef gate evals/reports/example/v1/readout.json",
            "langchef gate evals/reports/*/latest --junit gate.xml",
            "langchef gate evals/reports/example/v1 --fail-on-inconclusive",
            "langchef gate reports/example/v2/readout.json --workspace evals --json",
            "LANGCHEF_SIGNING_KEY=... langchef gate artifact/v3/readout.json --verify-key")


def register(commands, common) -> None:
    gate = add_command(commands, "gate", common, help="pass or fail CI on a readout.json",
                       description=DESCRIPTION, examples=EXAMPLES)
    gate.add_argument("paths", nargs="+", metavar="PATH",
                      help="a readout.json, or the report folder holding it (several: the gate "
                           "passes when every one passes); relative paths are tried in the "
                           "current folder, then in the workspace (--workspace, else "
                           "$LANGCHEF_WORKSPACE, else ./evals)")
    gate.add_argument("--fail-on-inconclusive", action="store_true",
                      help="also fail when the question was left open (inconclusive verdict, "
                           "or non-inferiority unresolved)")
    gate.add_argument("--strict", action="store_true",
                      help="also fail when a proof is missing: traffic time unverifiable (no "
                           "created_at), a sampled pool not written down, a repeated look (the "
                           "design's 'gate: {strict: true}' does the same), or a readout "
                           "checked against neither a ledger nor a signature")
    gate.add_argument("--verify-key", action="store_true",
                      help="also require the manifest's signature by the key in "
                           "LANGCHEF_SIGNING_KEY (for a readout away from its workspace)")
    gate.add_argument("--junit", metavar="FILE",
                      help="also write a JUnit XML report: one test case per readout, a failed "
                           "gate a failure with its reasons, a refused readout an error")
    gate.set_defaults(handler=run_gate)


def run_gate(arguments) -> int:
    """Every readout is read and decided before anything is written: an unreadable one stops
    the command (exit 2) with no JUnit file."""
    decided = [_decide(arguments, _readout_path(arguments, given)) for given in arguments.paths]
    if arguments.junit:
        _write_junit(Path(arguments.junit), decided)
    passed = all(item.decision.passed for item in decided)
    records = [{**item.decision.to_dict(), "file": item.label,
                "verification": item.verification.to_dict()} for item in decided]
    text = "\n".join(_decision_text(item) for item in decided)
    emit(arguments, records[0] if len(records) == 1 else {"passed": passed, "readouts": records},
         text)
    return 0 if passed else 1


def _decide(arguments, path: Path):
    """(label, the gate's decision, the readout's verdict line, the proofs it passed) for one
    readout.json."""
    from langchef_core.inputs.errors import InputError
    from langchef_core.readout.gate import readout_gate

    label = str(path)
    hint = "pass the readout.json written by `langchef readout`"
    if path.stat().st_size > MAX_READOUT_BYTES:
        raise InputError(f"is larger than {MAX_READOUT_BYTES >> 20} MiB; not a langchef readout",
                         file=label, hint=hint)
    body = path.read_bytes()
    try:
        readout = json.loads(body.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(f"is not valid JSON ({error})", file=label, hint=hint) from None
    except (RecursionError, MemoryError):
        raise InputError("is nested too deeply (or is too large) to be a langchef readout",
                         file=label, hint=hint) from None
    verification = _verified(arguments, path, body, readout, label)
    decision = readout_gate(readout, fail_on_inconclusive=arguments.fail_on_inconclusive,
                            strict=arguments.strict, file=label)
    if arguments.strict and not verification.proven:
        decision = decision.failing("not verified against a ledger or a signature (--strict)")
    from langchef_core.readout.verdict import inconclusive_note
    return Decided(label, decision, _verdict_line(readout), verification,
                   inconclusive_note(readout) if decision.passed else None)


def _verdict_line(readout) -> str | None:
    summary = readout.get("summary") if isinstance(readout, dict) else None
    line = summary.get("line") if isinstance(summary, dict) else None
    return line if isinstance(line, str) else None


def _decision_text(item: "Decided") -> str:
    decision = item.decision
    name = decision.experiment or "readout"
    version = f" v{decision.version}" if decision.version is not None else ""
    if decision.passed:
        text = f"PASSED: {name}{version} ({decision.verdict}" + (
            f", non-inferiority {decision.noninferiority})" if decision.noninferiority else ")")
        if item.note:  # the default gate passes an open question: say so (issue 29)
            text += f" — {item.note}; `--fail-on-inconclusive` would fail it"
        if not decision.strict and decision.missing_proofs:
            text += ("\n  note: proofs missing (" + ", ".join(decision.missing_proofs)
                     + "); `--strict` would fail this readout")
    else:
        text = f"NOT PASSED: {name}{version}\n" + "\n".join(f"  - {r}" for r in decision.reasons)
    return text + f"\n  evidence: {item.verification.sentence}"


def _write_junit(target: Path, decided) -> None:
    """The JUnit report, written whole: a temporary file beside it, then renamed."""
    import tempfile

    from langchef_core.review.junit import GateCase, junit_xml

    body = junit_xml([GateCase(file=label, decision=decision, line=line)
                      for label, decision, line, _, _ in decided])
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise CommandError(f"--junit {target}: the folder {folder} does not exist; create it "
                           "or choose another path.")
    descriptor, staged = tempfile.mkstemp(prefix=f".{target.name}.", dir=folder)
    try:
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(body)
        os.chmod(staged, 0o644)
        os.replace(staged, target)
    except BaseException:
        Path(staged).unlink(missing_ok=True)
        raise


def _verified(arguments, path: Path, body: bytes, readout, label: str):
    """The proofs this readout passes (an ``InputError``, exit 2, for the first it fails)."""
    from langchef_core.readout.signing import signing_key
    from langchef_core.readout.verification import (Verification, check_in_ledger,
                                                    check_signature, read_manifest)

    manifest = read_manifest(path, body)
    manifest_label = str(path.with_name("manifest.json"))
    key = signing_key()
    signature = None
    if arguments.verify_key or (key is not None and "signature" in manifest):
        signature = check_signature(manifest, key, file=manifest_label)
    ledger_place = None
    workspace = _workspace_of(arguments, path)
    if workspace is not None and isinstance(readout, dict):
        from langchef_core.designs.ledger import Ledger
        with Ledger.for_workspace(workspace) as ledger:
            ledger_place = check_in_ledger(ledger, readout, manifest, body, path,
                                           reports=workspace.reports, file=label)
    return Verification(manifest_label, ledger_place, signature)


def _workspace_of(arguments, path: Path):
    """The workspace whose ledger vouches for the readout: --workspace (or
    $LANGCHEF_WORKSPACE), else the folder holding reports/NAME/vN/; None when neither is one."""
    from langchef_core.inputs.workspace import Workspace
    from langchef_core.store.location import ledger_database

    named = getattr(arguments, "workspace", None) or os.environ.get("LANGCHEF_WORKSPACE")
    if not named:
        folders = path.resolve().parents
        if len(folders) < 4 or folders[2] != folders[3] / "reports":
            return None
        workspace = Workspace(folders[3])
        return workspace if ledger_database(workspace).exists() else None
    workspace = Workspace.at(named)
    if not ledger_database(workspace).exists():
        raise CommandError(f"{workspace.root} has no ledger ({workspace.ledger.name}), so "
                           f"{path} cannot be checked against it; gate it where it was "
                           "published, or carry it away signed and pass --verify-key.")
    return workspace


def _readout_path(arguments, given_path: str) -> Path:
    from langchef_core.inputs.workspace import resolve_workspace  # a light module

    given = Path(given_path).expanduser()
    candidates = [given]
    if not given.is_absolute():  # reports/NAME/latest, as `langchef readout` names it
        candidates.append(resolve_workspace(getattr(arguments, "workspace", None)) / given)
    for candidate in candidates:
        if candidate.is_dir():
            candidate = candidate / "readout.json"
        if candidate.is_file():
            return candidate
    raise CommandError(f"{given_path}: no readout.json found there; pass the readout.json "
                       "written by `langchef readout` (reports/NAME/vN/readout.json).")
