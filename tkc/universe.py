"""tkc as an xDSL plugin: stock `xdsl-opt` (and `tkc-opt`) find tkc's dialects, passes and the
`ptx` target through the `xdsl.universe` entry point declared in pyproject.toml.

xdsl-opt loads every universe at startup, so this module imports nothing heavy: dialects,
passes and the printer are resolved by lazy factories. Only parts whose modules exist are
listed, so a dialect or pass still being written neither breaks nor clutters `xdsl-opt`.
xDSL's own passes (canonicalize, cse) are left out: a second definition would be a clash.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Dialect
from xdsl.universe import Universe
from xdsl.utils.target import Target

from tkc.passes import TKC_PASS_NAMES, ALL_PASSES, is_available

DIALECT_NAMES = ("tile", "sm90", "ptx")
"""tkc's dialects; `tkc.dialects.<name>` defines the `Dialect` of that name."""


def _dialect(name: str) -> Callable[[], Dialect]:
    def load() -> Dialect:
        module = importlib.import_module(f"tkc.dialects.{name}")
        for value in vars(module).values():
            if isinstance(value, Dialect) and value.name == name:
                return value
        raise ImportError(f"{module.__name__} defines no Dialect named {name!r}")

    return load


def available_dialects() -> dict[str, Callable[[], Dialect]]:
    """Lazy factories of the tkc dialects whose modules exist."""
    return {
        name: _dialect(name)
        for name in DIALECT_NAMES
        if importlib.util.find_spec(f"tkc.dialects.{name}") is not None
    }


@dataclass(frozen=True)
class PtxTarget(Target):
    """`-t ptx`: print a module in the ptx dialect as PTX text."""

    name = "ptx"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        from tkc.driver import load_stage

        output.write(load_stage("tkc.backends.ptx_printer", "print_ptx", "the PTX printer")(module))


def _ptx_target() -> type[Target]:
    return PtxTarget


TKC_UNIVERSE = Universe(
    all_dialects=available_dialects(),
    all_passes={name: ALL_PASSES[name] for name in TKC_PASS_NAMES if is_available(name)},
    all_targets={"ptx": _ptx_target},
)
