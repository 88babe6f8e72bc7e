"""The one error type for bad input files: it always says where, and what to do."""

from __future__ import annotations


class InputError(ValueError):
    """Bad input found in a workspace file.

    ``row`` is the 1-based data row (the line number in a .jsonl file; the row after the
    header in a .csv file). The message reads as one sentence:
    ``goldens/qa.jsonl, column 'example_id', row 12: duplicated id 'q7'; make ids unique.``
    """

    def __init__(self, message: str, *, file=None, column: str | None = None,
                 row: int | None = None, value=None, hint: str | None = None):
        self.message, self.file, self.column, self.row = message, file, column, row
        self.value, self.hint = value, hint
        super().__init__(self.describe())

    def describe(self) -> str:
        place = [str(self.file)] if self.file is not None else []
        if self.column is not None:
            place.append(f"column '{self.column}'")
        if self.row is not None:
            place.append(f"row {self.row}")
        text = (", ".join(place) + ": " if place else "") + self.message
        if self.hint:
            text = text.rstrip(".") + "; " + self.hint
        return text if text.endswith(".") else text + "."


class NotUtf8(ValueError):
    """A file's bytes are not UTF-8: ``byte`` (1-based) is the first that cannot be decoded,
    on line ``line``."""

    def __init__(self, byte: int, line: int):
        self.byte, self.line = byte, line
        super().__init__(f"byte {byte}, on line {line}, cannot be decoded as UTF-8")


def utf8_text(raw: bytes) -> str:
    """The text of a file read as bytes, or ``NotUtf8`` saying where decoding failed."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise NotUtf8(error.start + 1, raw[:error.start].count(b"\n") + 1) from None
