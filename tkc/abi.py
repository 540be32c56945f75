"""The contract between the compiler and the runtime: what a compiled kernel expects at launch.

The lowering fills a `KernelABI` from the IR (it is stored on the PTX module as the `tkc.abi`
attribute, JSON-encoded); the runtime reads it to check the arguments, bind symbolic dims,
encode tensor maps, size the grid and launch. Nothing else passes between the two.

Kernel parameters, in `KernelABI.params` order:
  TensorMapParam  `.param .align 64 .b8 name[128]`: a CUtensorMap over one global argument.
                  The map's dims are the argument's dims innermost first, its strides the
                  argument's own byte strides (any view whose innermost dim is dense and whose
                  other strides are multiples of 16 bytes); `box` is innermost first, in
                  elements. A rank-1 argument [n] is mapped as one row, dims [n, 1], with a
                  2-D box (ThunderKittens pads its vector maps likewise; the 1-D map was
                  refused by the H200's driver).
  PointerParam    `.param .u64 name`: the argument's device address.
  DimParam        `.param .u32 name`: the value bound to a symbolic dim.
  ScratchParam    `.param .u64 name`: the address of device workspace the runtime provides,
                  all zero at the launch and left all zero by the kernel.

Grid extents are small expressions over symbolic dims: an int, a dim name, the name
`num_sms` (the device's multiprocessor count), the name `max_clusters` (how many of a 4-CTA
cluster kernel's clusters the device runs at once: the occupancy query of the loaded kernel, or
`num_sms` where nothing is loaded), or a tuple (op, lhs, rhs) with op one of
div (exact), ceildiv, mul, add, sub, min, max. A kernel's requirements (`require` in `.tk`) are
expressions over the dims that also take the comparisons eq, ne, lt, le, gt, ge and the bool
operators and, or, xor (a truth value is 1 or 0); the runtime refuses a launch where one is 0.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Union, cast

from tkc.dtypes import BY_NAME

Expr = Union[int, str, tuple]


ONE_CTA_FROM_TILES = 32
"""Tiles along the walked axis from which a persistent heavy-first kernel (causal attention)
launches its one-CTA-per-tile variant instead. Walked heavy-first, the CTAs running at once hold
the same query tile of as many heads, whose keys stop sharing L2 as sequences grow; launched one
CTA per tile, they hold consecutive query tiles of one head. H100, one process, causal D 64,
one CTA per tile against the walk: forward 1.00x at 8 tiles (N 1024), 1.06-1.07x at 16-32,
1.06x at 128; the backward's dQ 1.03x, 1.07x, 1.15x, 1.26x. The walk measured 0.93-0.95x cuDNN
against 0.81-0.88x at 8-16 tiles on an H200 earlier, so it keeps the short grids."""


def unmasked_tail(dim: str, value: int, where: str, multiple: int, why: str) -> str:
    """Why `dim` = `value` (bound from `where`) is refused where tile-mask-tails asked for whole
    tiles of `multiple` (its reason `why`)."""
    return (f"{dim} = {value} (from {where}) is not a multiple of {multiple}: {why} (the GPU kernel works on "
            f"whole tiles of {dim} there; `tkc report` lists it under tails)")


def divisibility_refusal(abi: KernelABI, dims: dict[str, int], where: dict[str, str]) -> str | None:
    """Why a launch at these `dims` (each bound from `where`) is refused for a dim that must be a
    multiple (`KernelABI.divisibility`), or None: tile-mask-tails' reason where it asks for the
    multiple, else the rounded-down count of tiles."""
    for dim, multiple, why in abi.whole_tiles:
        if dims[dim] % multiple:
            return unmasked_tail(dim, dims[dim], where[dim], multiple, why)
    for dim, multiple in abi.divisibility:
        if dims[dim] % multiple:
            return rounded_down_tail(dim, dims[dim], where[dim], multiple)
    return None


def rounded_down_tail(dim: str, size: int, where: str, multiple: int) -> str:
    """Why a launch is refused whose `dim` (bound from `where`) is not the `multiple` that the
    kernel's rounded-down count of tiles (`KernelABI.divisibility`) needs."""
    return (
        f"{dim} = {size} (from {where}) is not a multiple of {multiple}: the kernel counts whole tiles of {dim} "
        f"with a division that rounds down ({dim} / {multiple}), which would skip the last {size % multiple}; "
        f"count them with ceildiv({dim}, {multiple}) to cover the tail"
    )


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


@dataclass(frozen=True)
class ScratchParam:
    """The address of at least `nbytes` bytes of device memory (`nbytes` a grid expression,
    evaluated like the grid) that are all zero at the launch and that the kernel leaves all zero
    (it resets what it used, e.g. stream-K's flags). The runtime keeps one such buffer per device
    and stream and reuses it, so two launches of the kernel on one stream share it (they cannot
    run at the same time); launches on different streams get different buffers."""

    name: str
    nbytes: Expr
    kind: str = "scratch"


