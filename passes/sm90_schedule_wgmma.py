"""sm90-schedule-wgmma: issue each wgmma as early as its operands allow and wait for its product
where the product is first read, so the tensor cores and the consumers' other work overlap.

convert-tile-to-sm90 emits the consumers' ops in program order and waits for most products right
after issuing them (`sm90.wgmma` then `sm90.wgmma_wait %p, 0`): the warpgroup idles while the
tensor cores run even where the next ops do not need the product, and a second, independent
product (`dP = dO V^T` after `S = Q K^T` in attention's backward, the real and imaginary DFTs
of FFTConv, `Q S` beside `Q K^T` in the SSD output) starts only once the first is done. Within
each block this pass

1. moves each wgmma issue up, past pure ops that do not compute its operands, and past waits
   for other groups whose product it does not read (each such wait then lets one more group
   stay in flight: `pending` + 1, at most 7); and
2. moves each wait that directly follows its issue down, past pure ops that do not read the
   product and past the issues of other wgmmas that do not read it (`pending` + 1 for each:
   groups complete in order, so the product is ready while the later ones run),

pure ops being register arithmetic (`Pure`: element-wise math, reductions and broadcasts within
a consumer's threads, scalar loads of read-only tensors, index math), reads of shared memory into
registers (a wgmma writes no shared memory), and ifs of nothing else (a tail mask's branch:
uniform, so every thread of the warpgroup issues the wgmma either way),

stopping at anything with a memory or synchronisation effect (a ring stage's wait, or its
release, which must follow the tensor cores' reads of the stage; stores, shared-memory writes,
barriers, fences), another issue (step 1: groups keep their order) or wait (step 2), a loop,
and the ends of the block. Issues keep their relative order, so the products stay the same
bits. An issue does not move above ops that compute its operands, and neither a wait below an
issue nor an issue above a wait whose accumulator is computed after the waited group's issue:
ptxas serialises the groups (C7513) when instructions write a wgmma's registers while another
group is in flight. Waits that convert-tile-to-sm90 placed with groups in flight (GEMM's K
loop, attention's late P.V) stay where they are; issues may still move up to them.

Moved ops say so (`scheduled`: how far, and why), so the decision shows in the IR dump. The
pass runs on the kernels whose plan asks for it (`@schedule_wgmma(1)`, tile-occupancy-plan's
`schedule_wgmma`, which convert-tile-to-sm90 records on the `sm90.kernel`). It is off by default:
measured on the H200 in one process (benchmarks/pin_ab.py), the kernels it changes ran 0.85-1.05x
as fast with it (attention backward's dK/dV 0.99-1.05x, Hedgehog 1.04x, the dQ kernel at D = 64
0.85x, FFTConv 0.94x), with the same bits.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.traits import IsTerminator, Pure

from tkc.dialects import sm90

SCHEDULED = "scheduled"
"""The attribute on a moved issue or wait: how far it moved."""
MAX_PENDING = 7
"""wgmma.wait_group's largest count of groups left in flight."""


def _reads(op: Operation, values: set[SSAValue]) -> bool:
    return any(v in values for inner in op.walk() for v in inner.operands)


def _pure(op: Operation) -> bool:
    """Register arithmetic, reads of shared memory into registers (a wgmma writes none), and ifs
    (uniform: every thread of the warpgroup takes the same branch) of nothing else."""
    if isinstance(op, sm90.LoadFragmentOp):
        return True
    if isinstance(op, scf.IfOp):
        return all(_pure(inner) or isinstance(inner, scf.YieldOp)
                   for region in op.regions for block in region.blocks for inner in block.ops)
    return op.has_trait(Pure) and not op.regions and not op.has_trait(IsTerminator)


def _acc_written_after(issue: sm90.WgmmaOp, earlier: Operation) -> bool:
    """Whether `issue`'s accumulator is computed after `earlier` (an op of its block)."""
    acc = issue.acc
    if acc is None or not isinstance(acc.owner, Operation) or acc.owner.parent_block() is not earlier.parent_block():
        return False
    op = earlier.next_op
    while op is not None and op is not acc.owner:
        op = op.next_op
    return op is not None


def _hoist_issue(issue: sm90.WgmmaOp) -> None:
    """Step 1 for `issue`: up past pure ops it does not read and waits it does not read."""
    operands = set(issue.operands)
    passed: list[Operation] = []
    above = issue.prev_op
    while above is not None:
        if set(above.results) & operands:
            break
        if isinstance(above, sm90.WgmmaWaitOp):
            waited = above.acc.owner
            if (above.result in operands or above.pending.value.data >= MAX_PENDING
                    or isinstance(waited, Operation) and _acc_written_after(issue, waited)):
                break
        elif not _pure(above):
            break
        passed.append(above)
        above = above.prev_op
    if not passed:
        return
    block = issue.parent_block()
    assert block is not None
    issue.detach()
    block.insert_op_before(issue, passed[-1])
    waits = [op for op in passed if isinstance(op, sm90.WgmmaWaitOp)]
    for wait in waits:
        wait.pending = IntegerAttr(wait.pending.value.data + 1, 32)
    issue.attributes[SCHEDULED] = StringAttr(
        f"issued early: above {len(passed)} ops that do not compute its operands ({len(waits)} wait(s) for earlier "
        "groups among them, which now leave it in flight)"
    )


def _sink_wait(wait: sm90.WgmmaWaitOp, issue: sm90.WgmmaOp) -> None:
    """Step 2 for `wait`, right after `issue`: down to the first op that needs its product."""
    product = {wait.result, wait.acc}
    passed, issues, below = 0, 0, wait.next_op
    while below is not None and not _reads(below, product):
        if isinstance(below, sm90.WgmmaOp):
            if _acc_written_after(below, issue) or issues == MAX_PENDING:
                break
            issues += 1
        elif not _pure(below):
            break
        passed += 1
        below = below.next_op
    if passed == 0 or below is None:
        return
    block = wait.parent_block()
    assert block is not None
    wait.detach()
    block.insert_op_before(wait, below)
    wait.pending = IntegerAttr(issues, 32)
    wait.attributes[SCHEDULED] = StringAttr(
        f"waited for where its product is first needed: below {passed} ops, {issues} later wgmma issue(s) "
        "among them left in flight"
    )


def schedule_block(block: Block) -> None:
    for issue in [op for op in block.ops if isinstance(op, sm90.WgmmaOp)]:
        _hoist_issue(issue)
    for wait in [op for op in block.ops if isinstance(op, sm90.WgmmaWaitOp)]:
        issued_by = wait.acc.owner
        if wait.pending.value.data == 0 and isinstance(issued_by, sm90.WgmmaOp) and issued_by.next_op is wait:
            _sink_wait(wait, issued_by)


@dataclass(frozen=True)
class Sm90ScheduleWgmmaPass(ModulePass):
    name = "sm90-schedule-wgmma"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.walk() if isinstance(k, sm90.KernelOp) and sm90.SCHEDULE_WGMMA in k.attributes]:
            for block in [b for inner in kernel.walk() for region in inner.regions for b in region.blocks]:
                schedule_block(block)
