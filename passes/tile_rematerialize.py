"""tile-rematerialize: read a register copy of a shared tile again at each use.

A tile loaded once into shared memory and read into registers (`f32(load T[...] : st<f16>[...])`:
twiddle factors, a filter, weights read in a loop) costs registers for as long as the register
copy lives. Where it is defined before a loop and used in it (CSE also merges the equal copies a
loop body reads into one, hoisted with the load), that is the whole loop: with a few such tiles a
kernel runs out of registers that it would not need at all if each use re-read the shared tile,
which an ld.shared per fragment element does cheaply (a shared tile loaded once is never written
again). So this pass decides:

  every `tile.to_reg` of a shared tile that a `tile.load` made, with the `tile.convert` that is
  its only use if any, is cloned right before each of its uses, when a use lies in another block
  than the value's own (the body of a loop or an if).

The register estimate (tile-occupancy-plan) then sees each copy live only from its read to its
use, which it streams. Copies used only in their own block are left to the register allocator:
straight-line code needs no help, and re-reading there would only add shared loads.

A register fill (`zero<f32>[BM, BN]`) is a constant, which costs a move per register to make
again: CSE merges a fill written before a loop with the equal one a loop body starts a `var`
from, and the merged value would live across the whole loop. So, too:

  every `tile.fill` of a register tile or vector used in another block than its own, or after
  a loop or an if of its own block (CSE also merges `var s = zero<f32>[...]`, a loop's initial
  accumulator, with an equal `zero` read after the loop), is cloned right before each such use;
  its other uses keep it. (ptxas makes a constant again where it is read, so only the estimate
  needs this; a shared tile's read it does not repeat, so uses after a loop keep theirs.)

A position tile (`let rows = row_index(x)` before a loop that compares it) is as cheap to make
again, from its offset and the thread's place in the tile, so `tile.position` is treated as a
fill: each use in another block, or after a loop or an if, gets its own copy.

Written on each clone of the `tile.to_reg`, of the `tile.fill` and of the `tile.position`:
  rematerialized = "why"     (the uses that made it worth re-reading or filling again)
Idempotent: the clones are each used once in their own block.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation, Use
from xdsl.passes import ModulePass

from tkc.diagnostics import location_of
from tkc.dialects.tile import (
    ConvertOp,
    FillOp,
    KernelOp,
    LoadOp,
    PositionOp,
    RegisterTileType,
    RegisterVectorType,
    SharedTileType,
    ToRegOp,
)


def _chain(read: ToRegOp) -> list[Operation]:
    """The read and the conversion that is its only use, if any: the ops cloned per use."""
    uses = list(read.result.uses)
    if len(uses) == 1 and isinstance(uses[0].operation, ConvertOp):
        return [read, uses[0].operation]
    return [read]


def _region_between(definer: Operation, user: Operation) -> Operation | None:
    """The first loop or if after `definer` and before `user` in their block, or None."""
    op = definer.next_op
    while op is not None and op is not user:
        if op.regions:
            return op
        op = op.next_op
    return None


def _far_uses(definer: Operation, after_regions: bool) -> tuple[list[Use], str]:
    """The uses of definer's result that would keep it live across a loop or an if: those in
    another block (inside one) and, with `after_regions`, those after one in its own block; and
    how to say so."""
    home = definer.parent_block()
    far: list[Use] = []
    why = ""
    for use in definer.results[0].uses:
        user = use.operation
        if user.parent_block() is not home:
            far.append(use)
            why = why or f"used inside a loop or an if (by {user.name})"
        elif after_regions and (region := _region_between(definer, user)) is not None:
            far.append(use)
            line = location_of(region)[1]
            why = why or f"used after the {region.name}{f' at line {line}' if line else ''} (by {user.name})"
    return far, why


def _reason(chain: list[Operation]) -> str | None:
    """Why the value is worth re-reading at each use, or None where it is not."""
    far, why = _far_uses(chain[-1], after_regions=False)
    if not far:
        return None
    return f"{why}, so kept in registers it would live across the whole of it; re-read from shared memory at each use"


def rematerialize(kernel: KernelOp) -> None:
    reads = [op for op in kernel.walk() if isinstance(op, ToRegOp) and isinstance(op.source.type, SharedTileType)
             and isinstance(op.source.owner, LoadOp) and "rematerialized" not in op.attributes]
    for read in reads:
        chain = _chain(read)
        value = chain[-1].results[0]
        reason = _reason(chain)
        if reason is None:
            continue
        for use in list(value.uses):
            user = use.operation
            clones: list[Operation] = []
            source = read.source
            for op in chain:
                clone = op.clone_without_regions()
                clone.operands = [source]
                clones.append(clone)
                source = clone.results[0]
            clones[0].attributes["rematerialized"] = StringAttr(reason)
            block = user.parent_block()
            assert block is not None
            block.insert_ops_before(clones, user)
            user.operands = [source if operand is value and i == use.index else operand
                             for i, operand in enumerate(user.operands)]
        for op in reversed(chain):
            op.detach()
            op.erase()


def refill(kernel: KernelOp) -> None:
    fills = [op for op in kernel.walk() if isinstance(op, FillOp | PositionOp) and "rematerialized" not in op.attributes
             and isinstance(op.result.type, RegisterTileType | RegisterVectorType)]
    for fill in fills:
        elsewhere, why = _far_uses(fill, after_regions=True)
        if not elsewhere:
            continue
        again = "filled" if isinstance(fill, FillOp) else "computed"
        reason = f"{why}, so kept in registers it would live across the whole of it; {again} again at each use there"
        for use in elsewhere:
            user = use.operation
            clone = fill.clone()
            clone.attributes["rematerialized"] = StringAttr(reason)
            block = user.parent_block()
            assert block is not None
            block.insert_op_before(clone, user)
            user.operands = [clone.result if operand is fill.result and i == use.index else operand
                             for i, operand in enumerate(user.operands)]
        if not any(True for _ in fill.result.uses):
            fill.detach()
            fill.erase()


class TileRematerializePass(ModulePass):
    name = "tile-rematerialize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in op.body.block.ops:
            if isinstance(kernel, KernelOp):
                rematerialize(kernel)
                refill(kernel)
