"""Matrix FLOPs a tile kernel performs for given dims: 2·M·N·K per `tile.mma`, summed over the
grid and over loop trips, the convention FLOP/s figures use (attention: 4·B·H·N²·D, halved for
causal by its shorter loops). Index math is evaluated for every block at once with numpy, so
loops whose bounds depend on the block index are counted exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

import numpy as np
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, Operation, SSAValue

from tkc.dialects import tile

_BINARY: dict[type, Callable[[np.ndarray, np.ndarray], np.ndarray]] = {
    arith.AddiOp: np.add,
    arith.SubiOp: np.subtract,
    arith.MuliOp: np.multiply,
    arith.DivUIOp: np.floor_divide,
    arith.FloorDivSIOp: np.floor_divide,
    arith.CeilDivSIOp: lambda a, b: -(-a // b),
    arith.DivSIOp: np.floor_divide,
    arith.RemUIOp: np.remainder,
    arith.RemSIOp: np.remainder,
    arith.CeilDivUIOp: lambda a, b: -(-a // b),
    arith.MinUIOp: np.minimum,
    arith.MaxUIOp: np.maximum,
    arith.MinSIOp: np.minimum,
    arith.MaxSIOp: np.maximum,
    arith.AndIOp: np.bitwise_and,
    arith.OrIOp: np.bitwise_or,
}
_COMPARE = {"eq": np.equal, "ne": np.not_equal, "ult": np.less, "slt": np.less, "ule": np.less_equal,
            "sle": np.less_equal, "ugt": np.greater, "sgt": np.greater, "uge": np.greater_equal,
            "sge": np.greater_equal}


def count_flops(kernel: tile.KernelOp, dims: dict[str, int]) -> float:
    values: dict[SSAValue, np.ndarray] = {}
    body = kernel.body.block
    grid = next(op for op in body.ops if isinstance(op, tile.GridOp))
    for op in body.ops:
        if op is grid:
            break
        _evaluate(op, values, dims, np.zeros(1, dtype=np.int64))
    extents = [int(np.max(values[v])) for v in grid.extents]
    ids = np.indices(extents).reshape(len(extents), -1).astype(np.int64)
    block_ids = {axis: ids[axis] for axis in range(len(extents))}
    per_block = _block_flops(body, values, dims, block_ids)
    return float(np.sum(np.broadcast_to(per_block, ids.shape[1:])))


def _evaluate(op: Operation, values: dict[SSAValue, np.ndarray], dims: dict[str, int], block_ids: object) -> None:
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        values[op.result] = np.array(op.value.value.data, dtype=np.int64)
    elif isinstance(op, tile.DimOp):
        dim = cast(tile.GlobalType, op.tensor.type).get_dims()[op.axis.value.data]
        values[op.result] = np.array(dims[dim] if isinstance(dim, str) else dim, dtype=np.int64)
    elif isinstance(op, tile.BlockIdOp) and isinstance(block_ids, dict):
        values[op.result] = block_ids[op.axis.value.data]
    elif type(op) in _BINARY and all(v in values for v in op.operands):
        lhs, rhs = (values[v] for v in op.operands)
        if type(op).__name__.startswith(("Div", "Rem", "CeilDiv")):
            rhs = np.maximum(rhs, 1)  # blocks that never reach this op may divide by zero
        values[op.results[0]] = _BINARY[type(op)](lhs, rhs)
    elif isinstance(op, arith.CmpiOp) and all(v in values for v in op.operands):
        predicate = arith.CMPI_COMPARISON_OPERATIONS[op.predicate.value.data]
        values[op.result] = _COMPARE[predicate](values[op.lhs], values[op.rhs]).astype(np.int64)
    elif isinstance(op, arith.SelectOp) and all(v in values for v in op.operands):
        values[op.result] = np.where(values[op.cond] != 0, values[op.lhs], values[op.rhs])
    elif isinstance(op, arith.IndexCastOp) and op.input in values:
        values[op.result] = values[op.input]


def _block_flops(block: Block, values: dict[SSAValue, np.ndarray], dims: dict[str, int], block_ids: object) -> np.ndarray:
    total = np.zeros(1, dtype=np.float64)
    for op in block.ops:
        if isinstance(op, tile.MmaOp):
            m, n, k = op.problem_shape()
            total = total + 2.0 * m * n * k
        elif isinstance(op, scf.ForOp):
            lb, ub, step = (values.get(v, np.array(0)) for v in (op.lb, op.ub, op.step))
            trips = np.maximum(0, -(-(ub - lb) // np.maximum(step, 1)))
            values[op.body.block.args[0]] = lb
            total = total + trips * _block_flops(op.body.block, values, dims, block_ids)
        elif isinstance(op, scf.IfOp):
            taken = values.get(op.cond, np.array(1)) != 0
            then = _block_flops(op.true_region.block, values, dims, block_ids)
            other = _block_flops(op.false_region.block, values, dims, block_ids) if op.false_region.blocks else 0.0
            total = total + np.where(taken, then, other)
        else:
            _evaluate(op, values, dims, block_ids)
    return total
