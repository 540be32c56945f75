"""What the two command-line tools, `tkc` (tkc.cli) and `tkc-opt` (tkc.opt), share: the exit
statuses, the `-D NAME=VALUE` argument, and how each reports a mistake in the user's input and an
internal error.

Exit status: 0 success; 1 a mistake in the user's input (a TkError, printed with its source line
and a caret; bad usage; a file that cannot be read); 2 the compiler failed: an internal error (one
line naming the exception, a request to report it, and a traceback only with TKC_TRACEBACK=1) or
a stage this build does not have.
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import traceback
from collections.abc import Sequence

from tkc.diagnostics import TkError

EXIT_OK, EXIT_USER, EXIT_INTERNAL = 0, 1, 2


def define_argument(text: str) -> tuple[str, int | bool | float]:
    """The argparse type of -D NAME=VALUE (tkc.frontend.parse_define); a usage error when malformed."""
    from tkc.frontend import parse_define

    try:
        return parse_define(text)
    except TkError as e:
        raise argparse.ArgumentTypeError(e.message) from None


def defines(pairs: Sequence[tuple[str, int | bool | float]]) -> dict[str, int | bool | float]:
    """The -D assignments as a dict; a name given twice is a mistake (which one was meant?)."""
    params: dict[str, int | bool | float] = {}
    for name, value in pairs:
        if name in params:
            raise TkError(f"-D {name} is given twice ({params[name]} and {value}); give it once")
        params[name] = value
    return params


def render_user_error(error: TkError) -> str:
    if error.filename is None and error.line is None:
        return f"tkc: error: {error.message}"
    return error.render()


def _raised_at(error: BaseException) -> str:
    """Where the exception came from, so a bare `assert` still points somewhere."""
    frame = traceback.extract_tb(error.__traceback__)[-1]
    return f"raised at {frame.filename}:{frame.lineno}"


def report_internal_error(error: Exception, prog: str, argv: Sequence[str]) -> int:
    """One line naming the exception, where it came from, and a request to report the command."""
    if os.environ.get("TKC_TRACEBACK") == "1":
        traceback.print_exception(error)
    message = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    print(f"{prog}: internal compiler error: {message}", file=sys.stderr)
    for note in [*getattr(error, "__notes__", []), _raised_at(error)]:
        print(f"  ({note})", file=sys.stderr)
    print(
        "Please report this bug with the command line that caused it:\n"
        f"  {prog} {shlex.join(argv)}\n"
        "(set TKC_TRACEBACK=1 to see the traceback)",
        file=sys.stderr,
    )
    return EXIT_INTERNAL
