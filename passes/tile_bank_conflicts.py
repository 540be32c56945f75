"""tile-bank-conflicts: the layout of every shared tile that warps touch, by the exact bank model.

TMA and wgmma move whole swizzled rows and are conflict-free by construction. The accesses
that can conflict are the ones threads issue themselves; the lowering (convert-tile-to-sm90,
convert-sm90-to-ptx) emits exactly these, each thread moving its accumulator-fragment pairs:
  - `tile.store` of a register tile: the epilogue writes a shared staging tile (st.shared.b32
    of bf16x2/f16x2 pairs, st.shared.v2.f32 of f32 pairs), then TMA stores it;
  - `tile.to_shared` (the same writes) and `tile.to_reg` (ld.shared.b32 / ld.shared.v2.f32);
  - shared row vectors read into registers (`tile.to_reg` of an sv): one element per row,
    shared by a quad, always conflict-free. Row vectors are stored straight to global memory.
For each tile, every instruction over the whole tile is enumerated lane by lane under each
layout the tile's other users allow and the lowering builds (swizzle 128/64/32 when wgmma reads
it, also none otherwise; the lowering addresses shared tiles by swizzle alone, so padded rows are
not among them), and the layout with the fewest wavefronts wins; ties keep the layout TMA and
wgmma prefer (tile-swizzle-select's widest span).
The simulation costs one warp request per instruction over the tile, so the budgets come first
(`check_budgets` of the occupancy model): a kernel whose tiles no plan can hold (a 65536-column
tile) is refused before any tile is simulated, and what is simulated fits the budgets.

Written:
  on each access op       bank_conflicts = #tile.decision<ways, "why">   (1 = conflict-free)
                          smem_access = "st.shared.b32" | ...             the instruction modelled
  on a store of registers staging = #tile.decision<S, "why">              the staging tile's swizzle
  on a shared tile's op   swizzle re-decided (via set_swizzle) when another layout is better
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from tkc.diagnostics import error_at
from tkc.dialects.tile import (
    DecisionAttr,
    KernelOp,
    LoadOp,
    RegisterTileType,
    SharedTileType,
    SharedVectorType,
    StoreOp,
    ToRegOp,
    ToSharedOp,
    element_bytes,
    element_name,
)
from tkc.passes.bank_model import (
    Access,
    Layout,
    conflicts,
    fragment_pairs,
    row_vector,
)
from tkc.passes.occupancy import check_budgets
from tkc.dialects.tile import TMA_SMEM_ALIGN
from tkc.passes.plan import ends_rows, may_start_before
from tkc.passes.shared_tiles import read_by_wgmma, set_swizzle, shared_tile_ops, users
from tkc.passes.wgmma_layout import SWIZZLE_SPANS



def write_access(elem_bytes: int) -> Access:
    """How the lowering writes a fragment: each thread stores its column pairs, one per instruction."""
    return fragment_pairs("st.shared.v2.f32" if elem_bytes == 4 else f"st.shared.b{16 * elem_bytes}", elem_bytes)


def read_access(elem_bytes: int) -> Access:
    return fragment_pairs("ld.shared.v2.f32" if elem_bytes == 4 else f"ld.shared.b{16 * elem_bytes}", elem_bytes)


def layout_of(tile: SharedTileType) -> Layout:
    return Layout(tile.rows, tile.cols, element_bytes(tile.element_type), max(tile.swizzle.data, 0))


def candidates(tile: SharedTileType, wgmma: bool) -> list[Layout]:
    """Layouts the tile's TMA boxes and wgmma descriptors allow, the preferred (widest span) first."""
    e = element_bytes(tile.element_type)
    row_bytes = tile.cols * e
    layouts = [Layout(tile.rows, tile.cols, e, s) for s in SWIZZLE_SPANS if row_bytes % s == 0]
    if not wgmma:
        layouts.append(Layout(tile.rows, tile.cols, e, 0))
    return layouts


@dataclass(frozen=True)
class Choice:
    layout: Layout
    reason: str
    """The chosen layout's wavefronts and the alternatives'."""
    ways: dict[str, int]
    """Instruction -> conflict ways under the chosen layout."""


def choose(layouts: Sequence[Layout], accesses: Sequence[Access], current: Layout) -> Choice:
    """The layout with the fewest wavefronts over all accesses; ties keep `current`."""
    costs = {layout: [conflicts(layout, a) for a in accesses] for layout in layouts}
    best = min(layouts, key=lambda layout: (sum(c.actual for c in costs[layout]), layout != current))

    def summary(layout: Layout) -> str:
        ways = max(c.ways for c in costs[layout])
        return "conflict-free" if ways == 1 else f"{ways}-way"

    actual = sum(c.actual for c in costs[best])
    ideal = sum(c.ideal for c in costs[best])
    instructions = " + ".join(dict.fromkeys(f"{a.instruction} ({a.width} B/lane)" for a in accesses))
    reason = f"{instructions}: {best.describe()} {summary(best)}, {actual} wavefronts (ideal {ideal})"
    others = [f"{layout.describe()} {summary(layout)}" for layout in layouts if layout != best]
    if others:
        reason += "; " + ", ".join(others)
    return Choice(best, reason, {a.instruction: c.ways for a, c in zip(accesses, costs[best])})


