"""`CompiledKernel`, what `tkc.compile(...)` returns.

Compiling runs the tile-level passes at once, so mistakes in the program surface at the call.
The lowering to PTX runs on first use of `.ptx`, `.abi` or a launch, and its result is cached
on disk (`TKC_CACHE_DIR`, default `~/.cache/tkc`) under a hash of the source, the kernel name,
the parameters and the compiler itself (its version and the text of its own source files, so
an edited compiler never serves a stale kernel).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tkc.driver import (
    PIPELINE,
    Observer,
    compile_module,
    emit_output,
    load_module,
    make_context,
    read_text,
    require_one_kernel,
)

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp

    from tkc.abi import KernelABI

ABI_ATTRIBUTE = "tkc.abi"
"""The attribute of the PTX module that holds the kernel's ABI as JSON (see tkc/abi.py)."""


def cache_dir() -> Path:
    return Path(os.environ.get("TKC_CACHE_DIR") or Path.home() / ".cache" / "tkc")


def _compiler_files() -> Iterator[Path]:
    import tkc.backends
    import tkc.dialects
    import tkc.passes

    for package in (__import__("tkc"), tkc.dialects, tkc.passes, tkc.backends):
        for directory in package.__path__:
            yield from sorted(p for p in Path(directory).rglob("*") if p.suffix in (".py", ".lark"))


@cache
def compiler_fingerprint() -> str:
    """tkc's version plus a hash of its own source: part of every cache key."""
    from tkc import __version__

    digest = hashlib.sha256(__version__.encode())
    for path in _compiler_files():
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    return f"{__version__}-{digest.hexdigest()[:16]}"


def cache_key(source: str, kernel: str | None, params: dict[str, int]) -> str:
    blob = json.dumps(
        {"source": source, "kernel": kernel, "params": sorted(params.items()), "tkc": compiler_fingerprint()}
    )
    return hashlib.sha256(blob.encode()).hexdigest()


class _Snapshots(Observer):
    """Keeps the text of the IR after each pass."""

    def __init__(self, into: dict[str, str]):
        self.into = into

    def after(self, pass_name: str, module: ModuleOp) -> None:
        self.into[pass_name] = str(module)


def _find_abi(module: ModuleOp) -> str:
    from xdsl.dialects.builtin import StringAttr

    for op in module.walk():
        value = op.attributes.get(ABI_ATTRIBUTE)
        if isinstance(value, StringAttr):
            return value.data
    raise RuntimeError(f"the lowered module carries no {ABI_ATTRIBUTE} attribute")


class CompiledKernel:
    """One kernel of a `.tk` (or tile-dialect `.mlir`) file, compiled for given parameters.

    `module` is the tile IR after the tile-level passes; `ir(pass_name)` the IR text after any
    pass of the pipeline; `ptx` and `abi` the lowered kernel (cached on disk); calling the
    object launches it through `tkc.runtime`.
    """

    def __init__(self, path: str | Path, kernel: str | None = None, params: dict[str, int] | None = None):
        self.path = str(path)
        self.kernel = kernel
        self.params = dict(params or {})
        self._source = read_text(self.path)
        self._input = load_module(self.path, kernel, self.params, make_context())
        require_one_kernel(self._input, self.path, "kernel='NAME'")
        self._ir: dict[str, str] = {"input": str(self._input)}
        self.module = compile_module(self._input.clone(), "tile", _Snapshots(self._ir))
        self._key = cache_key(self._source, kernel, self.params)
        self._ptx: str | None = None
        self._abi: KernelABI | None = None
        self._launcher: Any = None

    def ir(self, pass_name: str) -> str:
        """The IR text after `pass_name` ("input" for the frontend's output)."""
        if pass_name not in self._ir and pass_name in PIPELINE:
            self._lower()
        if pass_name not in self._ir:
            ran = ", ".join(self._ir)
            raise KeyError(f"no IR after {pass_name!r}; passes that ran: {ran}")
        return self._ir[pass_name]

    @property
    def ptx(self) -> str:
        if self._ptx is None and not self._load_cached():
            self._lower()
        assert self._ptx is not None
        return self._ptx

    @property
    def abi(self) -> KernelABI:
        if self._abi is None and not self._load_cached():
            self._lower()
        assert self._abi is not None
        return self._abi

    def report(self) -> str:
        from tkc.driver import load_stage

        return load_stage("tkc.report", "report", "tkc report")(self.module)

    def interpret(self, **inputs: Any) -> dict[str, Any]:
        """Run the compiled tile IR in the reference interpreter on numpy arrays."""
        from tkc.interpreter import interpret

        return interpret(self.module, self.kernel, inputs, self.params)

    def __call__(self, *tensors: Any, stream: Any = None) -> Any:
        if self._launcher is None:
            from tkc.runtime import load

            self._launcher = load(ptx=self.ptx, abi=self.abi)
        return self._launcher(*tensors, stream=stream)

    def __repr__(self) -> str:
        params = "".join(f", {k}={v}" for k, v in self.params.items())
        return f"tkc.compile({self.path!r}, kernel={self.kernel!r}{params})"

    def _cache_files(self) -> tuple[Path, Path]:
        base = cache_dir() / self._key
        return base.with_suffix(".ptx"), base.with_suffix(".abi.json")

    def _load_cached(self) -> bool:
        from tkc.abi import KernelABI

        ptx_file, abi_file = self._cache_files()
        try:
            ptx, abi = ptx_file.read_text(encoding="utf-8"), abi_file.read_text(encoding="utf-8")
        except OSError:
            return False
        self._ptx, self._abi = ptx, KernelABI.from_json(abi)
        return True

    def _lower(self) -> None:
        from tkc.abi import KernelABI

        module = compile_module(self._input.clone(), "ptx", _Snapshots(self._ir))
        ptx = emit_output(module, "ptx")
        assert isinstance(ptx, str)
        abi = _find_abi(module)
        self._ptx, self._abi = ptx, KernelABI.from_json(abi)
        self._store(ptx, abi)

    def _store(self, ptx: str, abi: str) -> None:
        """Write the cache entry atomically; a cache that cannot be written is only slower."""
        try:
            for path, text in zip(self._cache_files(), (ptx, abi), strict=True):
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
                tmp.write_text(text, encoding="utf-8")
                os.replace(tmp, path)
        except OSError:
            pass

