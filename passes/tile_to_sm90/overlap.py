"""A loop whose last mma runs one iteration late (tile-pipeline's `overlap` decision,
plan.late_tail), as FlashAttention-3 does within a warpgroup:

    if trips > 0:
        head(first)
        for the rest: rescale O; issue head mma j (S = QK^T_j); issue tail j-1 (O += P.V_{j-1});
                      wait for the head mma only; rest of head j (softmax) while the tail runs;
                      wait for the tail just before P is rewritten; free stage j-1
        tail(last); free the last stage

With tile-pipeline's `turns`, the consumers take turns issuing the two mmas: each waits on its
own named barrier before them and, once both are issued, arrives on the next consumer's (the
last consumer arrives on the first's once at the start, consumer.py), so the tensor cores run
one warpgroup's products while the others compute their softmax (FlashAttention-3's ping-pong).

The values the tail takes from the head (P, the rescale factors) and the stage the tail reads
(V) are the previous iteration's: the former ride along as loop-carried fragments, the
latter's views are rebuilt from the iteration count minus one. The tail's product is waited
for just before the head writes the tail's next A operand: ptxas gives both the same
registers, and rewriting registers an in-flight wgmma reads serializes the wgmmas (C7513).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, StringAttr
from xdsl.ir import Block, Operation, Region, SSAValue

from tkc.dialects import sm90, tile
from tkc.passes.plan import WARPGROUP_THREADS, KernelPlan, turn_barrier
from tkc.passes.tile_to_sm90.mma import issue_mma
from tkc.passes.tile_to_sm90.rings import release, stage_address, view_stage, wait_stage
from tkc.passes.tile_to_sm90.shared_memory import Ring

if TYPE_CHECKING:
    from tkc.passes.tile_to_sm90.consumer import ConsumerEmitter


@dataclass
class LateTail:
    """What an overlapped loop's iteration needs to issue the previous iteration's tail."""

    ops: list[Operation]
    """The tail (plan.late_tail): element-wise ops, then the mma."""
    crossing: list[SSAValue]
    """Head values the tail reads (P, the rescale factors), carried one iteration."""
    carried: list[SSAValue]
    """Their previous iteration's values."""
    loads: list[tile.LoadOp]
    """Ring loads the tail reads (V), viewed at the previous iteration's stage."""
    iteration: SSAValue
    """The previous iteration's ring count."""
    turns: bool = False
    """Whether the consumers take turns issuing the two mmas (tile-pipeline's `turns`)."""


def emit_overlapped_for(c: ConsumerEmitter, loop: scf.ForOp, rings: list[Ring], tail: list[Operation],
                        block: Block) -> None:
    """With a split ring (tile-pipeline's split_ring: rings = the head's part, the tail's part),
    the head waits for its part only, the tail waits for its own part of the previous stage
    just before it issues, and each iteration frees its own head part and the previous
    iteration's tail part; with one ring, the head waits for the whole stage and the iteration
    frees the previous one."""
    ring = rings[0]
    tail_ring = rings[1] if len(rings) > 1 else None
    old_block = loop.body.block
    yield_op = old_block.last_op
    assert isinstance(yield_op, scf.YieldOp)
    tail_set = set(tail)
    head = [op for op in old_block.ops if op not in tail_set and op is not yield_op]
    first_mma = next(op for op in head if isinstance(op, tile.MmaOp))
    tail_index = list(yield_op.operands).index(tail[-1].results[0])
    carried_acc = old_block.args[1 + tail_index]
    crossing: list[SSAValue] = []
    tail_loads: list[tile.LoadOp] = []
    for op in tail:
        for v in op.operands:
            if isinstance(v.owner, tile.LoadOp) and v.owner.parent_block() is old_block:
                if v.owner not in tail_loads:
                    tail_loads.append(v.owner)
            elif (isinstance(v.owner, Operation) and v.owner.parent_block() is old_block
                  and v.owner not in tail_set and v not in crossing):
                crossing.append(v)
    init = [c.values[v] for v in loop.iter_args]
    lb, ub, step = c.bounds(loop, block)
    trips = c.trip_count(loop, block)
    ran = c.op(arith.CmpiOp(trips, c.const(0, block), "ugt"), block).results[0]
    then = Block()
    assert not c.start_loop_counts(loop), "late_tail leaves out loops with rings nested in them"
    ring_count = c.entries[loop]

    # the first iteration's head
    c.values[old_block.args[0]] = lb
    for arg, value in zip(old_block.args[1:], init):
        c.values[arg] = value
    _emit_head(c, head, ring, ring_count, then)
    if tail_ring is not None:
        release(c, ring, ring_count, then)
    carried_init = [
        init[i] if i == tail_index else c.values[v] for i, v in enumerate(yield_op.operands)
    ] + [c.values[v] for v in crossing]

    body = Block(arg_types=[IndexType(), *(v.type for v in carried_init)])
    start = c.add(lb, step, then)
    new_loop = scf.ForOp(start, ub, step, carried_init, body)
    new_loop.attributes["softmax_overlap"] = StringAttr(
        "the last mma accumulates into a carried tile nothing else reads, so it runs one iteration late: "
        "each iteration issues its first mma, then the previous iteration's last one, and computes on the "
        "first product while the tensor cores run both"
    )
    c.op(new_loop, then)
    n = len(old_block.args) - 1
    c.values[old_block.args[0]] = body.args[0]
    for arg, value in zip(old_block.args[1:], body.args[1 : 1 + n]):
        c.values[arg] = value
    it = c.iteration(loop, body.args[0], body)
    previous = c.sub(it, c.const(1, body), body)
    late = LateTail(tail, crossing, list(body.args[1 + n :]), tail_loads, previous, KernelPlan.takes_turns(loop))
    done = _emit_head(c, head, ring, it, body, late, first_mma)
    assert done is not None
    if tail_ring is not None:
        release(c, ring, it, body)
    release(c, tail_ring or ring, previous, body)
    body.add_op(scf.YieldOp(
        *(done if i == tail_index else c.values[v] for i, v in enumerate(yield_op.operands)),
        *(c.values[v] for v in crossing),
    ))

    # the last iteration's tail
    last = c.sub(c.add(ring_count, trips, then), c.const(1, then), then)
    c.values[carried_acc] = new_loop.results[tail_index]
    _, acc = _emit_tail(c, LateTail(tail, crossing, list(new_loop.results[n:]), tail_loads, last), then)
    final = c.op(sm90.WgmmaWaitOp(acc, 0), then).results[0]
    release(c, tail_ring or ring, last, then)
    then.add_op(scf.YieldOp(*(final if i == tail_index else new_loop.results[i] for i in range(n))))
    skipped = Block()
    skipped.add_op(scf.YieldOp(*init))
    result = c.op(scf.IfOp(ran, [v.type for v in init], Region(then), Region(skipped)), block)
    for old, new in zip(loop.results, result.results):
        c.values[old] = new
    c.end_loop_counts(loop, [], block)