Param = TensorMapParam | PointerParam | DimParam | ScratchParam


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
    multicast: tuple[str, ...] = field(default=())
    """The arguments whose tiles the two CTAs of a cluster share (TMA multicast)."""
    dependent_launch: bool = False
    """Launched as a programmatic dependent of the kernel before it on the stream: its blocks may
    start while that kernel finishes, and wait (griddepcontrol.wait) for it to complete, its
    writes visible, before they touch global memory."""
    whole_tiles: tuple[tuple[str, int, str], ...] = field(default=())
    """(dim name, divisor, why): the part of `divisibility` that tile-mask-tails asks for, where no
    mask keeps the kernel exact (the rest comes from tiles counted with a rounded-down `/`), so a
    refused launch says why."""
    requires: tuple[tuple[Expr, str], ...] = field(default=())
    """(condition, text): the kernel's `require` statements, each an expression over the dims
    (CONDITION_OPERATORS) and the condition as written with its line, for the refusal."""

    def dims_of(self, shapes: Sequence[Sequence[int]]) -> dict[str, int] | None:
        """The symbolic dims that arguments of these shapes (in `args` order) bind, or None where
        the shapes do not fit the arguments (left for the launch to report)."""
        dims: dict[str, int] = {}
        if len(shapes) != len(self.args):
            return None
        for spec, shape in zip(self.args, shapes):
            if len(shape) != len(spec.dims):
                return None
            for want, got in zip(spec.dims, shape):
                if isinstance(want, str) and dims.setdefault(want, got) != got:
                    return None
        return dims

    def divides(self, shapes: Sequence[Sequence[int]]) -> bool:
        """Whether arguments of these shapes (in `args` order) meet `divisibility`; shapes that do
        not fit the arguments at all are left for the launch to report, and count as False."""
        dims = self.dims_of(shapes)
        return dims is not None and all(dims[dim] % divisor == 0 for dim, divisor in self.divisibility)

    def grid_extents(self, shapes: Sequence[Sequence[int]]) -> tuple[int, ...] | None:
        """The grid this kernel launches for arguments of these shapes, or None where they do not
        fit the arguments or the grid depends on the device (a persistent grid's `num_sms`)."""
        dims = self.dims_of(shapes)
        try:
            return None if dims is None else tuple(evaluate(extent, dims) for extent in self.grid)
        except KeyError:
            return None

    @property
    def contract(self) -> LaunchContract:
        return LaunchContract(
            self.args, self.params, self.grid, self.divisibility, self.written, self.multicast, self.dependent_launch,
            self.whole_tiles, self.requires,
        )

    def unaligned_rows(
        self,
        shapes: Sequence[Sequence[int]],
        names: Sequence[str],
        strides: Sequence[Sequence[int] | None] | None = None,
    ) -> bool:
        """Whether one of the arguments `names` has rows (its innermost dim) that do not start on
        128-byte lines at these shapes and byte strides (in `args` order; None: contiguous
        row-major): a dim but the innermost that is stepped over by a stride that is not a
        whole number of lines. A contiguous tensor's rows start one row's bytes apart."""
        for i, (spec, shape) in enumerate(zip(self.args, shapes)):
            if spec.name not in names:
                continue
            given = strides[i] if strides is not None else None
            steps = given if given is not None else row_major(tuple(shape), BY_NAME[spec.dtype].bytes)
            if any(step % LINE_BYTES for step, extent in zip(steps[:-1], shape[:-1]) if extent > 1):
                return True
        return False

    def to_json(self) -> str:
        return json.dumps(asdict(self))

    @staticmethod
    def from_json(text: str) -> KernelABI:
        """The ABI that `to_json` wrote; ABIError says what is wrong with any other text."""
        try:
            raw = json.loads(text)
        except json.JSONDecodeError as e:
            raise ABIError(f"not JSON: {e}") from None
        args = tuple(
            ArgSpec(_get(a, "name", str), _get(a, "dtype", str), tuple(_get(a, "dims", list)))
            for a in _get(raw, "args", list, lambda a: isinstance(a, dict))
        )
        params: list[Param] = []
        for p in _get(raw, "params", list, lambda p: isinstance(p, dict)):
            kind, name = _get(p, "kind", str), _get(p, "name", str)
            if kind == "tensormap":
                box = tuple(_get(p, "box", list))
                params.append(TensorMapParam(name, _get(p, "arg", str), box, _get(p, "swizzle", int)))
            elif kind == "pointer":
                params.append(PointerParam(name, _get(p, "arg", str)))
            elif kind == "dim":
                params.append(DimParam(name, _get(p, "dim", str)))
            elif kind == "scratch":  # any JSON value here: check() takes only an expression
                params.append(ScratchParam(name, _tuplify(_get(p, "nbytes", object))))
            else:
                raise ABIError(f"parameter {name!r} has the unknown kind {kind!r}")
        divisibility = _get(raw, "divisibility", list, lambda e: isinstance(e, list) and len(e) == 2)
        abi = KernelABI(
            entry=_get(raw, "entry", str),
            args=args,
            params=tuple(params),
            grid=cast(tuple[Expr, Expr, Expr], tuple(_tuplify(e) for e in _get(raw, "grid", list))),
            block=_get(raw, "block", int),
            smem_bytes=_get(raw, "smem_bytes", int),
            divisibility=tuple((d, n) for d, n in divisibility),
            written=tuple(_get(raw, "written", list)) if "written" in raw else (),
            multicast=tuple(_get(raw, "multicast", list)) if "multicast" in raw else (),
            dependent_launch=_get(raw, "dependent_launch", bool) if "dependent_launch" in raw else False,
            whole_tiles=tuple((d, n, why) for d, n, why in _get(
                raw, "whole_tiles", list, lambda e: isinstance(e, list) and len(e) == 3)) if "whole_tiles" in raw else (),
            requires=tuple((_tuplify(e), text) for e, text in _get(
                raw, "requires", list, lambda e: isinstance(e, list) and len(e) == 2)) if "requires" in raw else (),
        )
        abi.contract.check()
        check_launch_size(abi.block, abi.smem_bytes)
        return abi


