"""`tkc-opt`: xDSL's `xdsl-opt` with tkc built in.

It knows the tile (and sm90/ptx) dialects and tkc's passes through the `xdsl.universe` plugin
(tkc.universe), registered here directly as well so that it also works from a source tree that
was never installed. On top of xdsl-opt it reads `.tk` files (the `tk` frontend, with `-k` and
`-D` as in `tkc`) and prints PTX (`-t ptx`); its IR dump and pass timing flags are `tkc compile`'s
(tkc.command_line.add_dump_arguments; xdsl-opt's `--print-between-passes` and `--time-passes` are
kept as other spellings of `--print-ir-after-all` and `--timing`); any file not named `.tk` is read as MLIR, parsed and
verified before any pass as `tkc compile` reads it (tkc.ir_input). User mistakes (bad input, unknown
pass, bad pass option, bad usage) print one diagnostic and exit 1; a compiler bug, also IR that does
not verify after a pass, is an internal error (exit 2), reported as `tkc` reports it.
"""

from __future__ import annotations

import argparse
import re
import sys
from io import BytesIO
from collections.abc import Sequence
from dataclasses import fields
from types import NoneType, UnionType
from typing import IO, NoReturn, Union, get_args, get_origin, get_type_hints

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline
from xdsl.utils.exceptions import ArgSpecParseError, VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

from tkc import collector
from tkc.command_line import (
    add_dump_arguments,
    define_argument,
    dump_observer,
    defines,
    exit_without_teardown,
    render_user_error,
    report_internal_error,
)
from tkc.diagnostics import TkError, decode_utf8
from tkc.driver import (
    PIPELINE,
    Observer,
    PassCallback,
    PassTiming,
    PassVerifyError,
    StageUnavailable,
    kernel_name,
    kernels_of,
    marked_tile_passes,
    require_one_kernel,
    select_kernel,
)
from tkc.ir_input import parse_mlir
from tkc.universe import TKC_UNIVERSE


_KINDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


def check_pass_options(pass_type: type[ModulePass], spec: ArgSpec) -> None:
    """A one-line ValueError for an option `-p` gives a pass (`name{option=value ...}`) that it
    lacks or with a value not of the option's type (its dataclass field's: `T | None`, or a
    `tuple[T, ...]` written `a,b`), where xDSL's own message would not name the pass."""
    options = [f.name for f in fields(pass_type) if f.init]
    hints = get_type_hints(pass_type)
    for name, values in spec.normalize_parameter_names().parameters.items():
        if name not in options:
            takes = f"its options: {', '.join(options)}" if options else "it takes none"
            raise ValueError(f"{spec.name} has no option {name!r} ({takes})")
        kind = hints[name]
        if get_origin(kind) in (Union, UnionType):  # `T | None`: None is the option left out
            kind = next(t for t in get_args(kind) if t is not NoneType)
        element, many = (get_args(kind)[0], True) if get_origin(kind) is tuple else (kind, False)
        # exact types: a bool is an int to isinstance, and an option that counts is not true/false
        if not values or (len(values) > 1 and not many) or any(type(v) is not element for v in values):
            text = ",".join(str(v).lower() if isinstance(v, bool) else str(v) for v in values)
            wanted = f"a comma-separated list of {element.__name__}s" if many else _KINDS.get(element, element.__name__)
            raise ValueError(f"{spec.name}: option {name} takes {wanted}, not {text or 'nothing'}")


def check_repeated_options(pipeline: str) -> None:
    """A ValueError for an option given twice to one pass (`p{stages=2 stages=3}`), which xDSL's
    parser would settle silently by keeping the last."""
    for name, options in re.findall(r"([\w-]+)\s*\{([^{}]*)\}", pipeline):
        given = re.findall(r"([\w-]+)\s*=", options)
        twice = sorted({option for option in given if given.count(option) > 1})
        if twice:
            raise ValueError(f"{name}: option {twice[0]} is given twice; give it once")


