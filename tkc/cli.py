"""The `tkc` command: `tkc compile`, `tkc run`, `tkc report`.

Exit status (tkc.command_line): 0 success; 1 a mistake in the user's input (a TkError, printed
with its source line and a caret; bad command-line usage; a file that cannot be read); 2 the
compiler failed: an internal error (one line naming the exception, a request to report it, and a
traceback only with TKC_TRACEBACK=1), a check of the compiler's own output from `.tk` source that
failed (CompilerDefect: sm90-verify-barriers, the shared-memory layout), or a stage this build does not have yet.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from tkc import collector
from tkc.command_line import (
    EXIT_INTERNAL,
    EXIT_OK,
    EXIT_USER,
    add_dump_arguments,
    define_argument,
    dump_observer,
    defines,
    exit_without_teardown,
    report_defect,
    render_user_error,
    report_internal_error,
    wants_passes,
)
from tkc.diagnostics import CompilerDefect, TkError
from tkc.pipeline import StageUnavailable


class UsageError(Exception):
    """Bad command-line usage; argparse has already printed the usage line."""


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so usage errors get tkc's exit status 1."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        raise UsageError(f"{self.prog}: error: {message}")


def _sizes(text: str) -> dict[str, int]:
    """--size M=256,N=256,K=128: positive integers."""
    sizes: dict[str, int] = {}
    for item in filter(None, text.split(",")):
        name, sep, value = item.partition("=")
        try:
            size = int(value, 0)
        except ValueError:
            size = 0
        if not sep or not name.isidentifier() or size < 1:
            raise argparse.ArgumentTypeError(f"expected NAME=SIZE with a positive integer SIZE, got {item!r}")
        if name in sizes:
            raise argparse.ArgumentTypeError(f"{name} is given twice ({sizes[name]} and {size}); give it once")
        sizes[name] = size
    if not sizes:
        raise argparse.ArgumentTypeError(f"expected NAME=SIZE,... with at least one dim, got {text!r}")
    return sizes


def _integer_at_least(minimum: int, what: str) -> Callable[[str], int]:
    """An argparse type: an integer of at least `minimum` (-j N: 1; --seed: 0, as numpy takes)."""
    def parse(text: str) -> int:
        try:
            value = int(text, 0)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            raise argparse.ArgumentTypeError(f"expected {what}, got {text!r}")
        return value

    return parse


class _MergeSizes(argparse.Action):
    """--size given several times: the dims of all of them (a dim given twice is refused, as -D)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        sizes = dict(getattr(namespace, self.dest) or {})
        for name, size in values.items():
            if name in sizes:
                parser.error(f"--size {name} is given twice ({sizes[name]} and {size}); give it once")
            sizes[name] = size
        setattr(namespace, self.dest, sizes)


def _space_item(text: str) -> tuple[str, list[int | bool | float | None]]:
    """--space BM=64,128 or @stages=plan,8 (tkc.frontend.parse_space_item)."""
    from tkc.frontend import parse_space_item

    try:
        return parse_space_item(text)
    except TkError as e:
        raise argparse.ArgumentTypeError(e.message) from None