def record(op: Operation, instruction: str, ways: int, reason: str) -> None:
    op.attributes["bank_conflicts"] = DecisionAttr(ways, reason)
    op.attributes["smem_access"] = StringAttr(instruction)


def plan_shared_tile(op: LoadOp | ToSharedOp) -> None:
    """Pick the layout of one shared tile from its warp-level writes and reads."""
    tile = op.result.type
    assert isinstance(tile, SharedTileType)
    e = element_bytes(tile.element_type)
    accessors: list[tuple[Operation, Access]] = [(op, write_access(e))] if isinstance(op, ToSharedOp) else []
    accessors += [(user, read_access(e)) for user, _ in users(op.result) if isinstance(user, ToRegOp)]
    if not accessors:
        return
    decided = op.attributes.get("swizzle")
    if not isinstance(decided, DecisionAttr):
        raise error_at(op, "tile-bank-conflicts needs the swizzle decision of tile-swizzle-select on this tile")
    current = layout_of(tile)
    pinned = decided.reason.data.startswith("pinned")
    layouts = [current] if pinned else candidates(tile, bool(read_by_wgmma(op)))
    choice = choose(layouts, [a for _, a in accessors], current)
    if choice.layout != current:
        set_swizzle(op, choice.layout.swizzle, choice.reason)
    for accessor, access in accessors:
        record(accessor, access.instruction, choice.ways[access.instruction], choice.reason)


def plan_staging(store: StoreOp) -> None:
    """The epilogue of a register tile: stage it in shared memory for one TMA store."""
    value = store.value.type
    assert isinstance(value, RegisterTileType)
    staging = SharedTileType(value.get_shape(), value.element_type)
    layouts = candidates(staging, wgmma=False)
    lined = ""
    cuts = [why for why, cut in (("reaches past an element range's end", ends_rows(store)),
                                 ("may start before row 0", may_start_before(store))) if cut]
    lined_layouts = [layout for layout in layouts if layout.pitch % TMA_SMEM_ALIGN == 0]
    if cuts and lined_layouts:
        # the rows before an element range's end, or from row 0 on, go as one-row TMA boxes,
        # which start on lines (a tile of narrower rows has no such layout: the lowering refuses it)
        layouts = lined_layouts
        lined = (f"; rows of whole {TMA_SMEM_ALIGN}-byte lines, where the one-row TMA boxes of a tile that "
                 f"{' or '.join(cuts)} start")
    access = write_access(element_bytes(value.element_type))
    choice = choose(layouts, [access], layouts[0])
    shape = f"{value.rows}x{value.cols}x{element_name(value.element_type)}"
    store.attributes["staging"] = DecisionAttr(
        choice.layout.swizzle,
        f"{shape} staging tile, written by {access.instruction} then one TMA store: {choice.layout.describe()}, "
        f"the fewest wavefronts (bank_conflicts says why){lined}",
    )
    record(store, access.instruction, choice.ways[access.instruction], choice.reason)


def plan_vector(op: ToRegOp, vector: SharedVectorType) -> None:
    """A shared row vector read into registers: the quad holding a row reads its one element."""
    e = element_bytes(vector.element_type)
    access = row_vector(f"ld.shared.b{8 * e}", e)
    c = conflicts(Layout(vector.length, 1, e, 0), access)
    verdict = "conflict-free" if c.ways == 1 else f"{c.ways}-way"
    record(op, access.instruction, c.ways, f"{access.instruction}, one element per row (a quad shares it): "
           f"{verdict}, {c.actual} wavefronts (ideal {c.ideal})")


@dataclass(frozen=True)
class TileBankConflictsPass(ModulePass):
    name = "tile-bank-conflicts"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in op.walk():
            if isinstance(kernel, KernelOp):
                check_budgets(kernel)  # before simulating tiles that could never fit
        for tile_op in shared_tile_ops(op):
            plan_shared_tile(tile_op)
        for inner in op.walk():
            if isinstance(inner, StoreOp) and isinstance(inner.value.type, RegisterTileType):
                plan_staging(inner)
            elif isinstance(inner, ToRegOp) and isinstance(inner.source.type, SharedVectorType):
                plan_vector(inner, inner.source.type)
