"""Shared tiles in tile IR, for the passes that lay them out (tile-swizzle-select,
tile-bank-conflicts): the ops that make them, every value a tile flows into through loop-carried
copies, the ops that read it and how wgmma reads it, and `set_swizzle`, the one way to give a
tile a swizzle, which keeps its types, decision, alignment and wgmma descriptors consistent;
`buffer_rows`, the rows its buffer holds (a multiple of 64 for a tile a wgmma reads as A).
"""

from __future__ import annotations

from typing import cast

from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import Rewriter

from tkc.diagnostics import error_at
from tkc.dtypes import of_type
from tkc.dialects.tile import WGMMA_ROWS, DecisionAttr, LoadOp, MmaOp, SharedTileType, ToSharedOp, element_bytes
from tkc.passes.wgmma_layout import Descriptor, descriptor


def wgmma_descriptor(tile: SharedTileType, major: str, rows: int | None = None) -> Descriptor:
    """The descriptor of `tile` read `major`-major, in a buffer of `rows` rows (buffer_rows; the
    tile's own by default)."""
    return descriptor(rows or tile.rows, tile.swizzle.data, major, element_bytes(tile.element_type))


def _dtype_name(type_: SharedTileType) -> str:
    dtype = of_type(type_.element_type)
    return dtype.name if dtype is not None else str(type_.element_type)


def buffer_rows(op: Operation) -> int:
    """The rows of the shared buffer of a load or tile.to_shared tile: the tile's, except that a
    loaded tile whose rows are no multiple of 64 read as a wgmma's A (its M rows) gets them
    rounded up to one (16 rows as 64, 96 as 128): the wgmmas read whole 64-row slices (m64),
    and the rows past the tile's, which TMA never writes, only reach the product's padding rows
    (plan.fragment_rows). Read as a B or a transposed A as well, its rows would be K or N there,
    which the padding would change: that is refused."""
    type_ = op.results[0].type
    if not isinstance(type_, SharedTileType):
        return 1
    padded = -(-type_.rows // WGMMA_ROWS) * WGMMA_ROWS
    if padded == type_.rows:
        return type_.rows
    reads = [use for v in connected(op.results[0]) for use in v.uses if isinstance(use.operation, MmaOp)]
    as_m = [use for use in reads if use.index == 0 and cast(MmaOp, use.operation).transpose_a is None]
    if not as_m:
        return type_.rows
    if len(as_m) != len(reads):
        raise error_at(
            op, f"this {type_.rows}-row shared tile is the A of an mma (its rows are M, computed in 64-row slices "
                f"of wgmmas) and also a B or a transposed A (its rows are K or N): the GPU backend pads it to {padded} "
                f"rows for the first, which would change the second; give the mma that reads it as its A a "
                f"register copy instead: load the tile again as `rt<{_dtype_name(type_)}>[{type_.rows}, {type_.cols}]` "
                "(an mma takes its A from registers too; a second shared load at the same coordinates would be "
                "the same value)",
        )
    return padded


def buffer_columns(op: Operation) -> int:
    """The columns the shared buffer of a load or tile.to_shared tile has room for: the tile's,
    except that a tile a wgmma reads as a transposed A (its columns are M, read MN-major in
    64-column slices) whose columns are no multiple of 64 (96: a 96-row product) gets the room
    of whole slices, its last panels past the tile's. TMA and the moves never write them; the
    wgmma reads them only into the product's padding rows, and without the room it would read
    past the end of shared memory."""
    type_ = op.results[0].type
    if not isinstance(type_, SharedTileType):
        return 1
    columns = type_.get_shape()[-1]
    padded = -(-columns // WGMMA_ROWS) * WGMMA_ROWS
    reads = [use for v in connected(op.results[0]) for use in v.uses if isinstance(use.operation, MmaOp)]
    if padded != columns and any(use.index == 0 and cast(MmaOp, use.operation).transpose_a is not None for use in reads):
        return padded
    return columns


def operand_major(mma: MmaOp, operand: SSAValue) -> str:
    """How wgmma reads a shared operand: A is K-major unless transposed; mma_AB reads B MN-major."""
    if operand is mma.a:
        return "MN" if mma.transpose_a else "K"
    return "K" if mma.transpose_b else "MN"


def connected(value: SSAValue) -> list[SSAValue]:
    """The value and every block argument / result it flows into through scf iter_args and yields."""
    found: list[SSAValue] = []
    todo = [value]
    while todo:
        v = todo.pop()
        if any(v is f for f in found):
            continue
        found.append(v)
        for use in v.uses:
            user = use.operation
            if isinstance(user, scf.ForOp) and use.index >= 3:
                todo += [user.body.block.args[use.index - 2], user.results[use.index - 3]]
            elif isinstance(user, scf.YieldOp) and isinstance(parent := user.parent_op(), scf.ForOp | scf.IfOp):
                todo.append(parent.results[use.index])
                if isinstance(parent, scf.ForOp):
                    todo.append(parent.body.block.args[use.index + 1])
    return found


def users(value: SSAValue) -> list[tuple[Operation, SSAValue]]:
    """(op, operand value) for every tile op that reads the tile, through loop-carried copies."""
    return [
        (use.operation, v)
        for v in connected(value)
        for use in v.uses
        if not isinstance(use.operation, scf.ForOp | scf.YieldOp)
    ]


def shared_tile_ops(module: ModuleOp) -> list[LoadOp | ToSharedOp]:
    return [
        op
        for op in module.walk()
        if isinstance(op, LoadOp | ToSharedOp) and isinstance(op.result.type, SharedTileType)
    ]


def read_by_wgmma(op: LoadOp | ToSharedOp) -> list[tuple[MmaOp, str]]:
    return [(user, operand_major(user, v)) for user, v in users(op.result) if isinstance(user, MmaOp)]


def set_swizzle(op: LoadOp | ToSharedOp, swizzle: int, reason: str) -> None:
    """Give the tile `swizzle`: its type everywhere it flows, the decision, alignment and descriptors."""
    for v in connected(op.result):
        assert isinstance(v.type, SharedTileType)
        Rewriter.replace_value_with_new_type(v, v.type.with_swizzle(swizzle))
    op.attributes["swizzle"] = DecisionAttr(swizzle, reason)
    op.attributes["smem_align"] = IntegerAttr(max(8 * swizzle, 128), 64)
    for user, v in users(op.result):
        if isinstance(user, MmaOp):
            assert isinstance(v.type, SharedTileType)
            desc = wgmma_descriptor(v.type, operand_major(user, v), buffer_rows(op))
            name = "a_desc" if v is user.a else "b_desc"
            panels = -(-v.type.cols * element_bytes(v.type.element_type) // max(v.type.swizzle.data, 1))
            user.attributes[name] = DecisionAttr(IntegerAttr(desc.constant, 64), desc.describe(panels))
