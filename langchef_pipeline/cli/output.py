"""What every command shares on the way out: its result (text, or JSON with --json) on stdout,
and a user's error as one sentence (or one JSON object) on stderr with exit status 2."""

from __future__ import annotations

import json
import re
import sys

EXIT_ERROR = 2


class CommandError(Exception):
    """A problem with how a command was called; printed as one sentence, exit 2. ``file``,
    ``column``, ``row`` and ``hint`` say where, when there is a place to name (--json)."""

    def __init__(self, sentence: str, *, file=None, column=None, row=None, hint=None):
        super().__init__(sentence)
        self.file, self.column, self.row, self.hint = file, column, row, hint


# Characters a terminal would act on rather than show: C0 controls except newline and tab,
# DEL, C1 controls (U+009B is CSI on some terminals) and the explicit bidi controls.
_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e"
                     "\u2066-\u2069]")


def terminal_safe(text: str) -> str:
    """Text for a terminal: every control or bidi character shown as \\uXXXX, never obeyed
    (a value from a workspace file cannot move the cursor, recolour or reorder the output)."""
    return _UNSAFE.sub(lambda match: f"\\u{ord(match.group()):04x}", text)


def wants_json(arguments) -> bool:
    return bool(getattr(arguments, "json", False))


def emit(arguments, payload, text: str) -> None:
    """A command's result: ``payload`` as JSON under --json, else ``text``."""
    if wants_json(arguments):
        # json.dumps escapes C0 controls itself; the rest become \uXXXX escapes, the same
        # JSON value.
        print(terminal_safe(json.dumps(payload, indent=2, sort_keys=True, ensure_ascii=False,
                                       default=str)))
    else:
        print(terminal_safe(text))


def report_error(arguments, error: Exception) -> bool:
    """Print a user's error on stderr and return True; return False for a bug, which keeps
    its traceback."""
    sentence = user_error(error)
    if sentence is None:
        return False
    if wants_json(arguments):
        print(terminal_safe(json.dumps(error_object(error, sentence), sort_keys=True,
                                       ensure_ascii=False, default=str)), file=sys.stderr)
    else:
        print(terminal_safe(f"langchef: error: {sentence}"), file=sys.stderr)
    return True


def error_object(error: Exception, sentence: str) -> dict:
    """An error as JSON: the sentence, and where (file, column, row) with what to do."""
    found = {"error": sentence, "file": None, "column": None, "row": None, "hint": None}
    for key in ("file", "column", "row", "hint"):
        value = getattr(error, key, None)
        if value is not None:
            found[key] = value if isinstance(value, (int, str)) else str(value)
    problems = getattr(error, "problems", None)
    if problems:
        found["problems"] = [problem.to_dict() for problem in problems]
    if getattr(error, "table", None):
        found["table"] = str(error.table)
    return found


def user_error(error: Exception) -> str | None:
    """The one sentence to show for an error the user can fix, or None for a bug."""
    # Looked up, not imported: a command that never loaded these cannot have raised them,
    # and importing them would slow every start.
    errors = sys.modules.get("langchef_core.inputs.errors")
    gates = sys.modules.get("langchef_core.designs.gate_checks")
    if errors is not None and isinstance(error, errors.InputError):
        return error.describe()
    if gates is not None and isinstance(error, gates.GateRefusal):
        return f"readout refused: {error}"
    if isinstance(error, CommandError):
        return str(error)
    if isinstance(error, ValueError):
        text = str(error)
        return text if text.endswith(".") else text + "."
    if isinstance(error, OSError):
        where = f"{error.filename}: " if error.filename else ""
        return f"{where}{error.strerror or error}."
    if isinstance(error, (MemoryError, RecursionError)):
        # Readers name the file where they can; this is the last line of defence.
        return ("an input was too large or too deeply nested to process "
                f"({type(error).__name__}); check the files named in the command.")
    return None
