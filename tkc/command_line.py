"""What the two command-line tools, `tkc` (tkc.cli) and `tkc-opt` (tkc.opt), share: the exit
statuses, the `-D NAME=VALUE` argument, the IR dump and pass timing flags (one spelling and one
header for both, tkc.driver.DumpOptions), and how each reports a mistake in the user's input and
an internal error.

Exit status: 0 success; 1 a mistake in the user's input (a TkError, printed with its source line
and a caret; bad usage; a file that cannot be read); 2 the compiler failed: an internal error (one
line naming the exception, a request to report it, and a traceback only with TKC_TRACEBACK=1) or
a stage this build does not have, or a check of the compiler's own output from `.tk` source that failed
(CompilerDefect: sm90-verify-barriers, the shared-memory layout).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from typing import IO, TYPE_CHECKING, NoReturn

from tkc.cache import env_flag
from tkc.diagnostics import CompilerDefect, TkError

if TYPE_CHECKING:
    from tkc.driver import Observer, PassTiming

EXIT_OK, EXIT_USER, EXIT_INTERNAL = 0, 1, 2


def define_argument(text: str) -> tuple[str, int | bool | float]:
    """The argparse type of -D NAME=VALUE (tkc.frontend.parse_define); a usage error when malformed."""
    from tkc.frontend import parse_define

    try:
        return parse_define(text)
    except TkError as e:
        raise argparse.ArgumentTypeError(e.message) from None


def add_dump_arguments(parser: argparse.ArgumentParser, pass_names: str) -> None:
    """The per-pass dump and timing flags, in mlir-opt's spelling (less its `mlir-` prefix)."""
    dumps = parser.add_argument_group(f"IR dumps (to stderr) and pass timing; passes: {pass_names}")
    dumps.add_argument("--print-ir-after-all", action="store_true", help="print the IR after every pass")
    dumps.add_argument("--print-ir-before-all", action="store_true", help="print the IR before every pass")
    dumps.add_argument("--print-ir-after", metavar="PASS", action="append", default=[],
                       help="print the IR after PASS (repeatable)")
    dumps.add_argument("--print-ir-before", metavar="PASS", action="append", default=[],
                       help="print the IR before PASS (repeatable)")
    dumps.add_argument("--dump-dir", metavar="DIR", type=_directory,
                       help="write 00-input.mlir, 01-PASS.mlir, ... to DIR (replacing the dumps tkc wrote there before)")
    dumps.add_argument("--timing", action="store_true", help="print the time each pass and the verifier took")


def _directory(text: str) -> Path:
    """A directory argument: an empty one would be the working directory, which nobody means."""
    if not text.strip():
        raise argparse.ArgumentTypeError("give a directory (an empty name would write into the working directory)")
    return Path(text)


def wants_dumps(args: argparse.Namespace) -> bool:
    """Whether the flags of add_dump_arguments ask for any IR dump."""
    return bool(args.print_ir_after_all or args.print_ir_before_all or args.print_ir_after
                or args.print_ir_before or args.dump_dir)


def wants_passes(args: argparse.Namespace) -> bool:
    """Whether the flags of add_dump_arguments need the passes to run (not a cached answer)."""
    return wants_dumps(args) or bool(args.timing)


def dump_observer(args: argparse.Namespace, stream: IO[str]) -> tuple[Observer | None, PassTiming | None]:
    """The observer of the dump and timing flags both tools share (add_dump_arguments),
    and the timing among them to report at the end; (None, None) when none is given."""
    from tkc.driver import DumpOptions, Observers, PassTiming

    observers: list[Observer] = []
    if wants_dumps(args):
        observers.append(DumpOptions(
            stream,
            after_all=args.print_ir_after_all,
            before_all=args.print_ir_before_all,
            after_passes=frozenset(args.print_ir_after),
            before_passes=frozenset(args.print_ir_before),
            dump_dir=args.dump_dir,
        ))
    timing = PassTiming() if args.timing else None
    if timing is not None:
        observers.append(timing)
    if not observers:
        return None, None
    return (observers[0] if len(observers) == 1 else Observers(*observers)), timing


def defines(pairs: Sequence[tuple[str, int | bool | float]]) -> dict[str, int | bool | float]:
    """The -D assignments as a dict; a name given twice is a mistake (which one was meant?)."""
    params: dict[str, int | bool | float] = {}
    for name, value in pairs:
        if name in params:
            raise TkError(f"-D {name} is given twice ({params[name]} and {value}); give it once")
        params[name] = value
    return params


def render_user_error(error: TkError, prog: str = "tkc") -> str:
    if error.filename is None and error.line is None:
        return f"{prog}: error: {error.message}"
    return error.render()


def _raised_at(error: BaseException) -> str:
    """Where the exception came from, so a bare `assert` still points somewhere."""
    frame = traceback.extract_tb(error.__traceback__)[-1]
    return f"raised at {frame.filename}:{frame.lineno}"


def report_internal_error(error: Exception, prog: str, argv: Sequence[str]) -> int:
    """One line naming the exception, where it came from, and a request to report the command."""
    if env_flag("TKC_TRACEBACK"):
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


def report_defect(error: CompilerDefect, prog: str, argv: Sequence[str]) -> int:
    """A check of the compiler's own output failed: the error at its construct, then the request
    to report it, as for any internal error."""
    print(render_user_error(error, prog), file=sys.stderr)
    print(f"{prog}: this is a compiler defect, not a mistake in the program. Please report it with the command line:\n"
          f"  {prog} {shlex.join(argv)}", file=sys.stderr)
    return EXIT_INTERNAL


def exit_without_teardown(status: int) -> NoReturn:
    """End a console script's process with `status` once its output is flushed, skipping the
    interpreter's teardown: freeing a compiler's objects one by one (xDSL's dialect classes, the
    IR) took about 0.1 s of a 0.6 s cold `tkc compile`, and the OS reclaims them at once. Every
    file tkc writes is closed where it is written (each in a `with` block or by Path.write_*), and
    nothing of tkc's runs at exit."""
    for stream in (sys.stdout, sys.stderr):
        if stream is None:  # started with the descriptor closed (`tkc compile ... >&-`)
            continue
        try:
            stream.flush()
        except (OSError, ValueError):  # the reader left (`tkc compile | head`), it was closed, or it is full
            pass
    os._exit(status)
