"""tile-pipeline: hoist loop-invariant loads, and turn each loop that loads tiles into an S-stage TMA ring.

A `tile.load` in an `scf.for` whose tensor and coordinates do not depend on the loop (Q in
attention), and which no store in the loop may overwrite (plan.loop_loads, tkc.passes.alias),
is moved before the loop, with the pure index math it needs, and loaded once. It then runs
even where the loop runs no iteration, so it is marked `speculative`: its coordinates may lie
past the end of its tensor there (TMA reads zeros), and the lowering does not stop the kernel
for them (tma.trap_wholly_past_end), nor does the interpreter.
The remaining loads of the loop body are its stage, at any depth of loops: the lowering builds an S-stage ring of
them with full/empty mbarriers (the producer waits empty[s], expects the stage bytes and
issues the TMA loads of stage s; the consumers wait full[s], compute, and arrive on
empty[s]), S being the kernel's `stages` decision of tile-occupancy-plan (which runs first).

The loads directly in the branches of an `scf.if` are likewise the stage of a ring of the if's
own: a stage per run of a branch that loads (each branch's loads from the stage's first byte:
one branch fills a stage). A ring per loop or if, rather than one per loop nest, keeps every stage's
loads in one block, so its bytes are known where the producer acquires it on either path.

Written (offsets in bytes from the 1024-aligned base of dynamic shared memory, plan.smem_plan):
  on the loop or if      pipeline = #tile.decision<S, "S-stage TMA ring: ... bytes per stage">
                         ring_offset = R : i64, stage_bytes = B : i64 (stage s at R + s * B)
  on each ring load      stage_offset = o : i64 (within a stage)
  on other shared tiles  smem_offset = o : i64 (hoisted and outer loads, tile.to_shared tiles,
                         the retention buffer of a tile.retain or tile.recall: tile-retain-sweep)
  on stores of registers smem_offset = o : i64 (the epilogue staging tile), and
                         staging_reuse = #tile.decision<1, "..."> when it lies in the bytes of the
                         kernel-level loads (plan.staging_reuses_single_tiles)
  on the kernel          col_scratch_offset = o : i64 (the column reductions' scratch buffer), and
                         the plan's smem_bytes (tile-occupancy-plan's budget, which must equal the
                         layout's total; written into the kernel's #tile.plan here when no plan
                         ran, and then a layout over the budget is an error at the kernel)
  on a loop whose last mma can run one iteration late (plan.late_tail: attention's P.V)
                         overlap = #tile.decision<1, "...">; the lowering then issues each
                         iteration's first mma, then the previous iteration's last, and runs the
                         element-wise work between them (softmax) while both are in flight.
                         `@overlap(0)` on the loop turns it off; `@overlap(1)` insists.
  on an overlapped loop of a kernel with several consumer warpgroups
                         turns = #tile.decision<1, "...">: the consumers take turns issuing
                         their mmas (FlashAttention-3's ping-pong), so one warpgroup's softmax
                         runs while the tensor cores work on another's products rather than
                         all of them computing softmax at once while the tensor cores idle.
                         Only where the loop's mmas are the two a turn covers (its first and
                         the late last one). Measured on the H200 (attention forward, N = 1024
                         and 4096: 1.01-1.06x; with ALiBi 1.08x; Based 1.04-1.06x; the
                         backward's dK/dV loop, 4 mmas, was 0.88x with them). `@turns(0)`
                         turns it off.
  on an overlapped loop whose ring is at most SPLIT_RING_STAGES deep, or pinned by
  @split_ring(1) (on the loop or the kernel)
                         split_ring = #tile.decision<1, "...">: the loads the late tail reads (V)
                         and the others (K) are two rings over the same stage bytes, each with
                         its own mbarriers (plan.split_ring_loads); the consumers free K's stage
                         at the end of its iteration and V's after the late mma, so the producer
                         refills K an iteration earlier. With one ring, a stage is freed only
                         after the late P.V, so 2 stages leave the producer almost no lead:
                         measured on the H200 (D128 attention forward, @persistent(1), 2
                         stages, N 1024-16384) split rings ran 1.13-1.37x faster (plain, causal,
                         sliding window) and 1.02-1.03x (softcap); with 3 stages 0.97-1.01x,
                         so deeper rings keep one. `@split_ring(0)` turns it off.
The mbarriers sit in the first 1 KB. This is the one layout: convert-tile-to-sm90 reads these
offsets and computes none of its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, UnitAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from tkc.dialects import tile
from tkc.diagnostics import error_at
from tkc.dialects.tile import DecisionAttr, KernelOp, MmaOp, SharedTileType, SharedVectorType, element_name
from tkc.passes.occupancy import OVERHEAD_REGISTERS, overlap_registers
from tkc.passes.plan import (SMEM_BUDGET, SPLIT_RING_STAGES, KernelPlan, late_tail, loop_loads, smem_plan,
                              split_ring_loads, value_name)


def hoist(op: Operation, loop: scf.ForOp) -> None:
    """Move `op`, after the loop-local ops it depends on, to just before `loop`."""
    for value in op.operands:
        owner = value.owner
        if isinstance(owner, Operation) and loop.is_ancestor(owner):
            hoist(owner, loop)
    block = loop.parent_block()
    assert block is not None
    op.detach()
    block.insert_op_before(op, loop)


def describe(op: Operation) -> str:
    t = op.results[0].type
    assert isinstance(t, SharedTileType | SharedVectorType)
    shape = "x".join(str(d) for d in t.get_shape())
    return f"{value_name(op.results[0])} {shape}x{element_name(t.element_type)}"


def _loop_pin(loop: scf.ForOp, name: str) -> int | None:
    """The loop's @overlap or @turns pin: the frontend's integer, or, when tile-pipeline runs on
    its own output (a dump), the pinned value its decision recorded."""
    attr = loop.attributes.get(name)
    if isinstance(attr, DecisionAttr):
        return attr.int_value if attr.reason.data.startswith("pinned") else None
    return attr.value.data if isinstance(attr, IntegerAttr) else None


def _overlap_decision(loop: scf.ForOp, plan: KernelPlan) -> DecisionAttr | None:
    """Whether the loop's last mma runs one iteration late (plan.late_tail), pinned by @overlap.
    Not with a one-stage ring: the late mma still reads the stage the next iteration waits for;
    nor where the registers the overlap keeps in flight (occupancy.overlap_registers) exceed
    what a consumer has."""
    stages = plan.stages
    pin = _loop_pin(loop, "overlap")
    tail = late_tail(loop)
    if pin == 0:
        return DecisionAttr(0, "pinned by @overlap(0): each iteration waits for its own mmas")
    if tail is not None and stages < 2:
        if pin is not None:
            raise error_at(loop, "@overlap(1) needs a ring of at least 2 stages: the late mma still reads the stage "
                           "the next iteration waits for")
        return DecisionAttr(0, "a one-stage ring: the late mma would still read the stage the next iteration waits for")
    if tail is None:
        if pin is not None:
            raise error_at(
                loop,
                "@overlap(1) needs a loop whose last mma only accumulates into a loop-carried tile that nothing "
                "else in the loop reads, after an earlier mma, and no stores or tile.to_shared in the loop",
            )
        return None
    late = next(op for op in tail if isinstance(op, MmaOp))
    in_flight = overlap_registers(loop, late, plan.consumers, plan.band)
    crowded = (f"{in_flight} registers per consumer thread in flight (the products of the loop's mmas, the late "
               f"mma's register operand from the iteration before and {OVERHEAD_REGISTERS} for addresses), over the "
               f"{plan.consumer_registers} each consumer has")
    if plan.consumer_registers and in_flight > plan.consumer_registers:
        if pin is None:
            return DecisionAttr(
                0,
                f"overlapped, the loop would hold {crowded}: ptxas would serialise its wgmmas (C7512), which ran "
                "attention backward's dQ 1.23-1.47x slower on the H200; each iteration waits for its own mmas",
            )
        return DecisionAttr(1, f"pinned by @overlap(1), though it holds {crowded} (ptxas may serialise the wgmmas)")
    pinned = "pinned by @overlap(1); " if pin is not None else ""
    fits = (f" ({in_flight} of a consumer's {plan.consumer_registers} registers in flight)"
            if plan.consumer_registers else "")
    return DecisionAttr(
        1,
        f"{pinned}the last mma only accumulates into a carried tile nothing else reads, so it runs one iteration "
        "late: each iteration issues its first mma, then the previous iteration's last, and computes on the first "
        f"product while the tensor cores run both (FlashAttention-3); its stage is freed one iteration later{fits}",
    )


def _turns_decision(loop: scf.ForOp, consumers: int) -> DecisionAttr | None:
    """Whether the consumer warpgroups take turns issuing the overlapped loop's mmas, pinned by
    @turns. Every consumer runs the loop the same number of times (the control flow is the
    CTA's), so the turns pass round them in order and none waits for one that never comes."""
    pin = _loop_pin(loop, "turns")
    if pin == 0:
        return DecisionAttr(0, "pinned by @turns(0): the consumers issue their mmas as they come")
    if not KernelPlan.overlaps(loop) or consumers < 2:
        if pin is not None:
            raise error_at(loop, "@turns(1) needs an overlapped loop (@overlap) and at least 2 consumer warpgroups")
        return None
    mmas = sum(isinstance(op, tile.MmaOp) for op in loop.walk())
    if mmas > 2 and pin is None:
        return DecisionAttr(
            0,
            f"the loop issues {mmas} mmas and a turn covers two (its first and the late last one): the others "
            "would still run at once, and the turns only add waits (0.88x on the attention backward's dK/dV loop "
            "on the H200)",
        )
    pinned = "pinned by @turns(1); " if pin is not None else ""
    return DecisionAttr(
        1,
        f"{pinned}the {consumers} consumer warpgroups take turns issuing this loop's mmas (a named barrier each): "
        "one's element-wise work runs while the tensor cores work for another (FlashAttention-3's ping-pong)",
    )


def _split_ring_decisions(kernel: KernelOp, loops: list[scf.ForOp], stages: int) -> None:
    """Whether each overlapped loop's ring splits into the head's loads and the late tail's
    (plan.split_ring_loads): pinned by @split_ring on the loop, or on the kernel for each loop
    that can split (an error where none can); unpinned, where the ring is `stages` <=
    SPLIT_RING_STAGES deep and the loop can split."""
    kernel_pin = kernel.annotations.data.get("split_ring")
    kernel_pin_value = kernel_pin.value.data if isinstance(kernel_pin, IntegerAttr) else None
    reasons = []
    for loop in loops:
        pin = _loop_pin(loop, "split_ring")
        parts = split_ring_loads(loop)
        if isinstance(parts, str):
            reasons.append(parts)
        if pin is None and not isinstance(parts, str):
            pin = kernel_pin_value
        if pin == 1 and isinstance(parts, str):
            raise error_at(loop, f"@split_ring(1) cannot split this loop's ring: {parts}")
        if pin == 0:
            loop.attributes["split_ring"] = DecisionAttr(0, "pinned by @split_ring(0): one ring for the loop's loads" + (
                f" (it could not split anyway: {parts})" if isinstance(parts, str) else ""))
        elif not isinstance(parts, str) and (pin == 1 or stages <= SPLIT_RING_STAGES):
            why = ("pinned by @split_ring(1)" if pin == 1 else
                   f"a {stages}-stage ring freed only after the late mma would leave the producer almost no lead")
            head, tail = parts
            loop.attributes["split_ring"] = DecisionAttr(
                1,
                f"{why}: two rings over the same stages, {' + '.join(map(describe, head))} and "
                f"{' + '.join(map(describe, tail))}; the first's stage is freed at the end of its own iteration, the "
                "late tail's after the late mma, so the producer refills the first's tiles an iteration earlier",
            )
        else:
            loop.attributes.pop("split_ring", None)
    why = reasons[0] if reasons else "the kernel has no loop that loads"
    if kernel_pin_value == 1 and not any(KernelPlan.splits_ring(loop) for loop in loops):
        raise error_at(kernel, f"@split_ring(1) finds no loop whose ring can split: {why}")
    if kernel_pin_value == 0 and not any("split_ring" in loop.attributes for loop in loops):
        kernel.attributes["split_ring"] = DecisionAttr(0, f"@split_ring(0) turns off nothing: no loop's ring can split ({why})")
    else:
        kernel.attributes.pop("split_ring", None)


def pipeline(kernel: KernelOp) -> None:
    loops = [op for op in kernel.walk() if isinstance(op, scf.ForOp)]
    for loop in reversed(loops):
        for load in loop_loads(loop)[0]:
            hoist(load, loop)
            load.attributes[tile.SPECULATIVE] = UnitAttr()
    kernel_plan = KernelPlan.of(kernel)
    stages = kernel_plan.stages
    plan = smem_plan(kernel, stages)
    for ring in plan.rings:
        branches = [[load for load, _ in ring.loads if region.is_ancestor(load)] for region in ring.owner.regions]
        loads = " or ".join(" + ".join(describe(load) for load in branch) for branch in branches if branch)
        pin = ring.owner.attributes.get("stages")
        # (a pass option of tile-occupancy-plan may have overridden the loop's pin)
        why = f"pinned by @stages({stages}); " if isinstance(pin, IntegerAttr) and pin.value.data == stages else ""
        per = "" if isinstance(ring.owner, scf.ForOp) else ", a stage per run of a branch that loads"
        ring.owner.attributes["pipeline"] = DecisionAttr(
            stages,
            f"{why}{stages}-stage TMA ring{per}: {loads} = {ring.stage_bytes} bytes per stage, "
            f"full/empty mbarrier per stage",
        )
        ring.owner.attributes["ring_offset"] = IntegerAttr(ring.offset, 64)
        ring.owner.attributes["stage_bytes"] = IntegerAttr(ring.stage_bytes, 64)
        for load, offset in ring.loads:
            load.attributes["stage_offset"] = IntegerAttr(offset, 64)
        if isinstance(ring.owner, scf.ForOp) and (overlap := _overlap_decision(ring.owner, kernel_plan)) is not None:
            ring.owner.attributes["overlap"] = overlap
    for loop in loops:
        if "turns" in loop.attributes or KernelPlan.overlaps(loop):
            turns = _turns_decision(loop, kernel_plan.consumers)
            if turns is None:
                loop.attributes.pop("turns", None)
            else:
                loop.attributes["turns"] = turns
    _split_ring_decisions(kernel, loops, stages)
    for op, offset in (*plan.single, *plan.staging):
        op.attributes["smem_offset"] = IntegerAttr(offset, 64)
    retained = dict(plan.retained)
    for op in kernel.walk():
        if isinstance(op, tile.RetainOp | tile.RecallOp):
            op.attributes["smem_offset"] = IntegerAttr(retained[op.buffer.value.data], 64)
    if plan.staging_reused:
        for store, _ in plan.staging:
            store.attributes["staging_reuse"] = DecisionAttr(
                1, "the CTA runs one tile and every use of its kernel-level loads comes before the first staged "
                "store: the epilogue stages in their bytes, once all consumers meet",
            )
    if plan.col_scratch is not None:
        kernel.attributes["col_scratch_offset"] = IntegerAttr(plan.col_scratch, 64)
    if "smem_bytes" not in kernel_plan.reasons:
        if plan.total > SMEM_BUDGET:
            raise error_at(
                kernel,
                f"shared memory overflows: the layout of {stages} stage(s) needs {plan.total} bytes, a block may use "
                f"{SMEM_BUDGET} (reduce @stages or the tile sizes)",
            )
        KernelPlan.decide(kernel, "smem_bytes", plan.total, f"tile-pipeline's layout of {stages} stage(s)")
    elif kernel_plan.smem_bytes != plan.total:
        raise error_at(
            kernel,
            f"the smem_bytes decision ({kernel_plan.smem_bytes} bytes) disagrees with the shared-memory layout "
            f"tile-pipeline builds ({plan.total} bytes)",
        )


@dataclass(frozen=True)
class TilePipelinePass(ModulePass):
    name = "tile-pipeline"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in op.walk():
            if isinstance(kernel, KernelOp):
                pipeline(kernel)
