"""tile-sweep-order: walk a loop that re-reads the previous loop's tiles backwards, from where it ended.

A two-sweep row kernel (softmax: an online max and sum over the column tiles, then the
normalised exponentials over the same tiles; layernorm: the residual sum stored, then read back)
reads every tile twice. Between the two reads of a tile, the first sweep goes on to read all the
others: the block's whole row panel, times the blocks that run at once (a 64-row panel of 4096
bf16 columns is 512 KB, 132 of them 69 MB), more than L2 holds, so a second sweep in the same
order finds each tile evicted and reads it from DRAM again. Walked the other way, the second
sweep starts with the tiles the first read last, which are still in L2. So this pass decides:

  an `scf.for` without loop-carried values, of step 1, that loads a tile (anywhere in its body)
  the loop just before it in its block (same bounds) also loads or stores, at the same coordinates as a function of each
  loop's counter, walks its range backwards (if that loop walks forwards; forwards if that loop was
  reversed, so a third sweep turns again) — where no two of its iterations may touch one element
  that either stores (tkc.passes.alias), so the order of its iterations cannot show in memory.

The reversal keeps the loop and renames its counter: the body reads `%j = (lb + ub - 1) - %r`
where it read `%j`, so a dump reads as the program with the counter counted down.

Written on each loop that re-reads the loop before it, or that carries `@reverse` (which it replaces):
  sweep = #tile.decision<1, "re-reads X's tiles the loop at line 7 read, last first: ...">
          | #tile.decision<0, "pinned by @reverse(0)" | "...: the loop at line 7 walks backwards" | why not>
`@reverse(0)` on the `for` keeps it forwards; `@reverse(1)` requires the backward walk (an error
where an order could show). A loop that already has its `sweep` (a dump given back to `tkc compile`)
is left as it is.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from tkc.diagnostics import error_at, line_label
from tkc.dialects.tile import DecisionAttr, KernelOp, LoadOp, StoreOp, index_constant
from tkc.passes.alias import Access, defined_within, may_overlap_across_iterations
from tkc.passes.sweeps import SWEEP, loop_counter, previous_loop, same_walk, tensor_name, walks_backwards

_PIN = "reverse"


def _accesses(loop: scf.ForOp) -> list[Access]:
    return [op for op in loop.walk() if isinstance(op, LoadOp | StoreOp)]


def _re_read(loop: scf.ForOp, previous: scf.ForOp) -> LoadOp | None:
    """A load of `loop` whose tiles `previous` also touched, in the same walk (or None)."""
    if (loop.lb, loop.ub, loop.step) != (previous.lb, previous.ub, previous.step):
        return None
    earlier = _accesses(previous)
    for load in (op for op in _accesses(loop) if isinstance(op, LoadOp)):
        for access in earlier:
            if access.tensor is load.tensor and len(access.coords) == len(load.coords) and all(
                    same_walk(x, y, loop, previous) for x, y in zip(load.coords, access.coords)):
                if any(defined_within(c, loop) for c in load.coords):
                    return load
    return None


def _order_shows(loop: scf.ForOp) -> str | None:
    """Why the order of the loop's iterations could show (or None): loop-carried values, or two
    accesses of different iterations that may touch one element, one of them a store."""
    if loop.results:
        return "its iterations carry values from one to the next"
    if index_constant(loop.step) != 1:
        return "its step is not the constant 1"
    accesses = _accesses(loop)
    for store in (a for a in accesses if isinstance(a, StoreOp)):
        for other in accesses:
            if may_overlap_across_iterations(store, other, loop):
                what = "load" if isinstance(other, LoadOp) else other.statement
                return (f"its iterations may touch the same elements of {tensor_name(store)} "
                        f"(the {store.statement} at {line_label(store)} and the {what} at {line_label(other)})")
    return None


def _pin(loop: scf.ForOp) -> int | None:
    attr = loop.attributes.get(_PIN)
    return attr.value.data if isinstance(attr, IntegerAttr) else None


def _reverse(loop: scf.ForOp) -> None:
    """Walk `loop` from its last iteration to its first: every use of the counter reads
    (lb + ub - 1) - counter instead."""
    counter = loop.body.block.args[0]
    span = arith.AddiOp(loop.lb, loop.ub)
    last = arith.SubiOp(span, loop.step)  # the step is 1
    Rewriter.insert_op([span, last], InsertPoint.before(loop))
    walked = arith.SubiOp(last, counter)
    Rewriter.insert_op(walked, InsertPoint.at_start(loop.body.block))
    walked.result.name_hint = counter.name_hint
    counter.replace_uses_with_if(walked.result, lambda use: use.operation is not walked)
    counter.name_hint = "r"


def _decide(loop: scf.ForOp) -> DecisionAttr | None:
    pin = _pin(loop)
    previous = previous_loop(loop)
    load = _re_read(loop, previous) if previous is not None else None
    if pin == 0:
        return DecisionAttr(0, "pinned by @reverse(0): walks its range forwards")
    if load is None and pin is None:
        return None
    shows = _order_shows(loop)
    if pin == 1:
        if shows is not None:
            raise error_at(loop, f"@reverse(1) cannot walk this loop backwards: {shows}")
        return DecisionAttr(1, "pinned by @reverse(1): walks its range backwards")
    assert load is not None and previous is not None
    what = f"re-reads the tiles of {tensor_name(load)} the loop at {line_label(previous)} touched"
    if shows is not None:
        return DecisionAttr(0, f"{what}, but stays forwards: {shows}")
    if walks_backwards(previous):
        return DecisionAttr(0, f"{what}; that loop walks backwards, so this one forwards starts where it ended")
    return DecisionAttr(1, f"{what}: backwards, the tiles it read last first, while L2 still holds them")


class TileSweepOrderPass(ModulePass):
    name = "tile-sweep-order"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.body.block.ops if isinstance(k, KernelOp)]:
            for loop in [o for o in kernel.walk() if isinstance(o, scf.ForOp)]:
                if SWEEP in loop.attributes:
                    continue
                decision = _decide(loop)
                if decision is None:
                    continue
                loop.attributes.pop(_PIN, None)  # the decision's reason says it was pinned
                loop.attributes[SWEEP] = decision
                if decision.int_value:
                    _reverse(loop)
