"""The reference interpreter: runs a `tile.kernel` over its whole grid with numpy.

It is the oracle every pass is checked against (`tkc run --interpret`, `--bisect`), so it
follows the tile dialect's docstrings literally and ignores every decision attribute.

Execution is vectorised over the grid: each SSA value is a numpy array whose leading axis is
the block (G blocks at once). Index math is int64 of shape () when it is the same for every
block or (G,) when it differs; tiles are f32 of shape (G, rows, cols) (vectors (G, n)), or
(1, ...) while they are still the same in every block (a `tile.fill`). Values of low-precision
type are kept as f32 that hold exactly the rounded value, so arithmetic is f32 and rounding
happens wherever an op produces a bf16/f16/fp8 value (loads of low-precision tensors, converts,
element-wise ops on low-precision tiles).

Control flow that differs between blocks runs under an *active* mask of shape (G,): an `scf.for`
runs to the largest trip count and keeps the loop-carried values of finished blocks; an `scf.if`
on a per-block condition runs both sides and selects per block. Stores write only active blocks.

Global memory behaves like TMA: a box that reaches outside the tensor reads zeros there and
writes nothing there (blocks that a mask switched off may compute such boxes). Blocks have no
order on the GPU, so an element that two blocks store, or that one block loads after another
stored it, is a race: an error naming both blocks.

Max and min follow PTX `max.f32`/`min.f32` (a NaN operand loses to a number); fp8 conversion
saturates like `cvt.rn.satfinite`; everything else is IEEE f32 (exp2(-inf) = 0, x/0 = inf).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from math import prod
from typing import Any

import numpy as np
import numpy.typing as npt
from xdsl.dialects import scf
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float8E4M3FNType,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from tkc import dtypes
from tkc.diagnostics import TkError, error_at
from tkc.dialects import tile

FP8_E4M3_MAX = 448.0
"""cvt.rn.satfinite.e4m3x2 saturates to the largest finite e4m3 value."""

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
    if isinstance(element_type, Float8E4M3FNType):
        x = np.clip(x, -FP8_E4M3_MAX, FP8_E4M3_MAX)
    with np.errstate(over="ignore"):  # overflow to ±inf is the f16 conversion's defined result
        return np.asarray(x, np.float32).astype(numpy_dtype(element_type)).astype(np.float32)


def _lift(x: np.ndarray, rank: int) -> np.ndarray:
    """A per-block scalar (shape () or (G,)) shaped to broadcast against rank-`rank` tiles."""
    x = np.asarray(x)
    return x if x.ndim == 0 else x.reshape(x.shape + (1,) * rank)


def _select(cond: np.ndarray, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Per block: `a` where `cond`, else `b` (`cond` has shape () or (G,))."""
    a, b = np.asarray(a), np.asarray(b)
    return np.where(_lift(cond, max(a.ndim, b.ndim, 1) - 1), a, b)