@dataclass(frozen=True)
class LaunchContract:
    """A KernelABI less what the kernel that keeps it states itself (its entry name, block size
    and shared memory): how its arguments are passed and checked, and its grid. The sm90
    dialect's `#sm90.abi` holds one."""

    args: tuple[ArgSpec, ...]
    params: tuple[Param, ...]
    grid: tuple[Expr, Expr, Expr]
    divisibility: tuple[tuple[str, int], ...] = ()
    written: tuple[str, ...] = ()
    multicast: tuple[str, ...] = ()
    dependent_launch: bool = False
    whole_tiles: tuple[tuple[str, int, str], ...] = ()
    requires: tuple[tuple[Expr, str], ...] = ()

    def abi(self, entry: str, block: int, smem_bytes: int) -> KernelABI:
        return KernelABI(
            entry, self.args, self.params, self.grid, block, smem_bytes, self.divisibility, self.written, self.multicast,
            self.dependent_launch, self.whole_tiles, self.requires,
        )

    def check(self) -> None:
        """ABIError unless the runtime can follow this contract: the params name distinct
        parameters and existing arguments and dims, the grid is 3 expressions over the dims and
        `num_sms` and `max_clusters` (a scratch size is one over the dims and `num_sms`), and so on."""
        names, dims = {a.name for a in self.args}, {d for a in self.args for d in a.dims if isinstance(d, str)}
        for arg in self.args:
            _check_each("dims", arg.dims, _is_dim)
        for param in self.params:
            if isinstance(param, TensorMapParam):
                _check_each("box", param.box, _is_positive)
                if param.swizzle not in SWIZZLES:
                    raise ABIError(f"parameter {param.name!r} has the swizzle {param.swizzle}, not 0, 32, 64 or 128")
            if isinstance(param, TensorMapParam | PointerParam) and param.arg not in names:
                raise ABIError(f"parameter {param.name!r} names no argument {param.arg!r}")
            if isinstance(param, DimParam) and param.dim not in dims:
                raise ABIError(f"parameter {param.name!r} names no dim {param.dim!r} of the arguments")
            if isinstance(param, ScratchParam) and not _is_expr(param.nbytes, dims | {"num_sms"}):
                raise ABIError(f"parameter {param.name!r} has the size {param.nbytes!r}, not an expression "
                               "over the dims and num_sms")
        if len({p.name for p in self.params}) != len(self.params):
            raise ABIError("two parameters share a name")
        if len(self.grid) != 3:
            raise ABIError(f"the grid has 3 extents, got {len(self.grid)}")
        _check_each("grid", self.grid, lambda e: _is_expr(e, dims | {"num_sms", "max_clusters"}))
        _check_each("divisibility", self.divisibility, lambda e: _is_name(e[0], dims) and _is_positive(e[1]))
        _check_each("whole_tiles", self.whole_tiles, lambda e: _is_name(e[0], dims) and _is_positive(e[1])
                    and isinstance(e[2], str) and dict(self.divisibility).get(e[0], 1) % e[1] == 0)
        _check_each("requires", self.requires, lambda e: _is_expr(e[0], dims, CONDITION_OPERATORS) and isinstance(e[1], str))
        _check_each("written", self.written, lambda a: _is_name(a, names))
        _check_each("multicast", self.multicast, lambda a: _is_name(a, names))


