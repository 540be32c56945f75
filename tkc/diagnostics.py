"""User-facing errors: `file:line:col: error: message`, the source line, and a caret.

Any part of the compiler that finds a mistake in the user's program (the parser, the builder,
a pass that cannot honour an annotation, the runtime checking arguments) raises `TkError`.
The CLI prints it and exits with status 1. Anything else escaping is a bug in tkc (status 2).
Ops carry `FileLineColLoc` locations, so `error_at(op, ...)` points a late pass's complaint at
the `.tk` line that caused it; an op read from an `.mlir` file without one that can be shown is
located at its line in that file (INPUT_PLACES).
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

if TYPE_CHECKING:  # xDSL loads on first use, so the CLI answers from the cache without it
    from xdsl.dialects.builtin import FileLineColLoc
    from xdsl.ir import Operation


class TkError(Exception):
    """A mistake in the user's input, with the place it was found when one is known."""

    def __init__(
        self,
        message: str,
        filename: str | None = None,
        line: int | None = None,
        col: int | None = None,
        source: str | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.filename = filename
        self.line = line
        self.col = col
        self.source = source

    def render(self, source: str | None = None) -> str:
        """The diagnostic as printed: location, message, then the line and a caret under `col`."""
        source = source if source is not None else self.source
        if source is None and self.filename and self.line:
            source = _file_source(self.filename)
        where = self.filename or "<input>"
        if self.line is not None:
            where += f":{self.line}"
            if self.col is not None:
                where += f":{self.col}"
        text = f"{where}: error: {self.message}"
        if source is not None and self.line is not None:
            # Lines as the lexer counts them: only "\n" ends one (an empty file is one empty line).
            lines = source.split("\n")
            if 1 <= self.line <= len(lines):
                # One column per character, so the caret stays under it; a tab or a control
                # character would move the terminal's cursor, so each prints as one space.
                line_text = "".join(c if c.isprintable() else " " for c in lines[self.line - 1].removesuffix("\r"))
                caret_col = max(1, self.col or 1)
                text += f"\n{line_text}\n{' ' * (caret_col - 1)}^"
        return text

    def __str__(self) -> str:
        return self.render()


def lone_cr_as_lf(text: str) -> str:
    """`text` with each carriage return that no line feed follows (an old Mac line end) made a
    line feed, so that a `//` comment ends there and lines count as an editor shows them; CRLF
    line ends are left as they are (the lexer skips the CR as whitespace)."""
    return re.sub(r"\r(?!\n)", "\n", text) if "\r" in text else text


def decode_utf8(data: bytes, filename: str) -> str:
    """`data` as UTF-8 text (less a leading byte-order mark, which some editors write); invalid
    UTF-8 is a TkError at the offending byte."""
    data = data.removeprefix(b"\xef\xbb\xbf")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        before = data[: err.start]
        line = before.count(b"\n") + 1
        line_start = before.rfind(b"\n") + 1
        col = len(data[line_start : err.start].decode("utf-8", errors="replace")) + 1
        raise TkError(
            f"invalid UTF-8 byte 0x{data[err.start]:02x} (source files must be UTF-8)",
            filename,
            line,
            col,
            data.decode("utf-8", errors="replace"),
        ) from None


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """"; did you mean 'X'?" for the candidate closest to a misspelt `name` (case aside), or ""."""
    name, candidates = str(name), list(candidates)
    same_letters = [c for c in candidates if c.lower() == name.lower()]
    close = same_letters or difflib.get_close_matches(name, candidates, n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


INPUT_PLACES: WeakKeyDictionary[Operation, FileLineColLoc] = WeakKeyDictionary()
"""Where an op read from an `.mlir` file stands in it (tkc.ir_input), for each op whose own
location cannot be shown: none (a dump prints none for ops that have none, and must print back
unchanged), or a damaged one. `location_of` prefers it to the op's location."""


def location_of(op: Operation) -> tuple[str | None, int | None, int | None]:
    """The file, line and column `op` came from, or Nones: also where its location names a line
    its file (read where it can be) does not have, which only an edited dump gives an op, and
    which a pass copies onto the ops it makes from it (error_at then looks further out)."""
    from xdsl.dialects.builtin import FileLineColLoc

    loc = INPUT_PLACES.get(op, op.location)
    if isinstance(loc, FileLineColLoc):
        lines = _line_count(loc.filename.data)
        if lines is not None and not 1 <= loc.line.data <= lines:
            return None, None, None
        return loc.filename.data, loc.line.data, loc.column.data
    return None, None, None


def _line_count(filename: str) -> int | None:
    """The lines of `filename` as it is now, or None where it cannot be read."""
    try:
        stat = os.stat(filename)
    except OSError:
        return None
    return _lines_of(filename, stat.st_mtime_ns, stat.st_size)


@cache
def _lines_of(filename: str, mtime_ns: int, size: int) -> int | None:
    source = _file_source(filename)
    return None if source is None else len(source.split("\n"))  # only "\n" ends a line, as render counts


def _file_source(filename: str) -> str | None:
    """A file's text as diagnostics show it, or None where it cannot be read: read as bytes (text
    mode's newline translation would shift the lines), a `.tk` file's lone CRs as line ends, as
    the frontend counts lines."""
    try:
        source = Path(filename).read_bytes().decode("utf-8", errors="replace")
    except OSError:
        return None
    return lone_cr_as_lf(source) if filename.endswith(".tk") else source


def line_label(op: Operation, unlocated: str | None = None) -> str:
    """"line N" for an op with a `.tk` line, else `unlocated` (default: the op's name), for the
    reasons passes write into decisions."""
    _, line, _ = location_of(op)
    if line is not None:
        return f"line {line}"
    return unlocated if unlocated is not None else op.name


def error_at(op: Operation, message: str) -> TkError:
    """A TkError located at the `.tk` construct that produced `op` (use: `raise error_at(op, ...)`),
    or, for an op a pass made without a location, at the nearest enclosing one that has one (the
    loop or the kernel it belongs to). A location in a file that cannot be read (a pass copied it
    from an op of an edited dump) gives way to an enclosing one that can be shown, and is used only
    where none can (a program compiled from a string)."""
    unreadable: tuple[str | None, int | None, int | None] = (None, None, None)
    located: Operation | None = op
    while located is not None:
        filename, line, col = location_of(located)
        if filename is not None and _line_count(filename) is not None:
            return TkError(message, filename, line, col)
        if filename is not None and unreadable[0] is None:
            unreadable = (filename, line, col)
        located = located.parent_op()
    return TkError(message, *unreadable)


class CompilerDefect(TkError):
    """A check of what the compiler itself generated failed (sm90-verify-barriers, the shared-memory
    layout check): tkc's defect, not the program's, shown at the construct it came from and exiting
    with the internal-error status. (On IR edited by hand it may be the edit's.)"""


def defect_at(op: Operation, message: str) -> CompilerDefect:
    """error_at's location, as a CompilerDefect (use: `raise defect_at(op, ...)`)."""
    located = error_at(op, message)
    return CompilerDefect(message, located.filename, located.line, located.col)