def _trunc_div(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    q = np.abs(a) // np.where(b == 0, 1, np.abs(b))
    return np.where((a < 0) != (b < 0), -q, q)


def _trunc_rem(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return a - _trunc_div(a, b) * b


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
    "arith.maxnumf": np.fmax,
    "arith.minnumf": np.fmin,
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
    tile.UnaryFn.SIN: np.sin,
    tile.UnaryFn.COS: np.cos,
}

_TILE_BINARY: dict[tile.BinaryFn, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    tile.BinaryFn.ADD: np.add,
    tile.BinaryFn.SUB: np.subtract,
    tile.BinaryFn.MUL: np.multiply,
    tile.BinaryFn.DIV: np.divide,
    tile.BinaryFn.MAX: np.fmax,
    tile.BinaryFn.MIN: np.fmin,
}

_TILE_REDUCE: dict[tile.ReduceFn, Callable[..., np.ndarray]] = {
    tile.ReduceFn.MAX: np.fmax.reduce,
    tile.ReduceFn.MIN: np.fmin.reduce,
    tile.ReduceFn.SUM: np.add.reduce,
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


class _Machine:
    """The state of one interpreted launch: bound values, global tensors, the grid."""

    def __init__(self, kernel: tile.KernelOp, tensors: dict[SSAValue, np.ndarray]):
        self.kernel = kernel
        self.tensors = tensors
        self.env: dict[SSAValue, np.ndarray] = {}
        self.block_ids: list[np.ndarray] | None = None
        self.num_blocks = 0
        self.writers: dict[SSAValue, np.ndarray] = {}
        """Per stored tensor, the block that last wrote each element (-1: none): two blocks
        writing one element is a race on the GPU, so the interpreter refuses it."""

    # ------------------------------------------------------------------ driving

    def run(self) -> None:
        self._set_grid()
        self.run_block(self.kernel.body.block, None)

    def _set_grid(self) -> None:
        """Evaluate the grid extents first: block ids may be read before `tile.grid` in program order."""
        block = self.kernel.body.block
        grid = next(op for op in block.ops if isinstance(op, tile.GridOp))
        needed: set[Operation] = set()
        pending = list(grid.extents)
        while pending:
            owner = pending.pop().owner
            if isinstance(owner, Operation) and owner not in needed:
                needed.add(owner)
                pending.extend(owner.operands)
        for op in block.ops:
            if op in needed:
                self.execute(op, None)
        extents = []
        for value in grid.extents:
            extent = self.env[value]
            if extent.ndim != 0:
                raise error_at(grid, "the grid extents must be the same for every block")
            if extent < 0:
                raise error_at(grid, f"grid extent {int(extent)} is negative")
            extents.append(int(extent))
        self.num_blocks = prod(extents)
        self.block_ids = [ids.reshape(-1).astype(np.int64) for ids in np.indices(extents)]

    def run_block(self, block: Block, active: np.ndarray | None) -> list[np.ndarray]:
        """Execute `block`'s ops under `active` ((G,) bool, None = every block); returns what its
        terminator passes on."""
        for op in block.ops:
            if op.name in ("scf.yield", "tile.return"):
                return [self.env[v] for v in op.operands]
            self.execute(op, active)
        return []

    def execute(self, op: Operation, active: np.ndarray | None) -> None:
        handler = _HANDLERS.get(op.name)
        if handler is not None:
            results = handler(self, op, active)
        elif op.name in _ARITH_BINARY:
            a, b = (self.env[v] for v in op.operands)
            results = [_ARITH_BINARY[op.name](a, b).astype(_scalar_dtype(op.results[0].type))]
        elif op.name in _FLOAT_UNARY:
            results = [_FLOAT_UNARY[op.name](self.env[op.operands[0]])]
        else:
            raise error_at(op, f"the interpreter cannot execute '{op.name}'")
        for value, result in zip(op.results, results, strict=True):
            self.env[value] = result

    # ------------------------------------------------------------------ arith / scf

    def _constant(self, op: Operation, active: np.ndarray | None) -> list[np.ndarray]:
        value = op.properties.get("value", op.attributes.get("value"))
        if isinstance(value, IntegerAttr | FloatAttr):
            return [np.asarray(value.value.data, _scalar_dtype(op.results[0].type))]
        raise error_at(op, f"the interpreter supports scalar constants only, got {value}")

    def _cmpi(self, op: Operation, active: np.ndarray | None) -> list[np.ndarray]:
        a, b = (self.env[v] for v in op.operands)
        predicate = op.properties["predicate"]
        assert isinstance(predicate, IntegerAttr)
        return [_CMPI[predicate.value.data](a, b)]

    def _cmpf(self, op: Operation, active: np.ndarray | None) -> list[np.ndarray]:
        a, b = (self.env[v] for v in op.operands)
        predicate = op.properties["predicate"]
        assert isinstance(predicate, IntegerAttr)
        return [_cmpf(predicate.value.data, a, b)]

    def _arith_select(self, op: Operation, active: np.ndarray | None) -> list[np.ndarray]:
        cond, a, b = (self.env[v] for v in op.operands)
        return [_select(cond, a, b)]

    def _to_float(self, op: Operation, active: np.ndarray | None) -> list[np.ndarray]:
        return [round_to(self.env[op.operands[0]].astype(np.float32), op.results[0].type)]

    def _int_cast(self, op: Operation, active: np.ndarray | None) -> list[np.ndarray]:
        """Integers are int64 (i1 is bool): only i1's sign extension and truncation to i1 differ."""
        x = self.env[op.operands[0]]
        if op.name == "arith.extsi" and x.dtype == np.bool_:
            return [-x.astype(np.int64)]
        if _scalar_dtype(op.results[0].type) is np.bool_:
            return [(x & 1).astype(np.bool_)]
        return [x.astype(np.int64)]

    def _to_int(self, op: Operation, active: np.ndarray | None) -> list[np.ndarray]:
        return [np.trunc(self.env[op.operands[0]]).astype(np.int64)]

    def _fma(self, op: Operation, active: np.ndarray | None) -> list[np.ndarray]:
        a, b, c = (self.env[v] for v in op.operands)
        return [(a * b + c).astype(np.float32)]

    def _for(self, op: Operation, active: np.ndarray | None) -> list[np.ndarray]:
        assert isinstance(op, scf.ForOp)
        lb, ub, step = (self.env[v] for v in (op.lb, op.ub, op.step))
        if np.any(step <= 0):
            raise error_at(op, "scf.for needs a positive step")
        trips = np.maximum(-((lb - ub) // step), 0)
        if active is not None and trips.ndim:
            trips = np.where(active, trips, 0)
        body = op.body.block
        carried = [self.env[v] for v in op.iter_args]
        for it in range(int(trips.max(initial=0))):
            # Blocks past their own trip count (trips is 0 for inactive ones) keep their values.
            running = it < trips if trips.ndim and it >= trips.min() else active
            self.env[body.args[0]] = lb + it * step
            for arg, value in zip(body.args[1:], carried, strict=True):
                self.env[arg] = value
            new = self.run_block(body, running)
            carried = new if running is None else [_select(running, n, c) for n, c in zip(new, carried, strict=True)]
        return carried

    def _if(self, op: Operation, active: np.ndarray | None) -> list[np.ndarray]:
        cond = self.env[op.operands[0]]
        then_block = op.regions[0].blocks.first
        else_block = op.regions[1].blocks.first
        assert then_block is not None
        if cond.ndim == 0:
            chosen = then_block if cond else else_block
            return self.run_block(chosen, active) if chosen is not None else []
        taken = cond if active is None else cond & active
        skipped = ~cond if active is None else ~cond & active
        if not skipped.any():
            return self.run_block(then_block, active)
        if not taken.any():
            return self.run_block(else_block, active) if else_block is not None else []
        then_values = self.run_block(then_block, taken)
        else_values = self.run_block(else_block, skipped) if else_block is not None else []
        return [_select(cond, t, e) for t, e in zip(then_values, else_values, strict=True)]

    # ------------------------------------------------------------------ tile: structure

    def _dim(self, op: tile.DimOp, active: np.ndarray | None) -> list[np.ndarray]:
        return [np.asarray(self.tensors[op.tensor].shape[op.axis.value.data], np.int64)]

    def _grid(self, op: tile.GridOp, active: np.ndarray | None) -> list[np.ndarray]:
        return []

    def _fence(self, op: tile.FenceOp, active: np.ndarray | None) -> list[np.ndarray]:
        return []  # a block runs in program order here: its stores are already visible

    def _block_id(self, op: tile.BlockIdOp, active: np.ndarray | None) -> list[np.ndarray]:
        assert self.block_ids is not None
        return [self.block_ids[op.axis.value.data]]

    # ------------------------------------------------------------------ tile: memory

    def _box(self, op: tile.LoadOp | tile.StoreOp, tile_shape: Sequence[int]) -> tuple[list[np.ndarray], np.ndarray | None]:
        """Per-block element indices of the box at the op's tile coordinates, each broadcastable
        to (G, *tile_shape), and where the box lies inside the tensor (None: everywhere)."""
        tensor_shape = self.tensors[op.tensor].shape
        t = len(tile_shape)
        extents = (1,) * (len(tensor_shape) - t) + tuple(tile_shape)
        indices, inside = [], None
        for axis, (size, extent) in enumerate(zip(tensor_shape, extents, strict=True)):
            coord = np.broadcast_to(self.env[op.coords[axis]], (self.num_blocks,))
            start = coord.reshape((self.num_blocks,) + (1,) * t) * extent
            if axis >= len(tensor_shape) - t:
                span = [1] * t
                span[axis - (len(tensor_shape) - t)] = extent
                index = start + np.arange(extent, dtype=np.int64).reshape(span)
            else:
                index = start
            if index.size and (index.min() < 0 or index.max() >= size):
                ok = (index >= 0) & (index < size)
                inside = ok if inside is None else inside & ok
                index = np.clip(index, 0, size - 1)
            indices.append(index)
        return indices, inside

    def _accesses(
        self, op: tile.LoadOp | tile.StoreOp, shape: tuple[int, ...], active: np.ndarray | None
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """What the active blocks' boxes (each of `shape` = (G, *tile)) touch inside the tensor:
        the flat element indices, the block touching each, and the mask over (G, *tile)."""
        indices, inside = self._box(op, shape[1:])
        mask = np.ones(shape, np.bool_) if inside is None else np.broadcast_to(inside, shape)
        if active is not None:
            mask = mask & _lift(active, len(shape) - 1)
        target = tuple(np.broadcast_to(i, shape)[mask] for i in indices)
        blocks = np.broadcast_to(np.arange(self.num_blocks).reshape((-1,) + (1,) * (len(shape) - 1)), shape)[mask]
        return np.ravel_multi_index(target, self.tensors[op.tensor].shape), blocks, mask

    def _load(self, op: tile.LoadOp, active: np.ndarray | None) -> list[np.ndarray]:
        assert isinstance(op.result.type, tile.ShapedTileType)
        indices, inside = self._box(op, op.result.type.get_shape())
        values = self.tensors[op.tensor][tuple(indices)]
        if op.tensor in self.writers:
            elements, blocks, _ = self._accesses(op, (self.num_blocks, *op.result.type.get_shape()), active)
            writers = self.writers[op.tensor][elements]
            clash = (writers != -1) & (writers != blocks)
            self._race(op, elements, blocks, writers, clash, "block {block} reads {at}, which block {other} wrote")
        return [values if inside is None else np.where(inside, values, np.float32(0))]

    def _store(self, op: tile.StoreOp, active: np.ndarray | None) -> list[np.ndarray]:
        """Scatter the active blocks' tiles; record who wrote what, since two blocks writing one
        element (here or in an earlier store) is a race on the GPU."""
        assert isinstance(op.value.type, tile.ShapedTileType)
        shape = (self.num_blocks, *op.value.type.get_shape())
        elements, blocks, mask = self._accesses(op, shape, active)
        self.tensors[op.tensor].flat[elements] = np.broadcast_to(self.env[op.value], shape)[mask]
        writers = self.writers.setdefault(op.tensor, np.full(self.tensors[op.tensor].size, -1, np.int32))
        before = writers[elements]
        writers[elements] = blocks
        after = writers[elements]  # where two blocks write one element in this store, one lost
        other = np.where(after != blocks, after, before)
        clash = (other != -1) & (other != blocks)
        self._race(op, elements, blocks, other, clash, "blocks {other} and {block} both write {at}")
        return []

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

    def _identity(self, op: Operation, active: np.ndarray | None) -> list[np.ndarray]:
        return [self.env[op.operands[0]]]

    # ------------------------------------------------------------------ tile: compute

    def _mma(self, op: tile.MmaOp, active: np.ndarray | None) -> list[np.ndarray]:
        a, b = self.env[op.a], self.env[op.b]
        if op.transpose_a is not None:
            a = np.swapaxes(a, -1, -2)
        if op.transpose_b is not None:
            b = np.swapaxes(b, -1, -2)
        product = np.matmul(a, b)  # f32 operands: BLAS sgemm (a dtype= argument would bypass BLAS)
        return [product if op.acc is None else self.env[op.acc] + product]

    def _fill(self, op: tile.FillOp, active: np.ndarray | None) -> list[np.ndarray]:
        t = op.result.type
        assert isinstance(t, tile.ShapedTileType)
        return [round_to(np.full((1, *t.get_shape()), op.value.value.data, np.float32), t.element_type)]

    def _unary(self, op: tile.UnaryOp, active: np.ndarray | None) -> list[np.ndarray]:
        x = _TILE_UNARY[op.fn.data](self.env[op.source])
        return [round_to(x, _element(op.result))]

    def _binary(self, op: tile.BinaryOp, active: np.ndarray | None) -> list[np.ndarray]:
        t = op.result.type
        assert isinstance(t, tile.ShapedTileType)
        rank = len(t.get_shape())
        lhs, rhs = (
            _lift(self.env[v], rank) if isinstance(v.type, Float32Type) else self.env[v] for v in (op.lhs, op.rhs)
        )
        return [round_to(_TILE_BINARY[op.fn.data](lhs, rhs).astype(np.float32), t.element_type)]

    def _reduce(self, op: tile.ReduceOp, active: np.ndarray | None) -> list[np.ndarray]:
        axis = -1 if op.axis.data == tile.Axis.ROW else -2
        return [round_to(_TILE_REDUCE[op.fn.data](self.env[op.source], axis=axis), _element(op.result))]

    def _broadcast(self, op: tile.BroadcastOp, active: np.ndarray | None) -> list[np.ndarray]:
        vector = self.env[op.vector]
        vector = vector[..., :, None] if op.axis.data == tile.Axis.ROW else vector[..., None, :]
        return [round_to(_TILE_BINARY[op.fn.data](self.env[op.source], vector), _element(op.result))]

    def _mask(self, op: tile.MaskOp, active: np.ndarray | None) -> list[np.ndarray]:
        source = self.env[op.source]
        rows, cols = source.shape[-2:]
        row = _lift(self.env[op.row_offset], 2) + np.arange(rows).reshape(rows, 1)
        col = _lift(self.env[op.col_offset], 2) + np.arange(cols).reshape(1, cols)
        excluded = col > row
        fill = round_to(np.float32(op.fill.value.data), _element(op.result))
        return [np.where(excluded, fill, source)]

    def _convert(self, op: tile.ConvertOp, active: np.ndarray | None) -> list[np.ndarray]:
        return [round_to(self.env[op.source], _element(op.result))]


def _element(value: SSAValue) -> Attribute:
    assert isinstance(value.type, tile.ShapedTileType)
    return value.type.element_type


_HANDLERS: dict[str, Callable[[_Machine, Any, np.ndarray | None], list[np.ndarray]]] = {
    # each handler takes the op its name says: Any, as no one op type fits them all
    "arith.constant": _Machine._constant,
    "arith.cmpi": _Machine._cmpi,
    "arith.cmpf": _Machine._cmpf,
    "arith.select": _Machine._arith_select,
    "arith.sitofp": _Machine._to_float,
    "arith.uitofp": _Machine._to_float,
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
    "tile.grid": _Machine._grid,
    "tile.block_id": _Machine._block_id,
    "tile.load": _Machine._load,
    "tile.store": _Machine._store,
    "tile.fence": _Machine._fence,
    "tile.to_reg": _Machine._identity,
    "tile.to_shared": _Machine._identity,
    "tile.mma": _Machine._mma,
    "tile.fill": _Machine._fill,
    "tile.unary": _Machine._unary,
    "tile.binary": _Machine._binary,
    "tile.reduce": _Machine._reduce,
    "tile.broadcast": _Machine._broadcast,
    "tile.mask": _Machine._mask,
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


def _check_divisible(kernel: tile.KernelOp, tensors: Mapping[SSAValue, np.ndarray]) -> None:
    """Every tensor dim a load or store tiles must be a whole number of tiles (checked at launch)."""
    names: dict[SSAValue, str] = dict(zip(kernel.body.block.args, kernel.arg_names, strict=True))
    for op in kernel.walk():
        if not isinstance(op, tile.LoadOp | tile.StoreOp):
            continue
        tile_type = op.result.type if isinstance(op, tile.LoadOp) else op.value.type
        assert isinstance(tile_type, tile.ShapedTileType) and isinstance(op.tensor.type, tile.GlobalType)
        shape, tile_shape = tensors[op.tensor].shape, tile_type.get_shape()
        declared = op.tensor.type.get_dims()
        for axis in range(len(shape) - len(tile_shape), len(shape)):
            extent = tile_shape[axis - len(shape) + len(tile_shape)]
            if shape[axis] % extent:
                raise error_at(
                    op,
                    f"{declared[axis]} = {shape[axis]} (axis {axis} of {names[op.tensor]}) is not a multiple "
                    f"of the tile extent {extent}",
                )


def interpret(
    module: Operation,
    kernel: str | None,
    inputs: Mapping[str, np.ndarray],
    params: Mapping[str, int] | None = None,
) -> dict[str, np.ndarray]:
    """Run `kernel` over its whole grid on numpy arrays; returns every argument it stores to.

    `inputs` maps argument names to arrays (any float dtype; each is rounded to its declared
    dtype). Symbolic dims are bound from their shapes and from `params`. An output missing from
    `inputs` starts as NaN, when its shape is known. Outputs come back in their declared dtype
    (`ml_dtypes.bfloat16` for bf16).
    """
    kernel_op = find_kernel(module, kernel)
    names = kernel_op.arg_names
    unknown = set(inputs) - set(names)
    if unknown:
        raise TkError(f"{kernel_op.sym_name.data} has no argument {', '.join(sorted(unknown))} (it takes {', '.join(names)})")
    dims = bind_dims(kernel_op, {n: np.shape(a) for n, a in inputs.items()}, params or {})
    outputs = stored_arguments(kernel_op)
    tensors: dict[SSAValue, np.ndarray] = {}
    for name, arg in zip(names, kernel_op.body.block.args, strict=True):
        assert isinstance(arg.type, tile.GlobalType)
        if name in inputs:
            array = round_to(np.asarray(inputs[name]).astype(np.float32), arg.type.element_type)
        elif name in outputs:
            array = np.full(shape_of(arg.type, dims, name), np.nan, np.float32)
        else:
            raise TkError(f"no array for {name}, an input of {kernel_op.sym_name.data}")
        tensors[arg] = np.array(array, np.float32)
    _check_divisible(kernel_op, tensors)
    with np.errstate(all="ignore"):
        _Machine(kernel_op, tensors).run()
    results = {}
    for name, arg in zip(names, kernel_op.body.block.args, strict=True):
        if name in outputs:
            assert isinstance(arg.type, tile.GlobalType)
            results[name] = tensors[arg].astype(numpy_dtype(arg.type.element_type))
    return results