def check_launch_size(block: int, smem_bytes: int) -> None:
    """ABIError unless a block of `block` threads with `smem_bytes` of shared memory can launch."""
    if block <= 0 or smem_bytes < 0:
        raise ABIError(f"a block of {block} threads with {smem_bytes} bytes of shared memory")


def row_major(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    """Byte strides of a contiguous row-major array."""
    strides = []
    step = itemsize
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return tuple(reversed(strides))


DIM_LIMIT = 1 << 31
"""Every symbolic dim is below this: a kernel's index arithmetic is 32-bit signed."""
LINE_BYTES = 128
"""The GPU's cache line: rows of a tensor that are not whole lines start mid-line."""

SWIZZLES = (0, 32, 64, 128)
"""The swizzles of a tensor map, in bytes (0: none)."""


class ABIError(ValueError):
    """A text that is not the JSON of a KernelABI, or a contract the runtime cannot follow."""


def _get(raw: object, key: str, kind: type, each: Callable[[object], bool] | None = None) -> Any:
    """raw[key], which must be a `kind` (a list whose items pass `each`)."""
    if not isinstance(raw, dict) or key not in raw:
        raise ABIError(f"missing {key!r}")
    value = raw[key]
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise ABIError(f"{key!r} must be a JSON {kind.__name__}, got {value!r}")
    if each is not None:
        _check_each(key, cast(list, value), each)
    return value


def _check_each(key: str, values: Sequence[object], each: Callable[[Any], bool]) -> None:
    for item in values:
        if not each(item):
            raise ABIError(f"{key!r} holds an invalid entry: {item!r}")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_positive(value: object) -> bool:
    return _is_int(value) and value > 0  # type: ignore[operator]


def _is_dim(value: object) -> bool:
    return isinstance(value, str) or _is_positive(value)


GRID_OPERATORS = ("div", "ceildiv", "mul", "add", "sub", "min", "max")
CONDITION_OPERATORS = (*GRID_OPERATORS, "eq", "ne", "lt", "le", "gt", "ge", "and", "or", "xor")
"""The operators of a requirement: a grid's, the comparisons, and the bool operators."""


def _is_expr(value: object, names: set[str], operators: tuple[str, ...] = GRID_OPERATORS) -> bool:
    """A grid expression (or, with CONDITION_OPERATORS, a requirement): an int, a name, or
    (op, lhs, rhs) not dividing by zero."""
    if isinstance(value, tuple):
        if len(value) != 3 or value[0] not in operators or (value[0] in ("div", "ceildiv") and value[2] == 0):
            return False
        return all(_is_expr(v, names, operators) for v in value[1:])
    return _is_int(value) or _is_name(value, names)


def _is_name(value: object, names: set[str]) -> bool:
    return isinstance(value, str) and value in names


def _tuplify(expr: Expr) -> Expr:
    if isinstance(expr, list):
        return tuple(_tuplify(e) for e in expr)
    return expr


def evaluate(expr: Expr, dims: dict[str, int]) -> int:
    """The value of a grid expression or a requirement (1 where it holds, else 0) once the
    symbolic dims (and `num_sms`) are bound. A division rounds toward -inf, as the language's
    index `/` does."""
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
            return _int64(a * b)
        case "add":
            return _int64(a + b)
        case "sub":
            return _int64(a - b)
        case "min":
            return min(a, b)
        case "max":
            return max(a, b)
        case "eq" | "ne" | "lt" | "le" | "gt" | "ge":
            return int({"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[op])
        case "and":
            return int(bool(a) and bool(b))
        case "or":
            return int(bool(a) or bool(b))
        case "xor":
            return int(bool(a) != bool(b))
    raise ValueError(f"unknown grid operator {op!r}")


def _int64(value: int) -> int:
    """`value` wrapped to 64-bit two's complement, as the interpreter's index arithmetic wraps, so
    that both judge a requirement alike."""
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


def names_in(expr: Expr) -> list[str]:
    """The dims an expression reads, each once, in the order it reads them."""
    if isinstance(expr, str):
        return [expr]
    if isinstance(expr, tuple):
        return list(dict.fromkeys(name for e in expr[1:] for name in names_in(e)))
    return []


def requirement_refusal(abi: KernelABI, dims: dict[str, int], where: dict[str, str]) -> str | None:
    """Why a launch at these `dims` (each bound from `where`) breaks one of the kernel's
    requirements, or None."""
    for condition, text in abi.requires:
        try:
            holds = evaluate(condition, dims)
        except ZeroDivisionError:
            holds = 0  # as the interpreter, which refuses an index division by zero
        if not holds:
            bound = ", ".join(f"{d} = {dims[d]} (from {where[d]})" for d in names_in(condition))
            return f"kernel {abi.entry} requires {text}, and the arguments give {bound}"
    return None
