"""`langchef gate PATH`: exit 0 when a readout's gate passed, 1 when it did not, 2 when the
readout cannot be trusted (unreadable, malformed, or contradicting its own numbers)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from .options import add_command
from .output import CommandError, emit

MAX_READOUT_BYTES = 64 << 20


DESCRIPTION = """
    Read a readout.json and exit 0 when its gate passed, 1 when it did not (a regression, a
    failed non-inferiority or a breached guardrail), printing why; 2 when the file is
    unreadable, malformed, or its recorded gate contradicts its own numbers. There is no
    override."""
EXAMPLES = ("langchef gate evals/reports/example/v1/readout.json",
            "langchef gate evals/reports/example/v1 --fail-on-inconclusive",
            "langchef gate reports/example/v2/readout.json --workspace evals --json")


def register(commands, common) -> None:
    gate = add_command(commands, "gate", common, help="pass or fail CI on a readout.json",
                       description=DESCRIPTION, examples=EXAMPLES)
    gate.add_argument("path", metavar="PATH",
                      help="a readout.json, or the report folder holding it; relative paths "
                           "are tried in the current folder, then in the workspace")
    gate.add_argument("--fail-on-inconclusive", action="store_true",
                      help="also fail when the question was left open (inconclusive verdict, "
                           "or non-inferiority unresolved)")
    gate.add_argument("--strict", action="store_true",
                      help="also fail when a proof is missing: traffic time unverifiable (no "
                           "created_at), a sampled pool not written down, or a repeated look "
                           "(the design's 'gate: {strict: true}' does the same)")
    gate.set_defaults(handler=run_gate)


def run_gate(arguments) -> int:
    path = _readout_path(arguments)
    from langchef_core.inputs.errors import InputError
    from langchef_core.readout.gate import check_manifest, readout_gate

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
    check_manifest(path, body)
    decision = readout_gate(readout, fail_on_inconclusive=arguments.fail_on_inconclusive,
                            strict=arguments.strict, file=label)
    name = decision.experiment or "readout"
    version = f" v{decision.version}" if decision.version is not None else ""
    if decision.passed:
        text = f"PASSED: {name}{version} ({decision.verdict}" + (
            f", non-inferiority {decision.noninferiority})" if decision.noninferiority else ")")
        from langchef_core.readout.verdict import inconclusive_note
        note = inconclusive_note(readout)
        if note:  # the default gate passes an open question: say so (issue 29)
            text += f" — {note}; `--fail-on-inconclusive` would fail it"
        if not decision.strict and decision.missing_proofs:
            text += ("\n  note: proofs missing (" + ", ".join(decision.missing_proofs)
                     + "); `--strict` would fail this readout")
    else:
        text = f"NOT PASSED: {name}{version}\n" + "\n".join(f"  - {r}" for r in decision.reasons)
    emit(arguments, {**decision.to_dict(), "file": label}, text)
    return 0 if decision.passed else 1


def _readout_path(arguments) -> Path:
    given = Path(arguments.path).expanduser()
    candidates = [given]
    # Resolved here rather than through Workspace, so that a missing file is reported
    # before the statistics are loaded.
    workspace = getattr(arguments, "workspace", None) or os.environ.get("LANGCHEF_WORKSPACE")
    if not given.is_absolute() and workspace:
        candidates.append(Path(workspace).expanduser() / given)
    for candidate in candidates:
        if candidate.is_dir():
            candidate = candidate / "readout.json"
        if candidate.is_file():
            return candidate
    raise CommandError(f"{arguments.path}: no readout.json found there; pass the readout.json "
                       "written by `langchef readout` (reports/NAME/vN/readout.json).")
