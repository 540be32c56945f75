"""tile-memory-order: order every load after the earlier stores of its block that it may read.

Within a block a `.tk` program reads what it wrote: `store H[i, c] = h` in one loop and
`load H[i, c]` in a later one return the stored values. On the GPU the two run on different
warpgroups through different copy engines (consumers store with TMA or st.global, the producer
loads with TMA, several stages ahead), so program order alone orders nothing. This pass decides,
with tkc.passes.alias, which accesses may touch elements an earlier store of the same block
wrote (a load: read-after-write; a store: write-after-write), and puts a `tile.fence` before
each: the lowering makes every earlier store complete and the later accesses wait for it.

Where the fence goes: before the access's outermost construct that still lies after all the
stores it depends on (the construct in their common block), so a loop that re-reads what an
earlier loop stored waits once, before it starts, and a loop that reads what its previous
iteration stored waits once per iteration. A fence moves up past the loads just before it (a
loop iteration's loads form one stage of the TMA ring, which must not straddle a fence), never
past a store. Fences with no store between them are merged.

A `store_add` is a store here (a later load must see its sums, a later store must land after
it), except after another `store_add`: atomic adds commute, so two adds of one block to one
element need no order between them, and a loop that adds to the same rows in every iteration
runs without a fence (its `memory_order` says so).

Written:
  tile.fence "reason"            the accesses it orders and the stores they follow
  on each load of a tensor that the kernel also stores
    memory_order = #tile.decision<1, "after the stores at lines ...: tile.fence at line N">
                 | #tile.decision<0, "disjoint from every earlier store of T: ...">
  on a store_add that only earlier store_adds may overlap
    memory_order = #tile.decision<0, "after the store_adds at lines ... only: adds commute, ...">

IR that comes in after this pass (a dump given back to `tkc compile`) resumes without it, so
`check_memory_order` first decides the ordering anew and compares: a fence that is missing or
moved, or a memory_order decision that was edited, is a diagnostic at the first access where
they differ, never a kernel with a race.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from tkc.diagnostics import error_at, line_label
from tkc.dialects.tile import DecisionAttr, FenceOp, KernelOp, LoadOp, StoreOp
from tkc.passes.alias import Access, common_ancestors, may_follow_and_overlap


def _describe(op: Access, kernel: KernelOp) -> str:
    name = kernel.arg_names[kernel.body.block.args.index(op.tensor)]
    what = "load" if isinstance(op, LoadOp) else op.statement
    return f"the {what} of {name} at {line_label(op)}"


def _stores_within(op: Operation) -> bool:
    return any(isinstance(inner, StoreOp | FenceOp) for inner in op.walk())


def _both_add(store: StoreOp, access: Access) -> bool:
    """Two adds to one element commute: neither needs to wait for the other."""
    return isinstance(access, StoreOp) and store.reduce is not None and access.reduce is not None


def _depth(op: Operation) -> int:
    depth = 0
    parent = op.parent_op()
    while parent is not None:
        depth += 1
        parent = parent.parent_op()
    return depth


def _fence_point(access: Access, deps: list[StoreOp]) -> Operation:
    """The op the access's fence goes before: the deepest of the constructs that hold the access
    in the block it shares with each store it depends on, then up past the loads before it
    (not past a store)."""
    point = max((common_ancestors(store, access)[1] for store in deps), key=_depth)
    previous = point.prev_op
    while previous is not None and not _stores_within(previous):
        if isinstance(previous, LoadOp):
            point = previous
        previous = previous.prev_op
    return point


def _earlier_point(
    point: Operation, deps: list[StoreOp], points: dict[Operation, list[tuple[Access, list[StoreOp]]]]
) -> Operation | None:
    """A fence point before `point` in its block with none of `deps` between them: a fence
    there also orders the access (it waits for every earlier store, these among them)."""
    previous = point.prev_op
    while previous is not None and not any(previous.is_ancestor(store) for store in deps):
        if previous in points:
            return previous
        previous = previous.prev_op
    return None


def order_memory(kernel: KernelOp) -> None:
    for old in [op for op in kernel.walk() if isinstance(op, FenceOp)]:
        old.detach()  # this pass owns the fences: running it again decides them anew
        old.erase()
    accesses = [op for op in kernel.walk() if isinstance(op, LoadOp | StoreOp)]
    stores = [op for op in accesses if isinstance(op, StoreOp)]
    stored = {op.tensor for op in stores}
    points: dict[Operation, list[tuple[Access, list[StoreOp]]]] = {}
    for access in accesses:
        if access.tensor not in stored:
            continue
        deps = [s for s in stores if may_follow_and_overlap(s, access) and not _both_add(s, access)]
        if deps:
            point = _fence_point(access, deps)
            point = _earlier_point(point, deps, points) or point
            points.setdefault(point, []).append((access, deps))
        elif isinstance(access, StoreOp) and (adds := [s for s in stores if may_follow_and_overlap(s, access)]):
            lines = ", ".join(sorted({line_label(s) for s in adds}))
            access.attributes["memory_order"] = DecisionAttr(
                0, f"after the store_adds at {lines} only: adds commute, so no fence orders them"
            )
        elif isinstance(access, LoadOp):
            lines = ", ".join(sorted({line_label(s) for s in stores if s.tensor is access.tensor}))
            access.attributes["memory_order"] = DecisionAttr(
                0, f"no store that may run before it overlaps it (the stores of this tensor are at {lines})"
            )
    for point, orders in points.items():
        parts = []
        for access, deps in orders:
            after = ", ".join(sorted({line_label(s) for s in deps}))
            parts.append(f"{_describe(access, kernel)} may touch what the store at {after} wrote")
            if isinstance(access, LoadOp):
                access.attributes["memory_order"] = DecisionAttr(
                    1, f"after the stores at {after}: the tile.fence at {line_label(point)} orders them"
                )
        fence = FenceOp("; ".join(parts))
        fence.location = point.location
        block = point.parent_block()
        assert block is not None
        block.insert_op_before(fence, point)


def _ordering(kernel: KernelOp) -> list[tuple[Operation, str]]:
    """The kernel's accesses and fences in program order, each with its nesting depth and its
    memory_order decision (loads; store_adds after store_adds): what this pass decides, written so
    that two kernels compare."""
    ordering: list[tuple[Operation, str]] = []
    for op in kernel.walk():
        if isinstance(op, FenceOp | LoadOp | StoreOp):
            decision = op.attributes.get("memory_order") if isinstance(op, LoadOp | StoreOp) else None
            value = decision.int_value if isinstance(decision, DecisionAttr) else None
            ordering.append((op, f"{_depth(op) - _depth(kernel)} {op.name} {value}"))
    return ordering


def check_memory_order(kernel: Operation) -> None:
    """A TkError at the first access of a tile.kernel whose ordering differs from the one this
    pass decides."""
    if not isinstance(kernel, KernelOp):
        return
    decided = kernel.clone()
    order_memory(decided)
    for (op, given), (_, wanted) in zip(_ordering(kernel), _ordering(decided), strict=False):
        if given != wanted:
            break
    else:
        if len(_ordering(kernel)) == len(_ordering(decided)):
            return
        op = kernel
    raise error_at(
        op,
        "this IR's memory ordering is not what tile-memory-order decides for it (a tile.fence missing or "
        "moved, or a memory_order decision edited): run the compile from the .tk source or an earlier dump",
    )


class TileMemoryOrderPass(ModulePass):
    name = "tile-memory-order"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in op.walk():
            if isinstance(kernel, KernelOp):
                order_memory(kernel)
