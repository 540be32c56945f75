"""The reference interpreter: runs a `tile.kernel` over its whole grid with numpy.

It is the oracle every pass is checked against (`tkc run --interpret`, `--bisect`), so it
follows the tile dialect's docstrings literally and ignores every decision attribute.

Execution is vectorised over the grid: each SSA value holds numpy arrays whose leading axis is
the block (G blocks at once). Index math is int64 of shape () when it is the same for every
block or (G,) when it differs; the elements of a tile are f32 of shape (G, rows, cols) (vectors
(G, n)), or (1, ...) while they are still the same in every block (a `tile.fill`). Values of
low-precision type are kept as f32 that hold exactly the rounded value, so arithmetic is f32 and
rounding happens wherever an op produces a bf16/f16/fp8 value (loads of low-precision tensors,
converts, element-wise ops on low-precision tiles).

Control flow that differs between blocks runs under an *active* mask of shape (G,): an `scf.for`
runs to the largest trip count and keeps the loop-carried values of finished blocks; an `scf.if`
with results runs both sides (a side that no block takes under no active block) and selects per
block. Stores write only active blocks.

Tiles may run past the end of a tensor (docs/language.md, "Tiles past the end of a tensor").
Every tile and vector value is a `Tile`: its elements and, per axis, which indices are valid
(the others are *padding*). A load reads zeros outside the tensor and marks the indices past its
end padding (along the dims the GPU masks: `_box`); element-wise ops take the union of their operands' padding, reductions, cumulative
sums and mma skip it (count it as their identity), an scf.if result has the padding of both branches and a loop-carried value that of every
value that flowed in, and a store writes only the valid elements that lie inside the tensor (as
TMA clips). Blocks that a mask switched off may compute boxes anywhere. Blocks have no order on
the GPU, so an element that two blocks store, or that one block loads and another stores (in
either order), is a race: an error naming both blocks. A `store_add` (tile.store reduce add) adds instead, in
block order here, rounding each sum to the tensor's dtype; adds of several blocks to one element
commute and are no race, but an add and another block's load or store of the element are.

Max and min follow PTX `max.f32`/`min.f32` (a NaN operand loses to a number); fp8 conversion
saturates like `cvt.rn.satfinite`; everything else is IEEE f32 (exp2(-inf) = 0, x/0 = inf).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
import math
from functools import reduce
from math import prod
from typing import Any, cast

import numpy as np
import numpy.typing as npt
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import (
    BFloat16Type,
    DictionaryAttr,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from tkc import dtypes
from tkc.abi import rounded_down_tail, unmasked_tail
from tkc.diagnostics import CompilerDefect, TkError, error_at, location_of
from tkc.dialects import tile


def numpy_dtype(element_type: Attribute) -> np.dtype:
    """The numpy dtype that stores a tensor of `element_type` (ml_dtypes for bf16 and fp8)."""
    dtype = dtypes.of_type(element_type)
    if dtype is None:
        raise TkError(f"the interpreter has no numpy dtype for {element_type}")
    return dtype.numpy_dtype()


def round_to(x: npt.ArrayLike, element_type: Attribute) -> np.ndarray:
    """`x` (f32) rounded to nearest even in `element_type`, returned as f32."""
    if isinstance(element_type, Float32Type):
        return np.asarray(x, np.float32)
    dtype = dtypes.of_type(element_type)
    if dtype is not None and dtype.saturates_at is not None:  # cvt.rn.satfinite (fp8)
        x = np.clip(x, -dtype.saturates_at, dtype.saturates_at)
    with np.errstate(over="ignore"):  # overflow to ±inf is the f16 conversion's defined result
        return np.asarray(x, np.float32).astype(numpy_dtype(element_type)).astype(np.float32)


Valid = tuple[np.ndarray, ...]
"""Per axis of a tile (rows, cols) or a vector (one), which of its indices are valid, not
padding: bool of shape (G, extent), or (1, extent) while it is the same in every block."""


@dataclass(frozen=True)
class Tile:
    """A tile or vector value: `values` of shape (G or 1, *shape) and per axis `valid` indices.
    Element (r, c) is padding when row r or column c is."""

    values: np.ndarray
    valid: Valid

    def elements(self) -> np.ndarray:
        """Per element whether it is valid, broadcastable to `values`."""
        return _elements(self.valid)


Value = np.ndarray | Tile
"""What an SSA value holds: index, bool and f32 scalars are arrays of shape () or (G,) (or
numpy scalars, as numpy returns them)."""


def _note_blocks(seen: dict[SSAValue, tuple[np.ndarray, np.ndarray]], tensor: SSAValue, size: int,
                 elements: np.ndarray, blocks: np.ndarray) -> None:
    """Record that `blocks` touched `elements` of `tensor`: per element a first block and, where
    another one came, that one (enough to tell whether a block other than a given one did)."""
    first, second = seen.setdefault(tensor, (np.full(size, -1, np.int32), np.full(size, -1, np.int32)))
    unset = first[elements] == -1
    first[elements[unset]] = blocks[unset]
    differ = first[elements] != blocks
    second[elements[differ]] = blocks[differ]


def _elements(valid: Valid) -> np.ndarray:
    """Per element of a tile or vector: valid along every axis."""
    if len(valid) == 1:
        return valid[0]
    rows, cols = valid
    return rows[:, :, None] & cols[:, None, :]


def _no_padding(shape: Sequence[int]) -> Valid:
    return tuple(np.ones((1, extent), np.bool_) for extent in shape)


def _union(*valids: Valid) -> Valid:
    """Per axis, the padding of any of the operands."""
    return tuple(reduce(np.logical_and, axis) for axis in zip(*valids, strict=True))


def _lift(x: np.ndarray, rank: int) -> np.ndarray:
    """A per-block scalar (shape () or (G,)) shaped to broadcast against rank-`rank` tiles."""
    x = np.asarray(x)
    return x if x.ndim == 0 else x.reshape(x.shape + (1,) * rank)


def _select(cond: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per block: `a` where `cond`, else `b` (`cond` has shape () or (G,))."""
    a, b = np.asarray(a), np.asarray(b)
    return np.where(_lift(cond, max(a.ndim, b.ndim, 1) - 1), a, b)


def _if_join(cond: np.ndarray, then: Value, other: Value) -> Value:
    """An scf.if result per block; a tile's padding is the union of both branches'."""
    if isinstance(then, Tile) and isinstance(other, Tile):
        return Tile(_select(cond, then.values, other.values), _union(then.valid, other.valid))
    assert not isinstance(then, Tile) and not isinstance(other, Tile)
    return _select(cond, then, other)


def _carry(running: np.ndarray | None, new: Value, old: Value) -> Value:
    """A loop-carried value after an iteration that the `running` blocks ran (None: all): their
    new value, with the padding of every value that has flowed in so far; the others keep theirs."""
    if isinstance(new, Tile) and isinstance(old, Tile):
        joined = _union(new.valid, old.valid)
        if running is None:
            return Tile(new.values, joined)
        return Tile(
            _select(running, new.values, old.values),
            tuple(_select(running, j, o) for j, o in zip(joined, old.valid, strict=True)),
        )
    assert not isinstance(new, Tile) and not isinstance(old, Tile)
    return new if running is None else _select(running, new, old)


def _trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = np.abs(a) // np.where(b == 0, 1, np.abs(b))
    return np.where((a < 0) != (b < 0), -q, q)