class _Once(argparse.Action):
    """An option that names one thing (-k): given twice, which was meant? Refused, as -D twice is."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: str | None = None) -> None:
        if (before := getattr(namespace, self.dest)) is not None:
            parser.error(f"{option_string} is given twice ({before} and {values}); give it once")
        setattr(namespace, self.dest, values)


def _add_source_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a .tk program or tile-dialect .mlir")
    parser.add_argument("-k", "--kernel", action=_Once, help="the kernel to compile (default: the only one)")
    parser.add_argument(
        "-D", dest="params", metavar="NAME=VALUE", type=define_argument, action="append", default=[],
        help="override a compile-time parameter (repeatable)",
    )


def _add_progress_args(parser: argparse.ArgumentParser, what: str) -> None:
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--progress", action="store_true", help=f"show {what} on stderr even when it is not a terminal")
    shown.add_argument("-q", "--quiet", action="store_true", help=f"do not show {what}")


def build_parser() -> argparse.ArgumentParser:
    from tkc.version import __version__
    from tkc.pipeline import EMITS, PIPELINE

    parser = _Parser(prog="tkc", description="Compile ThunderKittens-style tile programs to PTX for Hopper.")
    parser.add_argument("--version", action="version", version=f"tkc {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    compile_ = commands.add_parser("compile", help="compile to a stage and print it")
    _add_source_args(compile_)
    compile_.add_argument("--emit", choices=EMITS, default="ptx", help="stage to stop at (default: ptx)")
    compile_.add_argument("-o", "--output", help="write the result here instead of stdout (`-` is stdout)")
    compile_.add_argument("--tuned", type=_sizes, metavar="M=4096,...",
                          help="compile with the parameters `tkc tune` chose for these sizes (-D still wins)")
    compile_.add_argument("--verify-each", action="store_true", default=None,
                          help="verify the IR after every pass, the PTX passes too (default: every tile and sm90 pass, and the end of the PTX stage; TKC_VERIFY_EACH=1)")
    add_dump_arguments(compile_, ", ".join(PIPELINE))

    run = commands.add_parser("run", help="run a kernel on random inputs (GPU or interpreter)")
    _add_source_args(run)
    run.add_argument("--size", type=_sizes, action=_MergeSizes, default={}, metavar="M=256,N=256,...", help="symbolic dims of the inputs (the rest: two tiles each, moved to meet the kernel's requires)")
    run.add_argument("--interpret", action="store_true", help="run the reference interpreter instead of the GPU")
    run.add_argument("--check", action="store_true", help="compare the result against the reference")
    run.add_argument("--bisect", action="store_true", help="interpret after each pass to find a miscompiling pass")
    run.add_argument("--seed", type=_integer_at_least(0, "a non-negative integer"), default=0, help="seed of the random inputs")
    _add_progress_args(run, "the interpreter's progress (on a terminal, once it has run a second)")

    report = commands.add_parser("report", help="explain the decisions the passes made for a kernel")
    _add_source_args(report)

    tune = commands.add_parser("tune", help="time the feasible configurations of a kernel's parameters (GPU)")
    _add_source_args(tune)
    tune.add_argument("--size", type=_sizes, action=_MergeSizes, default={}, metavar="M=4096,N=4096,...", help="the sizes to tune for")
    tune.add_argument("--space", type=_space_item, action="append", default=[], metavar="NAME=V1,V2,...",
                      help="values to try of a parameter or of an @annotation (repeatable; default: the tiling "
                           "parameters at x0.5, x1, x2, and @stages=plan,6,8 where loads are pipelined)")
    tune.add_argument("--prune-only", action="store_true", help="compile and prune only; time nothing (any machine)")
    tune.add_argument("--force", action="store_true", help="tune again even when a result is cached")
    tune.add_argument("-j", "--jobs", type=_integer_at_least(1, "a positive integer"), default=None, metavar="N",
                      help="processes that compile and prune configurations side by side (default: one per CPU)")
    _add_progress_args(tune, "a line per configuration")
    return parser


def _compile(args: argparse.Namespace) -> int:
    from tkc import cache

    if args.output == "-":
        args.output = None
    if args.output is not None and Path(args.output).resolve() == Path(args.file).resolve():
        raise TkError(f"-o {args.output} is the input file: writing the result there would replace the source")
    if args.emit == "cubin" and args.output is None and sys.stdout.isatty():
        raise TkError("a cubin is binary: write it to a file with -o FILE")
    if args.tuned is not None:
        from tkc.tune import tuned_config

        args.params = {**tuned_config(args.file, args.kernel, args.tuned), **args.params}
    # A compile asked for the same way before is answered without loading the compiler.
    cached = None if wants_passes(args) or args.verify_each else cache.lookup(args.file, args.kernel, args.params, args.emit)
    if cached is not None:
        result: str | bytes = cached if args.emit == "cubin" else cached.decode("utf-8")
    else:
        with collector.paused(resume=not args.process_ends):  # the imports too
            from tkc.driver import compile_file

            observer, timing = dump_observer(args, sys.stderr)
            result = compile_file(args.file, args.kernel, args.params, args.emit, observer, args.verify_each)
        if timing is not None:
            sys.stderr.write(timing.report())
    if args.output is None:
        if isinstance(result, bytes):
            sys.stdout.buffer.write(result)
        else:
            sys.stdout.write(result)
        return EXIT_OK
    try:
        if isinstance(result, bytes):
            Path(args.output).write_bytes(result)
        else:
            Path(args.output).write_text(result, encoding="utf-8")
    except OSError as e:
        raise TkError(f"cannot write {args.output}: {e.strerror or e}") from None
    return EXIT_OK


def _run(args: argparse.Namespace) -> int:
    from tkc.driver import load_stage

    return load_stage("tkc.runner", "run_command", "tkc run")(args)


def _report(args: argparse.Namespace) -> int:
    from tkc.driver import compile_module, input_stage, load_module, load_stage, make_context, require_one_kernel

    report = load_stage("tkc.report", "report", "tkc report")
    ctx = make_context()
    module = load_module(args.file, args.kernel, args.params, ctx)
    if (stage := input_stage(module)[0]) != "tile":
        raise TkError(f"tkc report explains the tile passes' decisions, so it reads a .tk source or tile IR; "
                      f"this is {stage} IR, lowered past them (report its tile-dialect dump)", args.file)
    require_one_kernel(module, args.file)
    module = compile_module(module, "tile", ctx=ctx)
    sys.stdout.write(report(module, ctx).rstrip("\n") + "\n")
    return EXIT_OK


def _tune(args: argparse.Namespace) -> int:
    from tkc.tune import autotune, declared_defaults, progress_line

    space = dict(args.space)
    if len(space) < len(args.space):
        twice = next(name for name, _ in args.space if sum(other == name for other, _ in args.space) > 1)
        raise TkError(f"--space {twice} is given twice; give its values once (--space {twice}=V1,V2,...)")
    result = autotune(args.file, args.kernel, args.size, space or None, args.params, prune_only=args.prune_only,
                      force=args.force, progress=progress_line(force=args.progress, quiet=args.quiet), jobs=args.jobs)
    sys.stdout.write(result.table())
    best = result.best
    if best is not None:
        chosen = " ".join(f"-D {k}={v}" for k, v in best.config.items() if v is not None)
        source = "cached result" if result.from_cache else f"on {result.gpu}"
        speedup = result.over_defaults(declared_defaults(args.file, args.kernel, args.params))
        print(f"best ({source}): {chosen}" + (f" ({speedup:.2f}x the declared defaults)" if speedup else ""))
    elif not args.prune_only:
        print("every configuration was pruned")
    return EXIT_OK


COMMANDS = {"compile": _compile, "run": _run, "report": _report, "tune": _tune}


def main(argv: Sequence[str] | None = None, *, process_ends: bool = False) -> int:
    """Entry point of `tkc`; returns the exit status (the console script exits with it, and says
    so with `process_ends`: its compile then leaves the cyclic collector off, tkc.collector)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    params: dict[str, int | bool | float] = {}
    file: str | None = None
    try:
        args = build_parser().parse_args(argv)
        file = getattr(args, "file", None)
        args.params = params = defines(args.params)
        args.process_ends = process_ends
        if sys.stdout is None and getattr(args, "output", None) in (None, "-"):
            raise TkError("standard output is closed: give -o FILE for the result")
        return COMMANDS[args.command](args)
    except UsageError as e:
        print(e, file=sys.stderr)
        return EXIT_USER
    except TkError as e:
        if isinstance(e, CompilerDefect) and file is not None and file.endswith(".tk"):
            return report_defect(e, "tkc", argv)  # from IR given by hand, the IR's mistake: as any other
        if e.filename is None and e.line is None:
            e.filename = file  # a mistake in the arguments of a command on a file: `file: error: ...`
        print(render_user_error(e), file=sys.stderr)
        if params and e.line is not None:  # the quoted source shows the declared defaults
            given = " ".join(f"-D {name}={str(value).lower() if isinstance(value, bool) else value}"
                             for name, value in params.items())
            print(f"note: compiled with {given}", file=sys.stderr)
        return EXIT_USER
    except StageUnavailable as e:
        print(f"tkc: error: {e}", file=sys.stderr)
        return EXIT_INTERNAL
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `tkc compile ... | head`: the reader left; not an error worth a report
        sys.stderr.close()
        return EXIT_OK
    except OSError as e:
        if e.filename is not None:  # a file tkc opened itself: its own mistake
            return report_internal_error(e, "tkc", argv)
        # the output stream tkc was given fails (`> /dev/full`, a full disk)
        print(f"tkc: error: cannot write the output: {e.strerror or e}", file=sys.stderr)
        return EXIT_USER
    except Exception as e:
        return report_internal_error(e, "tkc", argv)


def console() -> NoReturn:
    """The console script: main()'s status, without the interpreter's teardown."""
    exit_without_teardown(main(process_ends=True))


if __name__ == "__main__":
    console()
