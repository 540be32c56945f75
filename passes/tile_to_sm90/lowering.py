"""What the lowering of one tile.kernel decides once, before either role is emitted.

- **Rows and consumers.** Register tiles and row vectors may have different rows (column
  vectors have none). The occupancy plan's C consumer warpgroups each own R/C rows of a tile of
  R rows, in multiples of the 64 rows of a wgmma, or all R where the plan replicates that height
  (`replicated_rows`: shorter than 64·C, so no split exists; every consumer computes it whole).
  A tile or row vector whose rows are no multiple of 64 (16, 96, ...) is computed as its rows
  rounded up to one (plan.padded_rows), in 64-row slices (the M of a wgmma) whose rows past its
  own are padding (plan.fragment_rows), in the last consumer's fragment where it is split: the
  ops that see them are told the valid rows (stores and moves to shared memory skip the rest, a
  column reduction masks them).
  Nothing but shared memory, which every consumer reads whole, carries values between heights.
- **Fragment types**, the type converter `!tile.rt`/`!tile.rv` → `!sm90.frag`
  (`fragment_type`): a register tile or row vector is split by rows (`!sm90.frag<R/C x N>`) or
  replicated (`!sm90.frag<R x N>`, padded to 64 rows), a column vector (`!tile.rv<N, col>`, tile-vector-layout's) is
  replicated (`!sm90.frag<N, col>`); where the plan says `band`, all three are in the band
  layout (`!sm90.frag<R x N, band>`, `!sm90.frag<N, band_col>`), their rows unpadded.
- **Shared memory** as tile-pipeline recorded it (shared_memory.read_shared_memory).
- **Clusters** (`@cluster(2)`, `@cluster(4)` or the plan's decision): which ring loads a cluster
  of 2 or 4 CTAs along grid axis 0 multicasts (those whose coordinates do not involve that axis
  and whose panels, or else rows in whole swizzle repeats, split evenly over the CTAs, never a
  stored tensor). Where the tiles along the axis are no multiple of the cluster, the last
  cluster's extra tiles lie wholly past the end: their loads read zeros, their stores write
  nothing (TMA clips, a vector store stops at its limit), and their CTAs still load their share
  of the multicast tiles for the others.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

from xdsl.ir import Attribute, Operation

from tkc.diagnostics import error_at
from tkc.dialects import sm90, tile
from tkc.passes.plan import WGMMA_ROWS, KernelPlan, depends_on_block_axis, from_block_axis, padded_rows, register_heights
from tkc.passes.tile_to_sm90.launch_abi import LaunchParams, checked_at_launch, grid_expr
from tkc.passes.tile_to_sm90.shared_memory import SWIZZLE_REPEAT_ROWS, SharedMemory, read_shared_memory
from tkc.passes.warp_roles import Roles, check_roles

CLUSTER_SIZES = tuple(n for n in tile.CLUSTER_CTAS if n > 1)
"""CTAs a cluster sharing multicast loads may have (along grid axis 0). Where rows do not start on
128-byte lines each box row takes two line requests, and pairs sharing B bring a GEMM to cuBLAS's
speed on the H200; four CTAs, a quarter of B each, ran slower than pairs there (see
docs/internals.md), so they are only ever pinned."""


def check_heights(kernel: tile.KernelOp, plan: KernelPlan) -> None:
    """Every register tile and row vector is one the plan's consumers replicate (at most
    `replicated_rows` rows) or split into slices of whole wgmmas, its rows rounded up to a
    multiple of 64 either way (plan.padded_rows)."""
    consumers = plan.consumers
    for rows, op in sorted(register_heights(kernel).items()):
        if rows > plan.replicated_rows and padded_rows(rows) % (consumers * WGMMA_ROWS):
            raise error_at(
                op,
                f"{rows} register-tile rows cannot be split over {consumers} consumer warpgroups of 64-row multiples"
                + (f" (the plan replicates tiles of up to {plan.replicated_rows} rows)" if plan.replicated_rows else ""),
            )


def check_vector_layouts(kernel: tile.KernelOp) -> None:
    """Every broadcast and reduction has a vector of its axis's layout, as tile-vector-layout
    types them (the fragment types follow the types alone)."""
    for op in kernel.walk():
        if isinstance(op, tile.BroadcastOp | tile.ReduceOp):
            vector = op.vector if isinstance(op, tile.BroadcastOp) else op.result
            column = op.axis.data == tile.Axis.COL
            if isinstance(vector.type, tile.RegisterVectorType) and vector.type.is_column != column:
                raise error_at(
                    op, f"a {op.axis.data} {op.name} needs a {'column' if column else 'row'} vector, got {vector.type}: "
                    "tile-vector-layout infers the layouts (run it before convert-tile-to-sm90)",
                )


@dataclass
class KernelLowering:
    kernel: tile.KernelOp
    plan: KernelPlan
    consumers: int
    memory: SharedMemory
    params: LaunchParams
    grid_op: tile.GridOp
    symbolic_dims: list[str]
    multicast: set[tile.LoadOp]
    roles: Roles
    """Which role runs each op (tile-warp-specialize's)."""
    checked_at_launch: set[Operation]
    """The requirements and the index math only they read (launch_abi.checked_at_launch): no code."""

    @property
    def cluster(self) -> int:
        return self.plan.cluster if self.multicast else 1

    @staticmethod
    def of(kernel: tile.KernelOp) -> KernelLowering:
        plan = KernelPlan.of(kernel)
        check_vector_layouts(kernel)
        roles = check_roles(kernel)
        check_heights(kernel, plan)
        memory = read_shared_memory(kernel, plan)
        params = LaunchParams({arg: name for arg, name in zip(kernel.body.block.args, kernel.arg_names)})
        grid_op = next(op for op in kernel.body.block.ops if isinstance(op, tile.GridOp))
        symbolic_dims = sorted(
            {
                d
                for arg in kernel.body.block.args
                for d in cast(tile.GlobalType, arg.type).get_dims()
                if isinstance(d, str)
            }
        )
        multicast = _cluster_plan(kernel, plan, memory, grid_op)
        return KernelLowering(kernel, plan, plan.consumers, memory, params, grid_op, symbolic_dims, multicast, roles,
                              checked_at_launch(kernel))

    def replicated(self, rows: int) -> bool:
        """Whether every consumer holds all `rows` rows of a register tile or row vector (the
        plan's replicated_rows) rather than its own slice of them."""
        return rows <= self.plan.replicated_rows

    def fragment_type(self, t: Attribute) -> Attribute:
        """The type a register tile or vector has in a consumer: a column vector is replicated,
        the rest split by rows, or replicated where the plan says so; other types are kept."""
        band = self.plan.band
        if isinstance(t, tile.RegisterTileType):
            return sm90.FragmentType([self.plan.fragment_rows(t.rows), t.cols], t.element_type, band=band)
        if isinstance(t, tile.RegisterVectorType) and t.is_column:
            return sm90.FragmentType([t.length], t.element_type, column=True, band=band)
        if isinstance(t, tile.RegisterVectorType):
            return sm90.FragmentType([self.plan.fragment_rows(t.rows)], t.element_type, band=band)
        return t


def _cluster_plan(kernel: tile.KernelOp, plan: KernelPlan, memory: SharedMemory,
                  grid_op: tile.GridOp) -> set[tile.LoadOp]:
    """With `@cluster(n)`: the ring loads a cluster of n CTAs along grid axis 0 shares (see the
    module docstring)."""
    size = plan.cluster
    if size == 1:
        return set()
    extents = [grid_expr(v, kernel) for v in grid_op.extents]
    first = extents[0]
    # a stored tensor is never multicast: one CTA's producer cannot wait for the other's stores
    stored = {op.tensor for op in kernel.walk() if isinstance(op, tile.StoreOp)}
    shared = {
        load
        for ring in memory.rings
        if ring.loop is not None
        for load in ring.loads
        if not depends_on_block_axis(load, 0) and ring.buffers[load].shared_by(size)
        and load.tensor not in stored
    }
    for ring in memory.counted_rings:
        if ring.owner is not None and (ring.loop is None or ring.owner.parent_op() is not kernel):
            raise error_at(
                ring.owner,
                f"@cluster({size}) multicasts the stages of top-level loops only, and each CTA frees its stages in "
                "all of the cluster's: a loop nested in another or an if whose branches load could run differently in "
                "two of its CTAs",
            )
        if ring.loop is not None and any(from_block_axis(bound, 0) for bound in (ring.loop.lb, ring.loop.ub, ring.loop.step)):
            axis = grid_op.names.data[0].data
            raise error_at(
                ring.loop,
                f"@cluster({size}) groups CTAs along {axis}, and each CTA frees its stages in all of them, so they "
                f"must run the same stages: this loop's bounds depend on {axis} (directly or through a table read at "
                f"it), so they would run different numbers of iterations and one would wait forever for another",
            )
    simple = isinstance(first, tuple) and first[0] in ("div", "ceildiv") and isinstance(first[1], str) and isinstance(first[2], int)
    failed = [why for why, broken in (
        (f"clusters of {size}", size not in CLUSTER_SIZES),
        ("not persistent", not plan.persistent),
        ("a 1-D grid", len(extents) < 2),
        ("its first extent is not a dim divided by a tile size", not simple),
        (f"no pipelined tile is shared along it with a multiple of {size} swizzle panels or of "
         f"{size * SWIZZLE_REPEAT_ROWS} rows", not shared),
    ) if broken]
    if failed:
        raise error_at(
            kernel,
            f"@cluster({size}) needs a persistent kernel with a 2-D grid whose first extent is a dim "
            f"divided by a tile size (rounding up or down), and a pipelined tile shared along that axis with a multiple "
            f"of {size} swizzle panels or of {size * SWIZZLE_REPEAT_ROWS} rows; tkc builds clusters of "
            f"{' or '.join(map(str, CLUSTER_SIZES))} (here: {'; '.join(failed)})",
        )
    return shared