def _trunc_rem(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a - _trunc_div(a, b) * b


def _reciprocal(divisor: np.ndarray) -> np.ndarray:
    """1 / divisor rounded to f32 (the GPU's rcp.rn.f32): a tile divided by a run-time scalar or
    a vector is multiplied by it, so a subnormal divisor gives ±inf, as on the GPU."""
    with np.errstate(divide="ignore", over="ignore"):
        return np.float32(1) / np.asarray(divisor, np.float32)


def _max_number(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """max as the GPU's max.f32 / max.bf16x2 compute it (measured on an H100): a NaN operand gives
    the other one, and -0 < +0, so max(-0, +0) is +0 in either order (numpy's fmax returns
    either zero)."""
    result = np.fmax(a, b)
    zeros = (a == 0) & (b == 0)
    return np.where(zeros & ~(np.signbit(a) & np.signbit(b)), np.zeros_like(result), result)


def _min_number(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """min as the GPU computes it: NaN-ignoring, min(-0, +0) = -0 in either order."""
    result = np.fmin(a, b)
    zeros = (a == 0) & (b == 0)
    return np.where(zeros & (np.signbit(a) | np.signbit(b)), -np.zeros_like(result), result)


def _reduce_max(values: np.ndarray, axis: int) -> np.ndarray:
    """_max_number over an axis: +0 where the zeros it found include a +0."""
    result = np.fmax.reduce(values, axis=axis)
    positive_zero = ((values == 0) & ~np.signbit(values)).any(axis=axis)
    return np.where((result == 0) & positive_zero, np.zeros_like(result), result)


def _reduce_min(values: np.ndarray, axis: int) -> np.ndarray:
    """_min_number over an axis: -0 where the zeros it found include a -0."""
    result = np.fmin.reduce(values, axis=axis)
    negative_zero = ((values == 0) & np.signbit(values)).any(axis=axis)
    return np.where((result == 0) & negative_zero, -np.zeros_like(result), result)


_ARITH_BINARY: dict[str, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    "arith.addi": np.add,
    "arith.subi": np.subtract,
    "arith.muli": np.multiply,
    "arith.divsi": _trunc_div,
    "arith.divui": np.floor_divide,
    "arith.floordivsi": np.floor_divide,
    "arith.ceildivsi": lambda a, b: -np.floor_divide(-a, b),
    "arith.ceildivui": lambda a, b: -np.floor_divide(-a, b),
    "arith.remsi": _trunc_rem,
    "arith.remui": np.remainder,
    "arith.andi": np.bitwise_and,
    "arith.ori": np.bitwise_or,
    "arith.xori": np.bitwise_xor,
    "arith.shli": np.left_shift,
    "arith.shrsi": np.right_shift,
    "arith.shrui": np.right_shift,
    "arith.maxsi": np.maximum,
    "arith.minsi": np.minimum,
    "arith.maxui": np.maximum,
    "arith.minui": np.minimum,
    "arith.addf": np.add,
    "arith.subf": np.subtract,
    "arith.mulf": np.multiply,
    "arith.divf": np.divide,
    "arith.maximumf": np.maximum,
    "arith.minimumf": np.minimum,
    "arith.maxnumf": _max_number,
    "arith.minnumf": _min_number,
    "math.powf": np.power,
    "math.atan2": np.arctan2,
    "math.copysign": np.copysign,
}

_FLOAT_UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "arith.negf": np.negative,
    "math.absf": np.abs,
    "math.sqrt": np.sqrt,
    "math.rsqrt": lambda x: 1 / np.sqrt(x),
    "math.exp": np.exp,
    "math.exp2": np.exp2,
    "math.log": np.log,
    "math.log2": np.log2,
    "math.log10": np.log10,
    "math.tanh": np.tanh,
    "math.sin": np.sin,
    "math.cos": np.cos,
    "math.floor": np.floor,
    "math.ceil": np.ceil,
    "math.roundeven": np.rint,
    "math.trunc": np.trunc,
}

_ERFC = np.frompyfunc(math.erfc, 1, 1)


def _gelu_exact(x: np.ndarray) -> np.ndarray:
    """x/2 erfc(-x/sqrt(2)) in f64, rounded once to f32: the exact GELU (numpy has no erf)."""
    wide = np.asarray(x, np.float64)
    erfc = np.asarray(_ERFC(-wide / math.sqrt(2.0)), np.float64)
    return (0.5 * wide * erfc).astype(np.float32)


# Tile ops compute in f32 like the GPU; max/min follow PTX max.f32 (a NaN operand loses).
_TILE_UNARY: dict[tile.UnaryFn, Callable[[np.ndarray], np.ndarray]] = {
    tile.UnaryFn.EXP: np.exp,
    tile.UnaryFn.EXP2: np.exp2,
    tile.UnaryFn.LOG: np.log,
    tile.UnaryFn.LOG2: np.log2,
    tile.UnaryFn.SQRT: np.sqrt,
    tile.UnaryFn.RSQRT: lambda x: np.float32(1) / np.sqrt(x),
    tile.UnaryFn.ABS: np.abs,
    tile.UnaryFn.NEG: np.negative,
    tile.UnaryFn.RELU: lambda x: np.fmax(x, np.float32(0)),
    tile.UnaryFn.TANH: np.tanh,
    tile.UnaryFn.SIGMOID: lambda x: np.float32(0.5) + np.float32(0.5) * np.tanh(np.float32(0.5) * x),
    tile.UnaryFn.SILU: lambda x: x * (np.float32(0.5) + np.float32(0.5) * np.tanh(np.float32(0.5) * x)),
    tile.UnaryFn.GELU_TANH: lambda x: np.float32(0.5) * x * (
        np.float32(1) + np.tanh(np.float32(tile.GELU_SCALE) * (x + np.float32(tile.GELU_CUBIC) * x * x * x))
    ),
    tile.UnaryFn.SOFTPLUS: lambda x: np.fmax(x, np.float32(0)) + np.log1p(np.exp(-np.abs(x))),
    tile.UnaryFn.GELU: lambda x: _gelu_exact(x),
    tile.UnaryFn.SIN: np.sin,
    tile.UnaryFn.COS: np.cos,
    tile.UnaryFn.NOT: lambda x: (x == 0).astype(np.float32),
}


_TILE_BINARY: dict[tile.BinaryFn, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    tile.BinaryFn.ADD: np.add,
    tile.BinaryFn.SUB: np.subtract,
    tile.BinaryFn.MUL: np.multiply,
    tile.BinaryFn.DIV: np.divide,
    tile.BinaryFn.MAX: _max_number,
    tile.BinaryFn.MIN: _min_number,
    tile.BinaryFn.LT: np.less,
    tile.BinaryFn.LE: np.less_equal,
    tile.BinaryFn.GT: np.greater,
    tile.BinaryFn.GE: np.greater_equal,
    tile.BinaryFn.EQ: np.equal,
    tile.BinaryFn.NE: np.not_equal,
    tile.BinaryFn.AND: lambda x, y: (x != 0) & (y != 0),
    tile.BinaryFn.OR: lambda x, y: (x != 0) | (y != 0),
}
"""Conditions (comparisons, and, or) give bools, which the callers' f32 conversion makes 1 and 0."""

EXACT_POSITIONS = 2**24
"""Below this every integer is an f32, so a position tile is exact (docs/language.md)."""

_TILE_REDUCE: dict[tile.ReduceFn, tuple[Callable[..., np.ndarray], np.float32]] = {
    # each with its identity, which stands in for the padding a reduction skips
    tile.ReduceFn.MAX: (_reduce_max, np.float32(-np.inf)),
    tile.ReduceFn.MIN: (_reduce_min, np.float32(np.inf)),
    tile.ReduceFn.SUM: (np.add.reduce, np.float32(0)),
}

_CMPI = {
    0: np.equal,
    1: np.not_equal,
    2: np.less,
    3: np.less_equal,
    4: np.greater,
    5: np.greater_equal,
    6: np.less,
    7: np.less_equal,
    8: np.greater,
    9: np.greater_equal,
}


def _cmpf(predicate: int, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """arith.cmpf: 1-6 ordered (false on NaN), 8-13 unordered (true on NaN), 7 ord, 14 uno."""
    unordered = np.isnan(a) | np.isnan(b)
    compare = (np.equal, np.greater, np.greater_equal, np.less, np.less_equal, np.not_equal)  # predicates 1-6
    if predicate == 0:
        return np.zeros_like(unordered)
    if predicate == 15:
        return np.ones_like(unordered)
    if predicate == 7:
        return ~unordered
    if predicate == 14:
        return unordered
    if predicate <= 6:
        return compare[predicate - 1](a, b) & ~unordered
    return compare[predicate - 8](a, b) | unordered


def _scalar_dtype(type_: Attribute) -> type:
    if isinstance(type_, IntegerType) and type_.width.data == 1:
        return np.bool_
    if isinstance(type_, Float64Type):
        return np.float64
    if isinstance(type_, Float32Type | Float16Type | BFloat16Type):
        return np.float32
    return np.int64


Progress = Callable[[int, int, str], None]
"""Told (done, total, what) after each iteration of a loop of the kernel's body (tkc.progress)."""


class _Machine:
    """The state of one interpreted launch: bound values, global tensors, the grid."""

    def __init__(self, kernel: tile.KernelOp, tensors: dict[SSAValue, np.ndarray], progress: Progress | None = None):
        self.kernel = kernel
        self.tensors = tensors
        self.progress = progress
        self.env: dict[SSAValue, Value] = {}
        self.block_ids: list[np.ndarray] | None = None
        self.num_blocks = 0
        self.writers: dict[SSAValue, np.ndarray] = {}
        """Per stored tensor, the block that last wrote each element (-1: none): two blocks
        writing one element is a race on the GPU, so the interpreter refuses it."""
        self.adders: dict[SSAValue, tuple[np.ndarray, np.ndarray]] = {}
        """Per tensor that store_add adds to, for each element a block that added to it and
        another one (-1: none): adds of several blocks commute, but a load or store of the
        element by any other block is a race."""
        self.stored = {op.tensor for op in kernel.walk() if isinstance(op, tile.StoreOp)}
        self.retained: dict[tuple[int, int], Tile] = {}
        """What tile.retain kept, per (buffer, slot): each block's tile."""
        self.readers: dict[SSAValue, tuple[np.ndarray, np.ndarray]] = {}
        """Per tensor the kernel stores, for each element a block that loaded it and another one
        (-1: none): a store of the element by any other block is a race, even after the loads."""

    def scalar_of(self, value: SSAValue) -> np.ndarray:
        held = self.env[value]
        assert not isinstance(held, Tile), f"{value} holds a tile"
        return held

    def tile_of(self, value: SSAValue) -> Tile:
        held = self.env[value]
        assert isinstance(held, Tile), f"{value} holds a scalar"
        return held

    # ------------------------------------------------------------------ driving

    def run(self) -> None:
        self._check_requirements()
        self._set_grid()
        self.run_block(self.kernel.body.block, None)

    def _evaluate_first(self, values: list[SSAValue]) -> None:
        """Execute the kernel-level ops that compute `values`, in program order, before the rest."""
        block = self.kernel.body.block
        needed: set[Operation] = set()
        pending = list(values)
        while pending:
            owner = pending.pop().owner
            if isinstance(owner, Operation) and owner not in needed:
                needed.add(owner)
                pending.extend(owner.operands)
        for op in block.ops:
            if op in needed:
                self.execute(op, None)

    def _check_requirements(self) -> None:
        """Refuse dims that break a `require` before anything runs, as the runtime refuses the
        launch (a division by zero in the condition breaks it too)."""
        for op in self.kernel.body.block.ops:
            if not isinstance(op, tile.RequireOp):
                continue
            with np.errstate(divide="raise"):
                try:
                    self._evaluate_first([op.condition])
                    holds = bool(self.scalar_of(op.condition))
                except FloatingPointError:
                    holds = False
            if not holds:
                bound = ", ".join(f"{name} = {value} (from {self._bound_from(name)})"
                                  for name, value in self._dims_read(op.condition).items())
                raise error_at(op, f"kernel {self.kernel.sym_name.data} requires {op.text.data}, and the arguments "
                                   f"give {bound}")

    def _bound_from(self, dim: str) -> str:
        """The argument and axis a dim is bound from at launch: the first that has it, as the
        runtime binds it (tkc.runtime.launch.bind)."""
        for name, arg in zip(self.kernel.arg_names, self.kernel.body.block.args, strict=True):
            if isinstance(arg.type, tile.GlobalType):
                for axis, d in enumerate(arg.type.get_dims()):
                    if str(d) == dim:
                        return f"{name} (dim {axis})"
        raise CompilerDefect(f"dim {dim} is no argument's")

    def _dims_read(self, value: SSAValue) -> dict[str, int]:
        """The dims `value` is computed from, in the order the expression reads them."""
        owner = value.owner
        if isinstance(owner, tile.DimOp):
            dim = cast(tile.GlobalType, owner.tensor.type).get_dims()[owner.axis.value.data]
            return {str(dim): int(self.scalar_of(value))}
        read: dict[str, int] = {}
        for operand in owner.operands if isinstance(owner, Operation) else ():
            read |= self._dims_read(operand)
        return read

    def _set_grid(self) -> None:
        """Evaluate the grid extents first: block ids may be read before `tile.grid` in program order."""
        grid = next(op for op in self.kernel.body.block.ops if isinstance(op, tile.GridOp))
        self._evaluate_first(list(grid.extents))
        extents = []
        for value in grid.extents:
            extent = self.scalar_of(value)
            if extent.ndim != 0:
                raise error_at(grid, "the grid extents must be the same for every block")
            if extent < 0:
                raise error_at(grid, f"grid extent {int(extent)} is negative")
            extents.append(int(extent))
        self.num_blocks = prod(extents)
        self.block_ids = [ids.reshape(-1).astype(np.int64) for ids in np.indices(extents)]

    def run_block(self, block: Block, active: np.ndarray | None) -> list[Value]:
        """Execute `block`'s ops under `active` ((G,) bool, None = every block); returns what its
        terminator passes on."""
        for op in block.ops:
            if op.name in ("scf.yield", "tile.return"):
                return [self.env[v] for v in op.operands]
            self.execute(op, active)
        return []

    def execute(self, op: Operation, active: np.ndarray | None) -> None:
        handler = _HANDLERS.get(op.name)
        results: Sequence[Value]
        if handler is not None:
            results = handler(self, op, active)
        elif op.name in _ARITH_BINARY:
            a, b = (self.scalar_of(v) for v in op.operands)
            results = [_ARITH_BINARY[op.name](a, b).astype(_scalar_dtype(op.results[0].type))]
        elif op.name in _FLOAT_UNARY:
            results = [_FLOAT_UNARY[op.name](self.scalar_of(op.operands[0]))]
        else:
            raise error_at(op, f"the interpreter cannot execute '{op.name}'")
        for value, result in zip(op.results, results, strict=True):
            self.env[value] = result

    # ------------------------------------------------------------------ arith / scf

    def _constant(self, op: Operation, active: np.ndarray | None) -> list[Value]:
        value = op.properties.get("value", op.attributes.get("value"))
        if isinstance(value, IntegerAttr | FloatAttr):
            return [np.asarray(value.value.data, _scalar_dtype(op.results[0].type))]
        raise error_at(op, f"the interpreter supports scalar constants only, got {value}")

    def _cmpi(self, op: Operation, active: np.ndarray | None) -> list[Value]:
        a, b = (self.scalar_of(v) for v in op.operands)
        predicate = op.properties["predicate"]
        assert isinstance(predicate, IntegerAttr)
        return [_CMPI[predicate.value.data](a, b)]

    def _cmpf(self, op: Operation, active: np.ndarray | None) -> list[Value]:
        a, b = (self.scalar_of(v) for v in op.operands)
        predicate = op.properties["predicate"]
        assert isinstance(predicate, IntegerAttr)
        return [_cmpf(predicate.value.data, a, b)]

    def _arith_select(self, op: Operation, active: np.ndarray | None) -> list[Value]:
        cond, a, b = (self.scalar_of(v) for v in op.operands)
        return [_select(cond, a, b)]

    def _to_float(self, op: Operation, active: np.ndarray | None) -> list[Value]:
        return [round_to(self.scalar_of(op.operands[0]).astype(np.float32), op.results[0].type)]

    def _unsigned_to_float(self, op: Operation, active: np.ndarray | None) -> list[Value]:
        """uitofp reads its operand's bits as unsigned (a negative i64 is near 2**64), as the GPU's cvt.u64 does."""
        x = self.scalar_of(op.operands[0])
        width = op.operands[0].type.width.data if isinstance(op.operands[0].type, IntegerType) else 64
        unsigned = x.astype(np.int64).astype(np.uint64) & np.uint64((1 << width) - 1) if width < 64 else x.astype(np.uint64)
        return [round_to(unsigned.astype(np.float32), op.results[0].type)]

    def _int_cast(self, op: Operation, active: np.ndarray | None) -> list[Value]:
        """Integers are int64 (i1 is bool): only i1's sign extension and truncation to i1 differ."""
        x = self.scalar_of(op.operands[0])
        if op.name == "arith.extsi" and x.dtype == np.bool_:
            return [-x.astype(np.int64)]
        if _scalar_dtype(op.results[0].type) is np.bool_:
            return [(x & 1).astype(np.bool_)]
        return [x.astype(np.int64)]

    def _to_int(self, op: Operation, active: np.ndarray | None) -> list[Value]:
        return [np.trunc(self.scalar_of(op.operands[0])).astype(np.int64)]

    def _fma(self, op: Operation, active: np.ndarray | None) -> list[Value]:
        a, b, c = (self.scalar_of(v) for v in op.operands)
        return [(a * b + c).astype(np.float32)]

    def _for(self, op: Operation, active: np.ndarray | None) -> list[Value]:
        assert isinstance(op, scf.ForOp)
        lb, ub, step = (self.scalar_of(v) for v in (op.lb, op.ub, op.step))
        if np.any(step <= 0):
            raise error_at(op, "scf.for needs a positive step")
        trips = np.maximum(-((lb - ub) // step), 0)
        if active is not None and trips.ndim:
            trips = np.where(active, trips, 0)
        body = op.body.block
        carried = [self.env[v] for v in op.iter_args]
        total = int(trips.max(initial=0))
        # The grid runs at once, so the kernel's own loops are where the time goes: their
        # iterations are the progress there is to show.
        progress = self.progress if op.parent_block() is self.kernel.body.block else None
        _, line, _ = location_of(op)
        what = f"interpreting @{self.kernel.sym_name.data}: iterations of the loop" + (f" at line {line}" if line else "")
        for it in range(total):
            # Blocks past their own trip count (trips is 0 for inactive ones) keep their values.
            running = it < trips if trips.ndim and it >= trips.min() else active
            self.env[body.args[0]] = lb + it * step
            for arg, value in zip(body.args[1:], carried, strict=True):
                self.env[arg] = value
            new = self.run_block(body, running)
            carried = [_carry(running, n, c) for n, c in zip(new, carried, strict=True)]
            if progress is not None:
                progress(it + 1, total, what)
        return carried

    def _if(self, op: Operation, active: np.ndarray | None) -> list[Value]:
        """A per-block condition runs each branch under the blocks that take it. An if with
        results runs both branches even where no block takes one (under no active block: it
        stores nothing), since a result's padding is the union of both branches'."""
        cond = self.scalar_of(op.operands[0])
        then_block = op.regions[0].blocks.first
        else_block = op.regions[1].blocks.first
        assert then_block is not None
        everyone = np.ones(self.num_blocks, np.bool_) if active is None else active
        taken, skipped = everyone & cond, everyone & ~cond
        if not op.results:
            for block, blocks in ((then_block, taken), (else_block, skipped)):
                if block is not None and blocks.any():
                    self.run_block(block, active if np.array_equal(blocks, everyone) else blocks)
            return []
        assert else_block is not None
        then_values = self.run_block(then_block, active if np.array_equal(taken, everyone) else taken)
        else_values = self.run_block(else_block, active if np.array_equal(skipped, everyone) else skipped)
        return [_if_join(cond, t, e) for t, e in zip(then_values, else_values, strict=True)]

    # ------------------------------------------------------------------ tile: structure

    def _dim(self, op: tile.DimOp, active: np.ndarray | None) -> list[Value]:
        return [np.asarray(self.tensors[op.tensor].shape[op.axis.value.data], np.int64)]

    def _grid(self, op: tile.GridOp, active: np.ndarray | None) -> list[Value]:
        return []

    def _require(self, op: tile.RequireOp, active: np.ndarray | None) -> list[Value]:
        return []  # checked before the kernel ran (_check_requirements)

    def _load_scalar(self, op: tile.LoadScalarOp, active: np.ndarray | None) -> list[Value]:
        """Each block's element of the i32 tensor, as an index, or of the f32 tensor, as an f32
        scalar; an index outside the tensor, or a negative value read as an index (an index is
        unsigned), is an error in the blocks that run the load."""
        tensor = self.tensors[op.tensor]
        indices = list(np.broadcast_arrays(*(np.asarray(self.scalar_of(v), np.int64) for v in op.indices)))
        if active is not None:
            # coordinates every block shares (a loop counter) under an if some blocks skip: per block
            shape = np.broadcast_shapes(indices[0].shape, active.shape)
            indices = [np.broadcast_to(i, shape) for i in indices]
        runs = np.ones(indices[0].shape, bool) if active is None else np.broadcast_to(active, indices[0].shape)
        name = self.kernel.arg_names[self.kernel.body.block.args.index(op.tensor)]
        dtype = "f32" if isinstance(op.result.type, Float32Type) else "i32"
        outside = runs & np.any([(i < 0) | (i >= n) for i, n in zip(indices, tensor.shape)], axis=0)
        if outside.any():
            at = tuple(int(i[outside][0]) if i.ndim else int(i) for i in indices)
            raise error_at(op, f"load {name}{list(at)} : {dtype} reads outside {name}, of shape {list(tensor.shape)}")
        clipped = [np.clip(i, 0, n - 1) for i, n in zip(indices, tensor.shape)]
        values = tensor[tuple(clipped)]
        if dtype == "f32":
            return [np.asarray(values, np.float32)]
        negative = runs & (values < 0)
        if negative.any():
            raise error_at(op, f"load {name}[...] : i32 read {int(values[negative].flat[0])}: a value an i32 load reads "
                               f"must not be negative, as the compiler takes it for a coordinate (indices computed "
                               f"in the kernel may be); mark an entry with a value past the valid ones (a page "
                               f"table's page count) and test for it, or read the tensor as f32")
        return [np.asarray(values, np.int64)]

    def _retain(self, op: tile.RetainOp, active: np.ndarray | None) -> list[Value]:
        """Keep the active blocks' tile in their slot of the buffer (the others keep theirs)."""
        value, slots = self.tile_of(op.value), np.broadcast_to(self.scalar_of(op.slot), (self.num_blocks,))
        running = np.ones(self.num_blocks, np.bool_) if active is None else active
        for slot in np.unique(slots[running]):
            if not 0 <= slot < op.slots.value.data:
                raise error_at(op, f"tile.retain into slot {slot} of a buffer of {op.slots.value.data}")
            key = (op.buffer.value.data, int(slot))
            held = self.retained.get(key, value)
            self.retained[key] = cast(Tile, _if_join(running & (slots == slot), value, held))
        return []

    def _recall(self, op: tile.RecallOp, active: np.ndarray | None) -> list[Value]:
        """Each block's tile from its slot (zeros, without padding, from a slot nothing kept: an
        scf.if runs both branches here, so a recall runs where its branch is not taken too)."""
        t = _shaped(op.result)
        slots = np.broadcast_to(self.scalar_of(op.slot), (self.num_blocks,))
        result: Value = Tile(np.zeros((1, *t.get_shape()), np.float32), _no_padding(t.get_shape()))
        for slot in np.unique(slots):
            held = self.retained.get((op.buffer.value.data, int(slot)))
            if held is not None:
                result = _if_join(slots == slot, held, result)
        return [result]

    def _fence(self, op: tile.FenceOp, active: np.ndarray | None) -> list[Value]:
        return []  # a block runs in program order here: its stores are already visible

    def _block_id(self, op: tile.BlockIdOp, active: np.ndarray | None) -> list[Value]:
        assert self.block_ids is not None
        return [self.block_ids[op.axis.value.data]]

    # ------------------------------------------------------------------ tile: memory

    def _box(self, op: tile.LoadOp | tile.StoreOp, tile_shape: Sequence[int]) -> tuple[list[np.ndarray], Valid, Valid]:
        """Per-block element indices of the box at the op's coordinates (tiles, or elements along
        its `elem` axes), each broadcastable to (G, *tile_shape) and clipped into the tensor; per
        tile axis which indices lie inside the tensor (none, in a block whose box lies outside
        along a leading dimension): what a load reads and a store writes; and per tile axis which
        indices a load leaves valid, not padding. Padding only ends an axis: an index past the
        end (or an `elem(x, end)` end) along an `elem` axis or a dim with a partial last tile, as
        the GPU's masks cut it (tile-mask-tails). An index before the start reads 0 and is valid
        (TMA reads zeros there too), and so is every index along a leading dim and a dim of whole
        tiles: a box wholly outside one is an error where the access runs (`_check_overlaps`; the
        GPU traps), and where it does not (a branch no block takes) it adds no padding."""
        tensor_shape = self.tensors[op.tensor].shape
        g, t = self.num_blocks, len(tile_shape)
        leading = len(tensor_shape) - t
        indices, inside, valid, lead_inside = [], [], [], np.ones((g, 1), np.bool_)
        scales = tile.coord_scales(op)
        ends = tile.element_ends(op)
        elements = tile.element_axes(op)
        for axis, size in enumerate(tensor_shape):
            coord = np.broadcast_to(self.scalar_of(op.coords[axis]), (g,)).reshape(g, 1)
            if axis < leading:
                lead_inside = lead_inside & (coord >= 0) & (coord < size)
                index = coord.reshape((g,) + (1,) * t)
            else:
                extent = tile_shape[axis - leading]
                line = coord * scales[axis] + np.arange(extent, dtype=np.int64)
                end = size
                if axis in ends:  # elem(x, end): the access sees the dim end at `end`
                    end = np.minimum(size, np.broadcast_to(self.scalar_of(ends[axis]), (g,)).reshape(g, 1))
                inside.append((line >= 0) & (line < end))
                whole = axis not in elements and size % extent == 0
                valid.append(np.ones((1, extent), np.bool_) if whole else np.broadcast_to(line < end, (g, extent)))
                span = [1] * t
                span[axis - leading] = extent
                index = line.reshape((g, *span))
            indices.append(np.clip(index, 0, size - 1))
        return indices, tuple(axis & lead_inside for axis in inside), tuple(valid)

    def _check_overlaps(self, op: tile.LoadOp | tile.StoreOp, active: np.ndarray | None) -> None:
        """A tile at tile coordinates (or a leading index) wholly past the end of a dim that is a
        whole number of its tiles is an error in the blocks that run the access: the GPU backend
        compiles such a dim without masks (`/` counts, the `@whole_tiles` variant), which is
        exact for every tile that reaches into the tensor but would read zeros from, and store, a
        box wholly outside it. Along a dim with a partial last tile the GPU masks every tile, so
        a box wholly past it is padding there as here; a tile at an element coordinate may lie
        anywhere (its tails are always masked). A load tile-pipeline hoisted out of a loop
        (`speculative`) runs where the loop does not too, and reads zeros there."""
        if tile.SPECULATIVE in op.attributes:
            return
        shape = self.tensors[op.tensor].shape
        value = op.result if isinstance(op, tile.LoadOp) else op.value
        tile_shape = _shaped(value).get_shape()
        extents = (1,) * (len(shape) - len(tile_shape)) + tuple(tile_shape)
        elements = tile.element_axes(op)
        for axis, (size, scale, extent) in enumerate(zip(shape, tile.coord_scales(op), extents)):
            if axis in elements or size % extent:
                continue
            coord = np.broadcast_to(self.scalar_of(op.coords[axis]), (self.num_blocks,))
            outside = (coord < 0) | (coord * scale >= size)
            if active is not None:
                outside = outside & np.broadcast_to(active.reshape(-1), outside.shape)
            if outside.any():
                name = self.kernel.arg_names[self.kernel.body.block.args.index(op.tensor)]
                unit = "index" if scale == 1 else f"tile coordinate ({scale}-element tiles)"
                raise error_at(op, f"{'load' if isinstance(op, tile.LoadOp) else op.statement} of {name}: {unit} "
                                   f"{int(coord[outside][0])} along dim {axis} lies wholly "
                                   f"{'before its start' if coord[outside][0] < 0 else 'past its end'} "
                                   f"({size} elements: {size // extent} whole tiles, which the GPU "
                                   f"{'reads' if isinstance(op, tile.LoadOp) else 'writes'} without "
                                   f"masks); guard the access with an if, or count its coordinate in elements "
                                   f"with elem(...)")

    @staticmethod
    def _first_active(where: np.ndarray, active: np.ndarray | None) -> int | None:
        """The first block (flat index) where `where` (one bool per block) holds among the
        `active` ones, or None."""
        if active is not None:
            where = where & np.broadcast_to(active.reshape(-1), where.shape)
        return int(np.flatnonzero(where)[0]) if where.any() else None

    def _check_tma_start(self, op: tile.LoadOp | tile.StoreOp, active: np.ndarray | None) -> None:
        """An `elem(x)` coordinate along a tensor's innermost dim of a tile's load or store must
        start on a TMA_GLOBAL_ALIGN-byte boundary: the GPU copies the box with TMA, which stops
        the kernel (an illegal instruction) at any other start. The planner refuses a start the
        kernel alone decides; one a dim or a table entry reaches is checked here, as it runs. A
        vector may start anywhere (the GPU backend loads it from the boundary below its start
        or refuses it at compile time)."""
        if isinstance(op.result.type if isinstance(op, tile.LoadOp) else op.value.type,
                      tile.RegisterVectorType | tile.SharedVectorType):
            return  # a vector starts anywhere: stored element by element, loaded from the boundary below
        if (element_start := tile.innermost_element_start(op)) is None:
            return
        coord, line = element_start
        start = np.broadcast_to(self.scalar_of(coord), (self.num_blocks,))
        if (block := self._first_active(start % line != 0, active)) is not None:
            name = self.kernel.arg_names[self.kernel.body.block.args.index(op.tensor)]
            raise error_at(op, f"{'load' if isinstance(op, tile.LoadOp) else op.statement} of {name}: block {self._block_name(block)} "
                               f"starts at element {int(start[block])} of {name}'s innermost dim (elem(...)), and "
                               f"TMA starts a box there only on a {tile.TMA_GLOBAL_ALIGN}-byte boundary, a multiple "
                               f"of {line} elements (the GPU stops the kernel with an illegal instruction)")

    def _check_store_columns(self, op: tile.StoreOp, active: np.ndarray | None) -> None:
        """A tile's store must not start before element 0 of its tensor's innermost dim: the GPU
        stores it with TMA boxes of whole rows of the tile, and a TMA store box at a negative
        coordinate stops the kernel (an illegal instruction). Its rows may start anywhere (the
        GPU stores those from row 0 on one row each), and a vector anywhere (element by element)."""
        if not isinstance(op.value.type, tile.RegisterTileType):
            return
        innermost = len(self.tensors[op.tensor].shape) - 1
        scale = tile.coord_scales(op)[innermost]
        start = np.broadcast_to(self.scalar_of(op.coords[innermost]), (self.num_blocks,)) * scale
        if (block := self._first_active(start < 0, active)) is not None:
            name = self.kernel.arg_names[self.kernel.body.block.args.index(op.tensor)]
            raise error_at(op, f"{op.statement} of {name}: block {self._block_name(block)} stores a tile from element "
                               f"{int(start[block])} of {name}'s innermost dim, before its first: the GPU stores a "
                               f"tile's rows whole with TMA, which stops the kernel (an illegal instruction) at a "
                               f"negative start; start the columns at 0 or later (rows may start anywhere)")

    def _accesses(
        self, op: tile.LoadOp | tile.StoreOp, indices: list[np.ndarray], touched: np.ndarray, active: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """What the active blocks touch of a box (its `indices`, from `_box`) where `touched` (bool,
        broadcastable to (G, *tile)): the flat element indices, the block touching each, and the
        mask over (G, *tile)."""
        shape = (self.num_blocks, *_shaped(op.result if isinstance(op, tile.LoadOp) else op.value).get_shape())
        mask = np.broadcast_to(touched, shape)
        if active is not None:
            mask = mask & _lift(active, len(shape) - 1)
        target = tuple(np.broadcast_to(i, shape)[mask] for i in indices)
        blocks = np.broadcast_to(np.arange(self.num_blocks).reshape((-1,) + (1,) * (len(shape) - 1)), shape)[mask]
        return np.ravel_multi_index(target, self.tensors[op.tensor].shape), blocks, mask

    def _load(self, op: tile.LoadOp, active: np.ndarray | None) -> list[Value]:
        """The box's elements, 0 outside the tensor; the indices outside are padding."""
        self._check_overlaps(op, active)
        self._check_tma_start(op, active)
        indices, inside, valid = self._box(op, _shaped(op.result).get_shape())
        values = self.tensors[op.tensor][tuple(indices)]
        elements = _elements(inside)
        if op.tensor in self.stored:
            touched, blocks, _ = self._accesses(op, indices, elements, active)
            self._check_writers(op, touched, blocks, "block {block} reads {at}, which block {other} wrote")
            self._check_adders(op, touched, blocks, "block {block} reads {at}, which block {other} added to")
            _note_blocks(self.readers, op.tensor, self.tensors[op.tensor].size, touched, blocks)
        return [Tile(values if elements.all() else np.where(elements, values, np.float32(0)), valid)]

    def _store(self, op: tile.StoreOp, active: np.ndarray | None) -> list[Value]:
        """Scatter the active blocks' valid elements that lie inside the tensor (or add them, for
        `reduce add`); record who wrote what, since two blocks writing one element (here or in an
        earlier store) is a race on the GPU, unless both add."""
        value = self.tile_of(op.value)
        self._check_overlaps(op, active)
        self._check_tma_start(op, active)
        self._check_store_columns(op, active)
        indices, inside, _ = self._box(op, _shaped(op.value).get_shape())
        elements, blocks, mask = self._accesses(op, indices, _elements(inside) & value.elements(), active)
        values = np.broadcast_to(value.values, mask.shape)[mask]
        self._check_readers(op, elements, blocks)
        if op.reduce is not None:
            self._check_writers(op, elements, blocks, "block {other} stores and block {block} adds to {at}")
            self._add(op, elements, blocks, values)
            return []
        self._check_adders(op, elements, blocks, "block {other} adds to and block {block} stores {at}")
        self.tensors[op.tensor].flat[elements] = values
        writers = self.writers.setdefault(op.tensor, np.full(self.tensors[op.tensor].size, -1, np.int32))
        before = writers[elements]
        writers[elements] = blocks
        after = writers[elements]  # where two blocks write one element in this store, one lost
        other = np.where(after != blocks, after, before)
        clash = (other != -1) & (other != blocks)
        self._race(op, elements, blocks, other, clash, "blocks {other} and {block} both write {at}")
        return []

    def _add(self, op: tile.StoreOp, elements: np.ndarray, blocks: np.ndarray, values: np.ndarray) -> None:
        """Add `values` to the tensor's `elements`, one add at a time in block order where several
        blocks add to one element, each sum rounded to the tensor's dtype (f32 sums of bf16
        values are exact enough that rounding them again to bf16 rounds the exact sum once)."""
        tensor = self.tensors[op.tensor]
        element_type = cast(tile.GlobalType, op.tensor.type).element_type
        order = np.argsort(elements, kind="stable")  # blocks ascend within one element
        ordered = elements[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        rank = np.arange(len(ordered)) - np.repeat(starts, np.diff(np.r_[starts, len(ordered)]))
        for r in range(int(rank.max(initial=-1)) + 1):
            at = order[rank == r]  # each element at most once
            tensor.flat[elements[at]] = round_to(tensor.flat[elements[at]] + values[at], element_type)
        _note_blocks(self.adders, op.tensor, tensor.size, elements, blocks)

    def _check_writers(self, op: tile.LoadOp | tile.StoreOp, elements: np.ndarray, blocks: np.ndarray,
                       message: str) -> None:
        """A race where another block stored one of `elements` (one per access of `blocks`)."""
        if op.tensor not in self.writers:
            return
        writers = self.writers[op.tensor][elements]
        self._race(op, elements, blocks, writers, (writers != -1) & (writers != blocks), message)

    def _check_adders(self, op: tile.LoadOp | tile.StoreOp, elements: np.ndarray, blocks: np.ndarray,
                      message: str) -> None:
        """A race where another block added to one of `elements` (one per access of `blocks`)."""
        self._check_others(self.adders, op, elements, blocks, message)

    def _check_readers(self, op: tile.StoreOp, elements: np.ndarray, blocks: np.ndarray) -> None:
        """A race where another block loaded one of `elements` earlier in the launch (the GPU
        may run that load after this store)."""
        writes = "adds to" if op.reduce is not None else "stores"
        self._check_others(self.readers, op, elements, blocks, "block {other} reads {at}, which block {block} " + writes)

    def _check_others(self, seen: dict[SSAValue, tuple[np.ndarray, np.ndarray]], op: tile.LoadOp | tile.StoreOp,
                      elements: np.ndarray, blocks: np.ndarray, message: str) -> None:
        """A race where a block other than the accessing one is among `seen`'s two per element."""
        if op.tensor not in seen:
            return
        first, second = (noted[elements] for noted in seen[op.tensor])
        other = np.where((first != -1) & (first != blocks), first, second)
        self._race(op, elements, blocks, other, (other != -1) & (other != blocks), message)

    def _race(
        self,
        op: tile.LoadOp | tile.StoreOp,
        elements: np.ndarray,
        blocks: np.ndarray,
        others: np.ndarray,
        clash: np.ndarray,
        message: str,
    ) -> None:
        """Raise `message` (with {block}, {other}, {at}) for the first access where `clash`."""
        if not clash.any():
            return
        k = int(np.argmax(clash))
        names: dict[SSAValue, str] = dict(zip(self.kernel.body.block.args, self.kernel.arg_names, strict=True))
        where = ", ".join(str(int(i)) for i in np.unravel_index(elements[k], self.tensors[op.tensor].shape))
        at = f"{names[op.tensor]}[{where}]"
        text = message.format(block=self._block_name(int(blocks[k])), other=self._block_name(int(others[k])), at=at)
        raise error_at(op, f"{text}: a race between blocks on the GPU")

    def _block_name(self, block: int) -> str:
        assert self.block_ids is not None
        grid = next(op for op in self.kernel.body.block.ops if isinstance(op, tile.GridOp))
        ids = ", ".join(f"{n.data}={int(a[block])}" for n, a in zip(grid.names.data, self.block_ids, strict=True))
        return f"({ids})"

    def _identity(self, op: Operation, active: np.ndarray | None) -> list[Value]:
        return [self.tile_of(op.operands[0])]

    # ------------------------------------------------------------------ tile: compute

    def _mma(self, op: tile.MmaOp, active: np.ndarray | None) -> list[Value]:
        """Padding of either operand counts as 0 in the contraction; the result's rows are
        padding where a's M axis (or acc's rows) is, its columns where b's N axis (or acc's) is."""
        a, b = self.tile_of(op.a), self.tile_of(op.b)
        a_values, b_values = (_zero_padding(x) for x in (a, b))
        a_rows = a.valid[1] if op.transpose_a is not None else a.valid[0]
        b_cols = b.valid[0] if op.transpose_b is not None else b.valid[1]
        if op.transpose_a is not None:
            a_values = np.swapaxes(a_values, -1, -2)
        if op.transpose_b is not None:
            b_values = np.swapaxes(b_values, -1, -2)
        product = np.matmul(a_values, b_values)  # f32 operands: BLAS sgemm (a dtype= argument would bypass BLAS)
        if op.acc is None:
            return [Tile(product, (a_rows, b_cols))]
        acc = self.tile_of(op.acc)
        return [Tile(acc.values + product, _union((a_rows, b_cols), acc.valid))]

    def _fill(self, op: tile.FillOp, active: np.ndarray | None) -> list[Value]:
        t = _shaped(op.result)
        values = round_to(np.full((1, *t.get_shape()), op.value.value.data, np.float32), t.element_type)
        return [Tile(values, _no_padding(t.get_shape()))]

    def _unary(self, op: tile.UnaryOp, active: np.ndarray | None) -> list[Value]:
        source = self.tile_of(op.source)
        return [Tile(round_to(_TILE_UNARY[op.fn.data](source.values), _element(op.result)), source.valid)]

    def _binary(self, op: tile.BinaryOp, active: np.ndarray | None) -> list[Value]:
        """tile ⊙ tile has the padding of both; tile ⊙ scalar the tile's."""
        t = _shaped(op.result)
        rank = len(t.get_shape())
        operands = [self.env[v] for v in (op.lhs, op.rhs)]
        lhs, rhs = (x.values if isinstance(x, Tile) else _lift(x, rank) for x in operands)
        valid = _union(*(x.valid for x in operands if isinstance(x, Tile)))
        if op.fn.data == tile.BinaryFn.DIV and not isinstance(operands[1], Tile) and not isinstance(op.rhs.owner, arith.ConstantOp):
            return [Tile(round_to(lhs * _reciprocal(rhs), t.element_type), valid)]
        return [Tile(round_to(_TILE_BINARY[op.fn.data](lhs, rhs).astype(np.float32), t.element_type), valid)]

    def _reduce(self, op: tile.ReduceOp, active: np.ndarray | None) -> list[Value]:
        """Padding along the reduced axis counts as the identity; the vector has the padding of
        the other axis."""
        source = self.tile_of(op.source)
        rows, cols = source.valid
        combine, identity = _TILE_REDUCE[op.fn.data]
        if op.axis.data == tile.Axis.ROW:
            axis, skipped, kept = -1, cols[:, None, :], rows
        else:
            axis, skipped, kept = -2, rows[:, :, None], cols
        values = source.values if skipped.all() else np.where(skipped, source.values, identity)
        return [Tile(round_to(combine(values, axis=axis), _element(op.result)), (kept,))]

    def _cumsum(self, op: tile.CumsumOp, active: np.ndarray | None) -> list[Value]:
        """Padding along the scanned axis counts as 0; the result has the source's padding. A
        bf16, f16 or fp8 operand is summed in f32 and each sum rounded once to its dtype."""
        source = self.tile_of(op.source)
        if op.axis is None:
            axis, skipped = -1, source.valid[0]
        elif op.axis.data == tile.Axis.ROW:
            axis, skipped = -1, source.valid[1][:, None, :]
        else:
            axis, skipped = -2, source.valid[0][:, :, None]
        values = source.values if skipped.all() else np.where(skipped, source.values, np.float32(0))
        return [Tile(round_to(np.cumsum(values, axis=axis, dtype=np.float32), _element(op.result)), source.valid)]

    def _vector_reduce(self, op: tile.VectorReduceOp, active: np.ndarray | None) -> list[Value]:
        """An f32 scalar per block; padding counts as the identity."""
        source = self.tile_of(op.source)
        combine, identity = _TILE_REDUCE[op.fn.data]
        values = source.values if source.valid[0].all() else np.where(source.valid[0], source.values, identity)
        reduced = np.asarray(combine(values, axis=-1), np.float32)
        return [reduced if reduced.shape[0] > 1 else reduced.reshape(())]

    def _broadcast(self, op: tile.BroadcastOp, active: np.ndarray | None) -> list[Value]:
        """The vector's padding joins the rows (a row broadcast) or the columns (a column one)."""
        source, vector = self.tile_of(op.source), self.tile_of(op.vector)
        rows, cols = source.valid
        if op.axis.data == tile.Axis.ROW:
            spread, valid = vector.values[..., :, None], (rows & vector.valid[0], cols)
        else:
            spread, valid = vector.values[..., None, :], (rows, cols & vector.valid[0])
        if op.fn.data == tile.BinaryFn.DIV:
            return [Tile(round_to(source.values * _reciprocal(spread), _element(op.result)), valid)]
        return [Tile(round_to(_TILE_BINARY[op.fn.data](source.values, spread), _element(op.result)), valid)]

    def _mask(self, op: tile.MaskOp, active: np.ndarray | None) -> list[Value]:
        source = self.tile_of(op.source)
        rows, cols = source.values.shape[-2:]
        row = _lift(self.scalar_of(op.row_offset), 2) + np.arange(rows).reshape(rows, 1)
        col = _lift(self.scalar_of(op.col_offset), 2) + np.arange(cols).reshape(1, cols)
        excluded = col > row
        fill = round_to(np.float32(op.fill.value.data), _element(op.result))
        return [Tile(np.where(excluded, fill, source.values), source.valid)]

    def _bounds_mask(self, op: tile.BoundsMaskOp, active: np.ndarray | None) -> list[Value]:
        """Elements at or past a (signed) limit along any axis become the fill; padding stays."""
        source = self.tile_of(op.source)
        shape = source.values.shape[1:]
        excluded = np.zeros((1,) * len(shape), np.bool_)
        for axis, (limit, extent) in enumerate(zip(op.limits, shape, strict=True)):
            span = [1] * len(shape)
            span[axis] = extent
            excluded = excluded | (np.arange(extent).reshape(span) >= _lift(self.scalar_of(limit), len(shape)))
        fill = round_to(np.float32(op.fill.value.data), _element(op.result))
        return [Tile(np.where(excluded, fill, source.values), source.valid)]

    def _position(self, op: tile.PositionOp, active: np.ndarray | None) -> list[Value]:
        """offset + r (or + c) as f32, of a vector offset + i; no padding, as it reads no tile."""
        shape = _shaped(op.result).get_shape()
        axis = 0 if op.axis.data == tile.Axis.ROW or len(shape) == 1 else 1
        span = [1] * len(shape)
        span[axis] = shape[axis]
        first = _lift(self.scalar_of(op.offset), len(shape)).astype(np.int64)
        exact = first + np.arange(shape[axis]).reshape(span)
        if exact.max() >= EXACT_POSITIONS:
            raise error_at(op, f"a position reaches {int(exact.max())}: positions are f32, exact only below 2^24 "
                               f"({EXACT_POSITIONS})")
        positions = exact.astype(np.float32)
        return [Tile(np.broadcast_to(positions, (*positions.shape[:-len(shape)], *shape)).reshape(-1, *shape),
                     _no_padding(shape))]

    def _tile_select(self, op: tile.SelectOp, active: np.ndarray | None) -> list[Value]:
        """on_true where cond != 0 (NaN included), else on_false; the padding of every tile operand."""
        t = _shaped(op.result)
        operands = [self.env[v] for v in (op.cond, op.on_true, op.on_false)]
        cond, on_true, on_false = (x.values if isinstance(x, Tile) else _lift(x, len(t.get_shape())) for x in operands)
        valid = _union(*(x.valid for x in operands if isinstance(x, Tile)))
        values = np.where(cond != 0, on_true, on_false).astype(np.float32)
        return [Tile(round_to(values, t.element_type), valid)]

    def _convert(self, op: tile.ConvertOp, active: np.ndarray | None) -> list[Value]:
        source = self.tile_of(op.source)
        return [Tile(round_to(source.values, _element(op.result)), source.valid)]


def _zero_padding(x: Tile) -> np.ndarray:
    """`x`'s elements with its padding replaced by 0 (how a contraction counts it)."""
    elements = x.elements()
    return x.values if elements.all() else np.where(elements, x.values, np.float32(0))


def _shaped(value: SSAValue) -> tile.ShapedTileType:
    assert isinstance(value.type, tile.ShapedTileType)
    return value.type


def _element(value: SSAValue) -> Attribute:
    return _shaped(value).element_type


_HANDLERS: dict[str, Callable[[_Machine, Any, np.ndarray | None], list[Value]]] = {
    # each handler takes the op its name says: Any, as no one op type fits them all
    "arith.constant": _Machine._constant,
    "arith.cmpi": _Machine._cmpi,
    "arith.cmpf": _Machine._cmpf,
    "arith.select": _Machine._arith_select,
    "arith.sitofp": _Machine._to_float,
    "arith.uitofp": _Machine._unsigned_to_float,
    "arith.extf": _Machine._to_float,
    "arith.truncf": _Machine._to_float,
    "arith.index_cast": _Machine._int_cast,
    "arith.index_castui": _Machine._int_cast,
    "arith.extsi": _Machine._int_cast,
    "arith.extui": _Machine._int_cast,
    "arith.trunci": _Machine._int_cast,
    "arith.fptosi": _Machine._to_int,
    "arith.fptoui": _Machine._to_int,
    "math.fma": _Machine._fma,
    "scf.for": _Machine._for,
    "scf.if": _Machine._if,
    "tile.dim": _Machine._dim,
    "tile.load_scalar": _Machine._load_scalar,
    "tile.grid": _Machine._grid,
    "tile.require": _Machine._require,
    "tile.block_id": _Machine._block_id,
    "tile.load": _Machine._load,
    "tile.store": _Machine._store,
    "tile.fence": _Machine._fence,
    "tile.to_reg": _Machine._identity,
    "tile.to_shared": _Machine._identity,
    "tile.retain": _Machine._retain,
    "tile.recall": _Machine._recall,
    "tile.mma": _Machine._mma,
    "tile.fill": _Machine._fill,
    "tile.unary": _Machine._unary,
    "tile.binary": _Machine._binary,
    "tile.reduce": _Machine._reduce,
    "tile.broadcast": _Machine._broadcast,
    "tile.cumsum": _Machine._cumsum,
    "tile.vector_reduce": _Machine._vector_reduce,
    "tile.transpose": _Machine._identity,
    "tile.mask": _Machine._mask,
    "tile.bounds_mask": _Machine._bounds_mask,
    "tile.position": _Machine._position,
    "tile.select": _Machine._tile_select,
    "tile.convert": _Machine._convert,
}


# --------------------------------------------------------------------------- entry point


def find_kernel(module: Operation, kernel: str | None) -> tile.KernelOp:
    """The `tile.kernel` named `kernel` in `module` (or its only kernel when `kernel` is None)."""
    kernels = [op for op in module.walk() if isinstance(op, tile.KernelOp)]
    names = [k.sym_name.data for k in kernels]
    if not kernels:
        raise TkError("no tile.kernel in the module: the interpreter runs tile-dialect IR (before convert-tile-to-sm90)")
    if kernel is None:
        if len(kernels) != 1:
            raise TkError(f"name the kernel to run (-k): the module has {', '.join(names)}")
        return kernels[0]
    for k in kernels:
        if k.sym_name.data == kernel:
            return k
    raise TkError(f"no kernel '{kernel}' in the module (it has {', '.join(names)})")


def stored_arguments(kernel: tile.KernelOp) -> list[str]:
    """Names of the kernel arguments that some `tile.store` writes: the kernel's outputs."""
    args = kernel.body.block.args
    stored = {op.tensor for op in kernel.walk() if isinstance(op, tile.StoreOp)}
    return [name for name, arg in zip(kernel.arg_names, args, strict=True) if arg in stored]


def _check_params(kernel: tile.KernelOp, params: Mapping[str, Any]) -> None:
    """`params` bind dims; a compile-time parameter among them must have the value the IR was
    compiled with (the IR holds it: another value would be silently ignored)."""
    name = kernel.sym_name.data
    dims = symbolic_dims(kernel)
    for param, value in params.items():
        if param in dims:
            continue
        compiled = kernel.params.data.get(param)
        if not isinstance(compiled, IntegerAttr | FloatAttr):
            raise TkError(f"{param} is not a dim of {name} (its dims: {', '.join(dims) or 'none'}): the parameters given "
                          "here bind dims, and compile-time parameters are set where the kernel is compiled "
                          "(tkc.compile(path, kernel, NAME=value), or tkc.interpret on the source's path)")
        flag = isinstance(compiled.type, IntegerType) and compiled.type.width.data == 1
        held = compiled.value.data != 0 if flag else compiled.value.data
        if held != value:
            raise TkError(f"{param} = {value}, but {name} was compiled with {param} = {held}: compile it "
                          f"with the value (tkc.compile(path, kernel, {param}={value}), or tkc.interpret on the "
                          "source's path)")


def symbolic_dims(kernel: tile.KernelOp) -> list[str]:
    """The names of the dims the kernel's tensors are declared with, in first-use order."""
    dims: dict[str, None] = {}
    for arg in kernel.body.block.args:
        assert isinstance(arg.type, tile.GlobalType)
        dims.update((dim, None) for dim in arg.type.get_dims() if isinstance(dim, str))
    return list(dims)


def bind_dims(kernel: tile.KernelOp, shapes: Mapping[str, Sequence[int]], params: Mapping[str, int]) -> dict[str, int]:
    """Bind each symbolic dim from the shapes of the given arrays; check they agree with each
    other, with `params` and with the fixed dims of the `!tile.gl` types."""
    dims = dict(params)
    seen: dict[str, str] = {name: "the parameters" for name in params}
    for name, arg in zip(kernel.arg_names, kernel.body.block.args, strict=True):
        if name not in shapes:
            continue
        assert isinstance(arg.type, tile.GlobalType)
        declared, shape = arg.type.get_dims(), tuple(shapes[name])
        if len(shape) != len(declared):
            raise TkError(f"{name} has rank {len(declared)} ({_spell(declared)}), got an array of shape {shape}")
        for axis, (dim, size) in enumerate(zip(declared, shape, strict=True)):
            where = f"{name} axis {axis}"
            if isinstance(dim, int):
                if dim != size:
                    raise TkError(f"{where} has fixed size {dim}, got {size}")
            elif dims.setdefault(dim, size) != size:
                raise TkError(f"{dim} is {dims[dim]} in {seen[dim]} but {size} in {where}")
            else:
                seen.setdefault(dim, where)
    return dims


def _spell(dims: Sequence[str | int]) -> str:
    return "[" + ", ".join(str(d) for d in dims) + "]"


def shape_of(arg_type: tile.GlobalType, dims: Mapping[str, int], name: str) -> tuple[int, ...]:
    """The concrete shape of a `!tile.gl` argument once its symbolic dims are bound."""
    shape = []
    for dim in arg_type.get_dims():
        if isinstance(dim, str) and dim not in dims:
            raise TkError(f"the size of {dim} (in {name}: {_spell(arg_type.get_dims())}) is not known")
        shape.append(dim if isinstance(dim, int) else dims[dim])
    return tuple(shape)


def _check_whole_tiles(kernel: tile.KernelOp, dims: Mapping[str, int]) -> None:
    """A dim the kernel's GPU code takes in whole tiles must be a multiple of the tile: one whose
    count of tiles the kernel rounds down (`M / BM`), and one tile-mask-tails could not mask
    (its `whole_tiles`: a carried reduction of partial tiles, whose padding the interpreter would
    leave out of the result where the GPU cannot). The runtime's launch check, in its words."""
    def where(dim: str) -> str:
        name, axis = next(
            (name, axis)
            for name, arg in zip(kernel.arg_names, kernel.body.block.args, strict=True)
            for axis, declared in enumerate(cast(tile.GlobalType, arg.type).get_dims())
            if declared == dim
        )
        return f"{name} (dim {axis})"

    whole = kernel.attributes.get("whole_tiles")
    if isinstance(whole, DictionaryAttr):
        for dim, decision in whole.data.items():
            multiple = cast(tile.DecisionAttr, decision).int_value
            if dims[dim] % multiple:
                raise TkError(unmasked_tail(dim, dims[dim], where(dim), multiple,
                                            cast(tile.DecisionAttr, decision).reason.data))
    for dim, multiple in tile.floor_divided_dims(kernel).items():
        if dims[dim] % multiple:
            raise TkError(rounded_down_tail(dim, dims[dim], where(dim), multiple))


def interpret(
    module: Operation,
    kernel: str | None,
    inputs: Mapping[str, np.ndarray],
    params: Mapping[str, int] | None = None,
    progress: Progress | None = None,
) -> dict[str, np.ndarray]:
    """Run `kernel` over its whole grid on numpy arrays; returns every argument it stores to.

    `inputs` maps argument names to arrays (any float dtype; each is rounded to its declared
    dtype). Symbolic dims are bound from their shapes and from `params`. An output missing from
    `inputs` starts as NaN, when its shape is known; one a store_add adds to must be given.
    Outputs come back in their declared dtype (`ml_dtypes.bfloat16` for bf16).
    """
    kernel_op = find_kernel(module, kernel)
    names = kernel_op.arg_names
    if not isinstance(inputs, Mapping):
        raise TkError(f"the inputs map {kernel_op.sym_name.data}'s argument names ({', '.join(names)}) to arrays "
                      f"(not {type(inputs).__name__})")
    _check_params(kernel_op, params or {})
    unknown = set(inputs) - set(names)
    if unknown:
        raise TkError(f"{kernel_op.sym_name.data} has no argument {', '.join(sorted(unknown))} (it takes {', '.join(names)})")
    dims = bind_dims(kernel_op, {n: np.shape(a) for n, a in inputs.items()}, params or {})
    outputs = stored_arguments(kernel_op)
    added_to = {op.tensor for op in kernel_op.walk() if isinstance(op, tile.StoreOp) and op.reduce is not None}
    tensors: dict[SSAValue, np.ndarray] = {}
    for name, arg in zip(names, kernel_op.body.block.args, strict=True):
        assert isinstance(arg.type, tile.GlobalType)
        if isinstance(arg.type.element_type, IntegerType):  # i32: read as indices, never stored
            given = np.asarray(inputs.get(name, np.zeros(shape_of(arg.type, dims, name), np.int32)))
            if not np.issubdtype(given.dtype, np.integer):
                raise TkError(f"argument {name} is an i32 tensor: give it integers, not {given.dtype}")
            i32 = np.iinfo(np.int32)
            if given.size and (given.min() < i32.min or given.max() > i32.max):
                wide = given[(given < i32.min) | (given > i32.max)].flat[0]
                raise TkError(f"argument {name} is an i32 tensor: {wide} does not fit in 32 bits")
            tensors[arg] = given.astype(np.int64)
            continue
        if name in inputs:
            array = round_to(np.asarray(inputs[name]).astype(np.float32), arg.type.element_type)
        elif name in outputs and arg not in added_to:
            array = np.full(shape_of(arg.type, dims, name), np.nan, np.float32)
        else:
            raise TkError(f"no array for {name}, an input of {kernel_op.sym_name.data}")
        tensors[arg] = np.array(array, np.float32)
    _check_whole_tiles(kernel_op, dims)
    with np.errstate(all="ignore"):
        _Machine(kernel_op, tensors, progress).run()
    results = {}
    for name, arg in zip(names, kernel_op.body.block.args, strict=True):
        if name in outputs:
            assert isinstance(arg.type, tile.GlobalType)
            results[name] = tensors[arg].astype(numpy_dtype(arg.type.element_type))
    return results