def _turn_barriers(c: ConsumerEmitter, block: Block) -> tuple[SSAValue, SSAValue]:
    """This consumer's turn barrier and the next consumer's. Computed where they are used: values
    live across the loop cost registers the softmax may need (ALiBi at D = 128 spilled one)."""
    first = c.const(turn_barrier(c.lowering.consumers, 0), block)
    following = c.rem(c.add(c.consumer_index, c.const(1, block), block), c.const(c.lowering.consumers, block), block)
    return c.add(first, c.consumer_index, block), c.add(first, following, block)


def _emit_head(c: ConsumerEmitter, head: list[Operation], ring: Ring, it: SSAValue, block: Block,
               late: LateTail | None = None, first_mma: Operation | None = None) -> SSAValue | None:
    """The head of an overlapped loop's iteration `it`; with `late`, the previous iteration's
    tail is issued right after `first_mma`, and its product waited for (and returned) just
    before the head writes the tail's next A operand."""
    acc = done = None
    a_operand = cast(tile.MmaOp, late.ops[-1]).a if late is not None else None
    for op in head:
        if isinstance(op, tile.LoadOp):
            if op is c.slot_position(ring.loads):
                c.ring_slot(ring, ring.loads, it, block)
            c.loaded(op, block)
            continue
        if late is not None and op is first_mma:
            issued, acc = _emit_tail(c, late, block, cast(tile.MmaOp, op))
            assert issued is not None
            c.values[op.results[0]] = c.op(sm90.WgmmaWaitOp(issued, 1), block).results[0]
            continue
        if acc is not None and done is None and a_operand in op.results:
            done = c.op(sm90.WgmmaWaitOp(acc, 0), block).results[0]
        c.emit_op(op, block)
    if acc is not None and done is None:
        done = c.op(sm90.WgmmaWaitOp(acc, 0), block).results[0]
    return done


def _emit_tail(c: ConsumerEmitter, late: LateTail, block: Block,
               head_mma: tile.MmaOp | None = None) -> tuple[SSAValue | None, SSAValue]:
    """Issue the tail of ring iteration `late.iteration` on the carried head values, and
    `head_mma` between the tail's element-wise ops and its mma: ptxas serializes wgmmas
    (C7513) when other instructions write a wgmma's registers between two groups in flight.
    Returns the head's and the tail's (not yet waited) products; the head's own values are
    restored afterwards."""
    saved = {v: c.values.get(v) for v in [*late.crossing, *(load.result for load in late.loads)]}
    c.values.update(zip(late.crossing, late.carried))
    if late.loads:
        ring = c.memory.ring_loading(late.loads[0])
        # a split ring's tail part is waited for here; one ring's stage was, by its head
        split = len(c.memory.rings_of(ring.owner)) > 1 if ring.owner is not None else False
        stage = (wait_stage if split else stage_address)(c, ring, late.iteration, block)
        view_stage(c, ring, late.loads, stage, block)
    for op in late.ops[:-1]:
        c.emit_op(op, block)
    late_values = {v: c.values[v] for v in saved}
    for v, value in saved.items():
        if value is not None:
            c.values[v] = value
    if late.turns:
        mine, following = _turn_barriers(c, block)
        c.op(sm90.NamedBarrierOp(mine, 2 * WARPGROUP_THREADS), block)
    issued = issue_mma(c, head_mma, block) if head_mma is not None else None
    c.values.update(late_values)
    acc = issue_mma(c, cast(tile.MmaOp, late.ops[-1]), block)
    if late.turns:
        c.op(sm90.NamedBarrierArriveOp(following, 2 * WARPGROUP_THREADS), block)
    for v, value in saved.items():
        if value is not None:
            c.values[v] = value
    return issued, acc
