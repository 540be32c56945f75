"""tkc: a compiler from ThunderKittens-style tile programs (`.tk`) to PTX for Hopper GPUs.

    import tkc
    gemm = tkc.compile("examples/gemm.tk", kernel="gemm", BM=128)   # tile passes run now
    print(gemm.ir("tile-swizzle-select"), gemm.ptx)                 # PTX cached on disk
    gemm(A, B, C)                                                   # launch (tkc.runtime)
    out = tkc.interpret(gemm.module, "gemm", {"A": a, "B": b})      # numpy reference
    tkc.autotune("examples/gemm.tk", sizes={"M": 4096, "N": 4096, "K": 4096}).best.config
    tuned = tkc.autotuned("examples/gemm.tk"); tuned(A, B, C)       # tuned per shape bucket

`import tkc` is cheap: the compiler, the interpreter and the CUDA runtime load on first use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tkc.version import __version__

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path

    from tkc.api import CompiledKernel
    from tkc.tune import TunedKernel, TuneResult

__all__ = ["CompiledKernel", "TkError", "__version__", "autotune", "autotuned", "compile", "interpret"]


def compile(path: str | Path, kernel: str | None = None, **params: int) -> CompiledKernel:
    """Compile `kernel` of the `.tk` file at `path` with compile-time parameters `params`."""
    from tkc.api import CompiledKernel

    return CompiledKernel(path, kernel, params)


def autotune(
    path: str | Path,
    kernel: str | None = None,
    sizes: Mapping[str, int] | None = None,
    space: Mapping[str, Sequence[int | bool | float | None]] | None = None,
    **options: Any,
) -> TuneResult:
    """Tune `kernel`'s compile-time parameters for `sizes` on the GPU (tkc.tune.autotune):
    `tkc.autotune("examples/gemm.tk", sizes={"M": 4096, "N": 4096, "K": 4096}).best.config`."""
    from tkc.tune import autotune as tune

    return tune(path, kernel, sizes, space, **options)


def autotuned(
    path: str | Path,
    kernel: str | None = None,
    space: Mapping[str, Sequence[int | bool | float | None]] | None = None,
    **params: int | bool | float,
) -> TunedKernel:
    """A callable kernel that runs, at each shape bucket it is called with, the configuration
    `autotune` chose there (tuning on the first call in a bucket, or reading the cached result):
    `gemm = tkc.autotuned("examples/gemm.tk"); gemm(A, B, C)`."""
    from tkc.tune import TunedKernel

    return TunedKernel(path, kernel, space, params)


def interpret(program: Any, kernel: str | None = None, inputs: Any = None, params: Any = None,
              progress: Any = None) -> Any:
    """`tkc.interpreter.interpret(module, kernel, inputs, params)`: run tile IR on numpy arrays.
    The program is a module (`CompiledKernel.module`), a compiled kernel, or the path of a `.tk`
    source or of tile-dialect `.mlir`. `params` bind the kernel's dims; for a `.tk` path they may
    also set its compile-time parameters (the rest at their defaults) and pin annotations
    (`{"@stages": 3}`, checked as tkc.compile checks them; a pin changes no result)."""
    from pathlib import Path

    from xdsl.ir import Operation

    from tkc.api import CompiledKernel
    from tkc.diagnostics import TkError
    from tkc.driver import load_module
    from tkc.frontend import read_source, source_params
    from tkc.interpreter import find_kernel, interpret as run, symbolic_dims

    params = dict(params or {})
    if isinstance(program, CompiledKernel):
        program = program.module
    elif isinstance(program, str | Path) and str(program).endswith(".tk"):
        # the source's parameters, read before anything compiles (a default may not compile
        # where the override does); the rest bind dims, and a name that is neither is refused here
        declared = source_params(read_source(program), str(program), kernel)
        compiled = {name: value for name, value in params.items() if name in declared or name.startswith("@")}
        module = load_module(program, kernel, compiled)
        params = {name: value for name, value in params.items() if name not in compiled}
        dims = symbolic_dims(find_kernel(module, kernel))
        if stray := [name for name in params if name not in dims]:
            raise TkError(f"{program}: {stray[0]} is neither a parameter nor a dim of the kernel (parameters: "
                          f"{', '.join(declared) or 'none'}; dims: {', '.join(dims) or 'none'})")
        program = module
    elif isinstance(program, str | Path):
        program = load_module(program, kernel)
    elif not isinstance(program, Operation):
        raise TkError(f"tkc.interpret runs a module, a compiled kernel or a source's path, not {type(program).__name__}")
    return run(program, kernel, {} if inputs is None else inputs, params, progress)


def __getattr__(name: str) -> Any:
    # CompiledKernel and TkError without importing xDSL at `import tkc`
    if name == "CompiledKernel":
        from tkc.api import CompiledKernel

        return CompiledKernel
    if name == "TkError":
        from tkc.diagnostics import TkError

        return TkError
    raise AttributeError(f"module 'tkc' has no attribute {name!r}")
