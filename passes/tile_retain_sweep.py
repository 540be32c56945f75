"""tile-retain-sweep: keep the tiles a sweep loads in shared memory for the sweep after it.

A two-sweep row kernel (softmax: an online max and sum over the column tiles, then the normalised
exponentials over the same tiles) reads every tile twice. tile-sweep-order walks the second sweep
backwards so that it starts with the tiles still in L2, but the tiles the first sweep read first
are evicted by the time the second comes back to them: measured on an H100, softmax re-read
43 % of its input from DRAM at 16384 x 4096 and all of it at 8192 x 16384, and the same kernel
with the second sweep's loads taken out ran at 0.91-0.95 of a device copy against 0.65-0.79.
Shared memory the plan leaves unused can hold some of those tiles. So this pass decides:

  a register-tile load of an `scf.for` (directly in its body, its one use a tile.to_reg) that
  the loop just before it (same bounds, step 1) also loads directly in its body, from the same
  tensor at the same coordinates as a function of each loop's counter (tile-sweep-order's
  match), of a tensor the kernel never stores to, is served from shared memory for its first R
  iterations (counted from the loop's lower bound, in whichever direction it walks): the first
  loop keeps each of its first R register tiles (`tile.retain`, slot = counter - lb), and the
  second reads them back (`tile.recall`) instead of loading them, loading only the others.
  Likewise a load of the tiles the loop before it stored (layernorm's H, read back by the
  second sweep), where that store is the kernel's only store to the tensor, of a 2-D tile at
  coordinates never negative: the stored register tile is kept, and recalled with its
  elements past the tensor's end zeroed (under an scf.if that only a partial tile takes), as
  the load reads them (TMA fills zeros there, and sums rely on them).
  R is as many slots as fit the shared memory the plan leaves unused at its blocks per SM
  (min(232448, SM / blocks - 1 KB reserved) - smem_bytes, every retained load of the loop
  taking a slot), so the stages and the blocks per SM stay as planned; at most the loop's trip
  count where that is a constant. Where the second loop walks backwards, the tiles it loads
  are the ones the first read last, which L2 is likeliest still to hold.

Each consumer thread writes the elements of its fragment and reads the same ones back, so a
retained tile needs no barrier. Kept to one consumer warpgroup (a tile computed whole by
several would have them write the same bytes). A retained load's tile is the loaded one, so the
second loop computes what it did: tiles past a tensor's end were padded when first loaded.

Written on the second loop (and the buffers' bytes on the plan's smem_bytes):
  retain = #tile.decision<R, "keeps the first R of the tiles of X the loop at line 7 loaded in shared memory ...">
         | #tile.decision<0, "pinned by @retain(0)" | what @retain(1) would keep | why none fit>
For now only `@retain(1)` on the kernel (or -D @retain=1) keeps tiles: the lowering was built
without a GPU to run it on, so unpinned the decision says what the pin would keep and keeps
nothing until the pin is checked and timed on the GPU. `@retain(0)` keeps every load. A loop
that already has its `retain` decision (a dump given back to `tkc compile`) is left as it is.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tkc.diagnostics import line_label
from tkc.dialects.tile import (
    BLOCK_RESERVED_SMEM,
    SM_SMEM,
    SMEM_BUDGET,
    BoundsMaskOp,
    DecisionAttr,
    DimOp,
    KernelOp,
    LoadOp,
    RecallOp,
    RegisterTileType,
    RetainOp,
    SharedTileType,
    StoreOp,
    ToRegOp,
    index_constant,
)
from tkc.passes.plan import KernelPlan, retention_slot_bytes, smem_plan
from tkc.passes.signs import never_negative
from tkc.passes.sweeps import loop_counter, previous_loop, same_walk, tensor_name

_PIN, _DECISION = "retain", "retain"


@dataclass(frozen=True)
class _Pair:
    """A register tile of the first sweep (a load's, or the value of a store) and the load of the
    second that reads the same tiles back."""

    first: ToRegOp | StoreOp
    second: ToRegOp

    @property
    def kept(self) -> SSAValue:
        return self.first.value if isinstance(self.first, StoreOp) else self.first.result

    @property
    def layout(self) -> SharedTileType:
        t = self.second.source.type
        assert isinstance(t, SharedTileType)
        return t

    @property
    def slot_bytes(self) -> int:
        return retention_slot_bytes(self.layout)


def _register_load(op: Operation, loop: scf.ForOp) -> ToRegOp | None:
    """The tile.to_reg of a tile load directly in `loop`'s body whose one use it is, or None."""
    if not isinstance(op, LoadOp) or op.parent_op() is not loop or op.ends or not op.result.has_one_use():
        return None
    if not isinstance(op.result.type, SharedTileType) or op.attributes.keys() - {"swizzle", "smem_align", "pad", "memory_order"}:
        return None
    use = op.result.get_user_of_unique_use()
    if not isinstance(use, ToRegOp) or use.parent_op() is not loop or not isinstance(use.result.type, RegisterTileType):
        return None
    return use


def _register_store(op: Operation, loop: scf.ForOp, stores: dict[SSAValue, list[StoreOp]]) -> StoreOp | None:
    """A plain store of a 2-D register tile directly in `loop`'s body, the only store to its
    tensor in the kernel (so a later load of its tiles reads what it wrote), at coordinates that
    are never negative, or None."""
    if not isinstance(op, StoreOp) or op.parent_op() is not loop or op.ends or op.reduce is not None:
        return None
    t = op.value.type
    if not isinstance(t, RegisterTileType) or len(t.get_shape()) != 2 or len(op.coords) != 2:
        return None
    if stores[op.tensor] != [op] or not all(never_negative(c) for c in op.coords):
        return None  # (a tile before row or column 0 loads zeros there, which the mask would not give)
    return op


def _same_tiles(load: LoadOp, earlier: LoadOp | StoreOp, loop: scf.ForOp, previous: scf.ForOp) -> bool:
    t = earlier.result.type if isinstance(earlier, LoadOp) else earlier.value.type
    assert isinstance(t, RegisterTileType | SharedTileType) and isinstance(load.result.type, SharedTileType)
    return (earlier.tensor is load.tensor and len(load.coords) == len(earlier.coords)
            and (t.get_shape(), t.element_type) == (load.result.type.get_shape(), load.result.type.element_type)
            and (isinstance(earlier, StoreOp) or earlier.result.type == load.result.type)
            and all(same_walk(x, y, loop, previous) for x, y in zip(load.coords, earlier.coords)))


def _pairs(loop: scf.ForOp, previous: scf.ForOp, stores: dict[SSAValue, list[StoreOp]]) -> list[_Pair]:
    if (loop.lb, loop.ub, loop.step) != (previous.lb, previous.ub, previous.step) or index_constant(loop.step) != 1:
        return []
    if loop_counter(loop) is None or loop_counter(previous) is None:
        return []
    firsts: list[ToRegOp | StoreOp] = []
    for op in previous.body.block.ops:
        if (kept := _register_load(op, previous) or _register_store(op, previous, stores)) is not None:
            firsts.append(kept)
    pairs: list[_Pair] = []
    for op in loop.body.block.ops:
        second = _register_load(op, loop)
        if second is None:
            continue
        load = second.source.owner
        assert isinstance(load, LoadOp)
        for first in firsts:
            earlier = first if isinstance(first, StoreOp) else first.source.owner
            assert isinstance(earlier, LoadOp | StoreOp)
            if (load.tensor not in stores or isinstance(first, StoreOp)) and _same_tiles(load, earlier, loop, previous):
                pairs.append(_Pair(first, second))
                firsts.remove(first)
                break
    return pairs


def _slot_test(loop: scf.ForOp, slots: int, at: InsertPoint) -> tuple[SSAValue, arith.CmpiOp]:
    """The iteration's slot, counter - lb (the same tile's in both loops), and the test whether
    it is below `slots`: inserted at `at`."""
    counter = loop_counter(loop)
    assert counter is not None
    slot = arith.SubiOp(counter, loop.lb)
    limit = arith.ConstantOp(IntegerAttr(slots, IndexType()))
    kept = arith.CmpiOp(slot, limit, "ult")
    Rewriter.insert_op([slot, limit, kept], at)
    return slot.result, kept


def _retain(pair: _Pair, loop: scf.ForOp, buffer: int, slots: int) -> None:
    """After the first loop's to_reg or store: if slot < slots, keep the tile in its slot."""
    slot, kept = _slot_test(loop, slots, InsertPoint.after(pair.first))
    then = Block([RetainOp(pair.kept, slot, buffer, slots, pair.layout), scf.YieldOp()])
    Rewriter.insert_op(scf.IfOp(kept.result, [], Region(then), Region(Block([scf.YieldOp()]))), InsertPoint.after(kept))


def _zero_past_end(load: LoadOp, value: SSAValue) -> list[Operation]:
    """The ops that zero the elements of `value` past the end of `load`'s tensor, as the load
    would read them: under an scf.if that only a partial tile takes (its last op)."""
    shape = cast(SharedTileType, load.result.type).get_shape()
    ops: list[Operation] = []
    limits: list[SSAValue] = []
    partial: SSAValue | None = None
    for axis, (coord, extent) in enumerate(zip(load.coords, shape)):
        dim, size = DimOp(load.tensor, axis), arith.ConstantOp(IntegerAttr(extent, IndexType()))
        start = arith.MuliOp(coord, size)
        limit = arith.SubiOp(dim, start)
        short = arith.CmpiOp(limit, size, "slt")
        ops += [dim, size, start, limit, short]
        limits.append(limit.result)
        if partial is None:
            partial = short.result
        else:
            either = arith.OrIOp(partial, short)
            ops.append(either)
            partial = either.result
    assert partial is not None
    masked = BoundsMaskOp(value, limits, 0.0)
    ops.append(scf.IfOp(partial, [value.type], Region(Block([masked, scf.YieldOp(masked.result)])),
                        Region(Block([scf.YieldOp(value)]))))
    return ops


def _recall(pair: _Pair, loop: scf.ForOp, buffer: int, slots: int) -> None:
    """The second loop's load and to_reg become: slot < slots ? recall : load + to_reg (a store's
    tile recalled with its elements past the tensor's end zeroed, as the load reads them)."""
    load = pair.second.source.owner
    assert isinstance(load, LoadOp)
    slot, kept = _slot_test(loop, slots, InsertPoint.before(load))
    recall: list[Operation] = [RecallOp(slot, buffer, slots, pair.layout)]
    if isinstance(pair.first, StoreOp):
        recall += _zero_past_end(load, recall[0].results[0])
    branch = scf.IfOp(kept.result, [pair.second.result.type],
                      Region(Block([*recall, scf.YieldOp(recall[-1].results[0])])), Region(Block()))
    Rewriter.insert_op(branch, InsertPoint.after(kept))
    pair.second.result.replace_all_uses_with(branch.results[0])
    for op in (load, pair.second):
        op.detach()
        branch.false_region.block.add_op(op)
    branch.false_region.block.add_op(scf.YieldOp(pair.second.result))


def _free_bytes(kernel: KernelOp, plan: KernelPlan) -> int:
    """The shared memory a block may still take without changing the plan's blocks per SM."""
    per_block = min(SMEM_BUDGET, SM_SMEM // max(plan.ctas_per_sm, 1) - BLOCK_RESERVED_SMEM)
    return per_block - smem_plan(kernel, plan.stages).total


def _decide(kernel: KernelOp, loop: scf.ForOp, previous: scf.ForOp, pairs: list[_Pair], buffers: int,
            pinned: bool) -> DecisionAttr:
    plan = KernelPlan.of(kernel)
    names = " and ".join(dict.fromkeys(tensor_name(p.second.source.owner) for p in pairs))  # type: ignore[arg-type]
    verbs = " and ".join(dict.fromkeys("stored" if isinstance(p.first, StoreOp) else "loaded" for p in pairs))
    what = f"the tiles of {names} the loop at {line_label(previous)} {verbs}"
    if plan.consumers != 1:
        return DecisionAttr(0, f"re-reads {what}; kept only with one consumer warpgroup, this kernel has {plan.consumers}")
    per_slot = sum(p.slot_bytes for p in pairs)
    slots = max(_free_bytes(kernel, plan) // per_slot, 0)
    trips = index_constant(loop.ub) if index_constant(loop.lb) == 0 else None
    if trips is not None:
        slots = min(slots, trips)
    if slots == 0:
        return DecisionAttr(0, f"re-reads {what}; no slot of {per_slot} B fits beside the plan's "
                               f"{plan.smem_bytes} B at {plan.ctas_per_sm} block(s) per SM")
    which = f"all {slots} of" if slots == trips else f"the first {slots} of"
    if not pinned:
        return DecisionAttr(0, f"re-reads {what}; @retain(1) would keep {which} them in shared memory ({slots} x "
                               f"{per_slot} B free at {plan.ctas_per_sm} block(s) per SM): off unless pinned, until "
                               f"it is timed on the GPU")
    for index, pair in enumerate(pairs):
        _retain(pair, previous, buffers + index, slots)
        _recall(pair, loop, buffers + index, slots)
    return DecisionAttr(slots, f"keeps {which} {what} in shared memory ({slots} x {per_slot} B, what the plan leaves "
                               f"free at {plan.ctas_per_sm} block(s) per SM) and reads them there, not again from "
                               f"L2 or DRAM")


class TileRetainSweepPass(ModulePass):
    name = "tile-retain-sweep"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.body.block.ops if isinstance(k, KernelOp)]:
            pin = kernel.annotations.data.get(_PIN)
            stores: dict[SSAValue, list[StoreOp]] = {}
            for store in (o for o in kernel.walk() if isinstance(o, StoreOp)):
                stores.setdefault(store.tensor, []).append(store)
            buffers = len({r.buffer.value.data for r in kernel.walk() if isinstance(r, RetainOp)})
            kept: list[str] = []
            for loop in [o for o in kernel.walk() if isinstance(o, scf.ForOp)]:
                previous = previous_loop(loop)
                if _DECISION in loop.attributes or previous is None:
                    continue
                pairs = _pairs(loop, previous, stores)
                if not pairs:
                    continue
                if isinstance(pin, IntegerAttr) and pin.value.data == 0:
                    loop.attributes[_DECISION] = DecisionAttr(0, "pinned by @retain(0)")
                    continue
                decision = _decide(kernel, loop, previous, pairs, buffers, pinned=isinstance(pin, IntegerAttr))
                loop.attributes[_DECISION] = decision
                if decision.int_value:
                    buffers += len(pairs)
                    kept.append(f"{decision.int_value} x {sum(p.slot_bytes for p in pairs)} B")
            plan = KernelPlan.of(kernel)
            if kept and "smem_bytes" in plan.reasons:  # (without a plan, tile-pipeline sizes the layout)
                total = smem_plan(kernel, plan.stages).total
                KernelPlan.decide(kernel, "smem_bytes", total, f"{plan.reasons['smem_bytes']}; "
                                  f"+ {' + '.join(kept)} of tiles tile-retain-sweep keeps: {total} B")
