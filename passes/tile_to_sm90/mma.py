"""tile.mma → sm90.wgmma and the wait for its group.

A wgmma reads A from shared memory (from the consumer's first row of the product: a shared tile
is whole, whatever the height of the tiles written to it) or from registers, and B from shared
memory; its product may be read only after a wgmma_wait. Most products are waited on at
once. A loop that only accumulates (`accumulation_chain`: acc = mma(a, b, acc), as GEMM's K
loop) keeps one group in flight across the back edge instead: each iteration waits for the
previous group, not the one just issued, and frees the previous group's stage, so the tensor
cores never idle on a barrier. Loops whose last mma runs one iteration late are overlap.py's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xdsl.dialects import scf
from xdsl.ir import Block, SSAValue

from tkc.dialects import sm90, tile

if TYPE_CHECKING:
    from tkc.passes.tile_to_sm90.consumer import ConsumerEmitter


def accumulation_chain(loop: scf.ForOp) -> tile.MmaOp | None:
    """The loop's one mma when it only accumulates into a loop-carried tile (acc = mma(a, b, acc)
    yielded and used by nothing else): its wgmma can stay in flight across the back edge, with
    the wait deferred by one iteration. Not when it reads a tile.to_shared tile written in the
    loop: the next write must find its reads done."""
    mmas = [op for op in loop.body.block.ops if isinstance(op, tile.MmaOp)]
    if len(mmas) != 1 or mmas[0].acc is None:
        return None
    if any(isinstance(v.owner, tile.ToSharedOp) and loop.is_ancestor(v.owner) for v in (mmas[0].a, mmas[0].b)):
        return None
    mma = mmas[0]
    yield_op = loop.body.block.last_op
    uses = [use.operation for use in mma.result.uses]
    carried = mma.acc in loop.body.block.args and len(list(mma.acc.uses)) == 1
    return mma if carried and uses == [yield_op] else None


def issue_mma(c: ConsumerEmitter, op: tile.MmaOp, block: Block) -> SSAValue:
    """The wgmma group of `op`, issued; its product may be read only after a wgmma_wait."""
    a = c.values[op.a]
    shared_a = isinstance(a.type, sm90.SharedRefType)
    acc = c.values[op.acc] if op.acc is not None else None
    mma = sm90.WgmmaOp(
        a,
        c.values[op.b],
        acc,
        c.lowering.fragment_type(op.result.type),
        op.transpose_a is not None,
        op.transpose_b is not None,
        c.row0(op.result.type) if shared_a else None,
    )
    c.op(mma, block)
    return mma.result


def emit_mma(c: ConsumerEmitter, op: tile.MmaOp, block: Block, pending: int = 0) -> None:
    """Issue `op` and wait until at most `pending` groups are in flight."""
    issued = issue_mma(c, op, block)
    c.values[op.result] = c.op(sm90.WgmmaWaitOp(issued, pending), block).results[0]