class TkcOptMain(xDSLOptMain):
    observer: Observer
    callback: PassCallback
    timing: PassTiming | None

    def register_all_dialects(self) -> None:
        super().register_all_dialects()
        for name, factory in TKC_UNIVERSE.all_dialects.items():
            if name not in self.ctx.registered_dialect_names:
                self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        super().register_all_passes()
        for name, factory in TKC_UNIVERSE.all_passes.items():
            self.available_passes.setdefault(name, factory)

    def register_all_targets(self) -> None:
        super().register_all_targets()
        for name, factory in TKC_UNIVERSE.all_targets.items():
            self.available_targets.setdefault(name, factory)

    def register_all_frontends(self) -> None:
        super().register_all_frontends()
        self.available_frontends["tk"] = self._parse_tk

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        arg_parser.add_argument("-k", "--kernel", help="the kernel of a .tk file to compile")
        arg_parser.add_argument(
            "-D", dest="params", metavar="NAME=VALUE", type=define_argument, action="append", default=[],
            help="override a compile-time parameter of a .tk file (repeatable)",
        )
        add_dump_arguments(arg_parser, "those of -p")

    def setup_pipeline(self) -> None:
        check_repeated_options(self.args.passes)
        for spec in parse_pipeline(self.args.passes):
            if spec.name in self.available_passes:
                check_pass_options(self.available_passes[spec.name](), spec)
        args = self.args
        args.print_ir_after_all |= args.print_between_passes
        args.timing |= args.time_passes
        if args.dump_dir is not None and args.split_input_file:
            raise TkError("--dump-dir takes one module: it cannot be combined with --split-input-file")
        observer, self.timing = dump_observer(args, sys.stderr)
        self.observer = observer or Observer()
        self.callback = PassCallback(self.observer, verify=not args.disable_verify)
        self.pipeline = PassPipeline.parse_spec(self.available_passes, args.passes, self.callback)

    def prepare_output(self) -> IO[str]:
        # `-o -` is stdout, as for `tkc compile` and most tools (xdsl-opt writes a file named `-`)
        return sys.stdout if self.args.output_file == "-" else super().prepare_output()

    def get_input_stream(self) -> tuple[IO[bytes], str]:
        # Dumps and temporaries (`x.dump`, `x.tmp`) are MLIR: only `.tk` needs another frontend.
        stream, extension = super().get_input_stream()
        data = stream.read()
        stream.close()
        decode_utf8(data, self.get_input_name())  # invalid UTF-8 is a diagnostic at the byte
        return BytesIO(data), extension if extension in self.available_frontends else "mlir"

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0) -> ModuleOp | None:
        # An IR dump starts with its first `// -----` header, so --split-input-file sees an empty
        # first chunk: skip blank chunks instead of failing on them.
        data = chunk.read()
        if not data.strip():
            return None
        if file_extension == "mlir":
            module = self._parse_mlir(data, start_offset)
        else:
            module = super().parse_chunk(BytesIO(data), file_extension, start_offset)
        if module is not None:
            select_kernel(module, self.args.kernel, self.get_input_name())  # -k on .mlir input too
        return module

    def _parse_mlir(self, data: bytes, start_offset: int) -> ModuleOp | None:
        """MLIR read as `tkc compile` reads it (tkc.ir_input): ops located, verified, dominance checked;
        with --verify-diagnostics or --parsing-diagnostics a mistake is printed and the chunk skipped."""
        try:
            return parse_mlir(
                data.decode("utf-8"), self.get_input_name(), self.ctx, start_offset, not self.args.no_implicit_module
            )
        except TkError as e:
            if not (self.args.verify_diagnostics or self.args.parsing_diagnostics):
                raise
            print(render_user_error(e))
            return None

    def apply_passes(self, prog: ModuleOp) -> None:
        names = [p.name for p in self.pipeline.passes]
        if "convert-sm90-to-ptx" in names or self.args.target == "ptx" and kernels_of(prog):  # (not IR already in ptx)
            require_one_kernel(prog, self.get_input_name())  # a PTX module holds one kernel
        if "convert-tile-to-sm90" in names and "tile-occupancy-plan" not in names[: names.index("convert-tile-to-sm90")]:
            self._note_unplanned(prog)
        self.observer.input(prog)
        self.observer.will_run(names, "the pipeline of -p")
        try:
            super().apply_passes(prog)
        except PassVerifyError as e:
            if self.args.verify_diagnostics and isinstance(e.__cause__, VerifyException):
                raise e.__cause__ from None  # which xdsl-opt prints, going on to the next chunk
            raise
        except Exception as e:
            if self.callback.running is not None and not isinstance(e, TkError):
                e.add_note(f"while running pass {self.callback.running}")
            raise

    def _note_unplanned(self, prog: ModuleOp) -> None:
        """Unlike `tkc compile`, -p runs only the passes it names: a kernel lowered without a plan
        gets KernelPlan's defaults, which is allowed (hand-written IR) but rarely what was meant."""
        from tkc.passes.plan import KernelPlan

        default = KernelPlan()
        for kernel in prog.body.block.ops:
            if kernel.name == "tile.kernel" and "tile-occupancy-plan" not in marked_tile_passes(kernel):
                print(
                    f"tkc-opt: note: tile-occupancy-plan did not run on @{kernel_name(kernel)}; lowering with the "
                    f"default plan ({default.consumers} consumer, {default.stages} stage)",
                    file=sys.stderr,
                )

    def output_resulting_program(self, prog: ModuleOp) -> str:
        if self.args.target == "ptx" and not any(op.name == "ptx.module" for op in prog.walk()):
            raise TkError(
                f"-t ptx prints IR lowered to the ptx dialect; lower it first with -p {','.join(PIPELINE)}",
                self.get_input_name(),
            )
        return super().output_resulting_program(prog)

    def _parse_tk(self, io: IO[bytes]) -> ModuleOp:
        from tkc.frontend import parse_tk

        name = self.get_input_name()
        return parse_tk(io.read().decode("utf-8"), name, defines(self.args.params), self.args.kernel)


