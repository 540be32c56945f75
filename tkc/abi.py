"""The contract between the compiler and the runtime: what a compiled kernel expects at launch.

The lowering fills a `KernelABI` from the IR (it is stored on the PTX module as the `tkc.abi`
attribute, JSON-encoded); the runtime reads it to check the arguments, bind symbolic dims,
encode tensor maps, size the grid and launch. Nothing else passes between the two.

Kernel parameters, in `KernelABI.params` order:
  TensorMapParam  `.param .align 64 .b8 name[128]`: a CUtensorMap over one global argument.
                  The map's dims are the argument's dims innermost first, strides those of a
                  contiguous row-major tensor; `box` is innermost first, in elements. A rank-1
                  argument [n] is mapped as one row, dims [n, 1], with a 2-D box (ThunderKittens
                  pads its vector maps likewise; the 1-D map was refused by the H200's driver).
  PointerParam    `.param .u64 name`: the argument's device address.
  DimParam        `.param .u32 name`: the value bound to a symbolic dim.

Grid extents are small expressions over symbolic dims: an int, a dim name, the name
`num_sms` (the device's multiprocessor count), or a tuple (op, lhs, rhs) with op one of
div (exact), ceildiv, mul, add, sub, min, max.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from typing import Union

Expr = Union[int, str, tuple]


@dataclass(frozen=True)
class ArgSpec:
    name: str
    dtype: str
    dims: tuple[str | int, ...]


@dataclass(frozen=True)
class TensorMapParam:
    name: str
    arg: str
    box: tuple[int, ...]
    swizzle: int
    kind: str = "tensormap"


@dataclass(frozen=True)
class PointerParam:
    name: str
    arg: str
    kind: str = "pointer"


@dataclass(frozen=True)
class DimParam:
    name: str
    dim: str
    kind: str = "dim"


Param = TensorMapParam | PointerParam | DimParam


@dataclass(frozen=True)
class KernelABI:
    entry: str
    args: tuple[ArgSpec, ...]
    params: tuple[Param, ...]
    grid: tuple[Expr, Expr, Expr]
    block: int
    smem_bytes: int
    divisibility: tuple[tuple[str, int], ...] = field(default=())
    """(dim name, divisor): the tile sizes each symbolic dim must be a multiple of."""
    written: tuple[str, ...] = field(default=())
    """The arguments the kernel stores to: none may overlap another argument in memory (the
    compiler orders a block's accesses per argument, assuming distinct arguments are distinct memory)."""

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @staticmethod
    def from_json(text: str) -> KernelABI:
        raw = json.loads(text)
        kinds = {"tensormap": TensorMapParam, "pointer": PointerParam, "dim": DimParam}
        params = []
        for p in raw["params"]:
            cls = kinds[p["kind"]]
            if cls is TensorMapParam:
                p = {**p, "box": tuple(p["box"])}
            params.append(cls(**p))
        return KernelABI(
            entry=raw["entry"],
            args=tuple(ArgSpec(a["name"], a["dtype"], tuple(a["dims"])) for a in raw["args"]),
            params=tuple(params),
            grid=tuple(_tuplify(g) for g in raw["grid"]),  # type: ignore[arg-type]
            block=raw["block"],
            smem_bytes=raw["smem_bytes"],
            divisibility=tuple((d, int(n)) for d, n in raw["divisibility"]),
            written=tuple(raw.get("written", ())),
        )


def _tuplify(expr: Expr) -> Expr:
    if isinstance(expr, list):
        return tuple(_tuplify(e) for e in expr)
    return expr


def evaluate(expr: Expr, dims: dict[str, int]) -> int:
    """The value of a grid expression once the symbolic dims (and `num_sms`) are bound."""
    if isinstance(expr, int):
        return expr
    if isinstance(expr, str):
        return dims[expr]
    op, lhs, rhs = expr
    a, b = evaluate(lhs, dims), evaluate(rhs, dims)
    match op:
        case "div":
            return a // b
        case "ceildiv":
            return -(-a // b)
        case "mul":
            return a * b
        case "add":
            return a + b
        case "sub":
            return a - b
        case "min":
            return min(a, b)
        case "max":
            return max(a, b)
    raise ValueError(f"unknown grid operator {op!r}")