def main(argv: Sequence[str] | None = None, *, process_ends: bool = False) -> int:
    """Entry point of `tkc-opt`; returns the exit status (the console script exits with it, and
    says so with `process_ends`: the passes then leave the cyclic collector off, tkc.collector)."""
    try:
        tool = TkcOptMain(description="tkc's modular optimizer driver (xdsl-opt with the tkc dialects)", args=argv)
    except SystemExit as e:  # argparse: --help (0) or bad usage (2, which is the user's: 1)
        return 1 if e.code == 2 else int(e.code or 0)
    except ValueError as e:  # unknown pass or bad pass option in -p
        print(f"tkc-opt: error: {e}", file=sys.stderr)
        return 1
    except ArgSpecParseError as e:  # -p that does not parse (a BaseException in xDSL)
        print(f"tkc-opt: error: {e}".rstrip(), file=sys.stderr)
        return 1
    except TkError as e:
        print(render_user_error(e, "tkc-opt"), file=sys.stderr)
        return 1
    try:
        with collector.paused(resume=not process_ends):
            tool.run()
        if tool.timing is not None:
            sys.stderr.write(tool.timing.report())
    except TkError as e:
        print(render_user_error(e, "tkc-opt"), file=sys.stderr)
        return 1
    except BrokenPipeError:  # `tkc-opt ... | head`
        sys.stderr.close()
    except OSError as e:
        written = e.filename is not None and e.filename == getattr(tool.args, "output_file", None)
        if e.filename and e.strerror and not written:  # as tkc says it: `file: error: ...`
            print(f"{e.filename}: error: cannot read the file: {e.strerror}", file=sys.stderr)
            return 1
        reason = f"cannot write {e.filename}: {e.strerror}" if e.filename and e.strerror else str(e)
        print(f"tkc-opt: error: {reason}", file=sys.stderr)
        return 1
    except StageUnavailable as e:
        print(f"tkc-opt: error: {e}", file=sys.stderr)
        return 2
    except ModuleNotFoundError as e:
        if e.name is None or e.name.split(".")[0] in ("tkc", "xdsl"):
            return report_internal_error(e, "tkc-opt", sys.argv[1:] if argv is None else argv)
        # one of xDSL's stock targets or passes needs a package tkc does not (`-t llvm`: llvmlite)
        print(f"tkc-opt: error: this needs the Python package {e.name}, which is not installed", file=sys.stderr)
        return 2
    except Exception as e:
        return report_internal_error(e, "tkc-opt", sys.argv[1:] if argv is None else argv)
    return 0


def console() -> NoReturn:
    """The console script: main()'s status, without the interpreter's teardown."""
    exit_without_teardown(main(process_ends=True))


if __name__ == "__main__":
    console()
