"""The kernel's shared memory as the lowering sees it: tile-pipeline decided every offset
(plan.smem_plan, recorded on the ops); this module reads them back and places what only the
lowering places in the first kilobyte: the store-fence slots, after the rings' mbarriers
(RING_BARRIERS_PER_STAGE a stage, which sm90-build-rings lays out from offset 0).

One source of truth: nothing here lays out a tile. An op without its recorded offset means
tile-pipeline did not run, which is an error, not a reason to recompute the layout.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import cast

from xdsl.dialects import scf
from xdsl.dialects.builtin import IntegerAttr
from xdsl.ir import Block, Operation, SSAValue

from tkc.diagnostics import TkError, defect_at, error_at
from tkc.dialects import sm90, tile
from tkc.passes.plan import (
    MBARRIER_REGION,
    TILE_ALIGN,
    KernelPlan,
    RingOwner,
    align,
    buffer_bytes,
    col_scratch_bytes,
    kernel_load_groups,
    producer_fences,
    smem_plan,
    ring_owners,
    split_ring_loads,
    staging_chunk,
    staging_chunk_bytes,
    tile_ring_stages,
)
from tkc.passes.shared_tiles import buffer_rows
from tkc.passes.wgmma_layout import widest_span


def swizzle_of(t: tile.SharedTileType | tile.SharedVectorType) -> int:
    """The tile's swizzle span in bytes (tile-swizzle-select's choice; 0 for vectors)."""
    if isinstance(t, tile.SharedTileType) and t.swizzle.data >= 0:
        return t.swizzle.data
    if isinstance(t, tile.SharedVectorType):
        return 0
    # tile-swizzle-select did not run: the widest span a row fills, as it would choose
    return widest_span(t.get_shape()[-1] * tile.element_bytes(t.element_type))


SWIZZLE_REPEAT_ROWS = 8
"""The rows after which every swizzle pattern repeats (8 x its span in bytes): a TMA box written
at a multiple of them from a tile's start lays its rows out as the tile's own box would."""


@dataclass
class SharedBuffer:
    """A tile's place in shared memory (offset from the aligned base) and the layout it has."""

    offset: int
    ref_type: sm90.SharedRefType
    box_rows: int
    """The rows TMA writes: the tile's, fewer than the buffer's where shared_tiles.buffer_rows pads it."""

    @property
    def panel_bytes(self) -> int:
        """The distance between the buffer's column panels."""
        shape = self.ref_type.get_shape()
        rows = shape[0] if len(shape) == 2 else 1
        return rows * self.ref_type.panel_cols * tile.element_bytes(self.ref_type.element_type)

    @property
    def box_bytes(self) -> int:
        """The bytes one TMA box (a panel of the tile's own rows) writes."""
        return self.box_rows * self.ref_type.panel_cols * tile.element_bytes(self.ref_type.element_type)

    @property
    def panels(self) -> int:
        return self.ref_type.get_shape()[-1] // self.ref_type.panel_cols

    def split_by_rows(self, ctas: int) -> bool:
        """Whether `ctas` CTAs sharing this tile (TMA multicast) each load a band of its rows in
        every panel, not whole panels: where its panels do not split evenly over them. Each band
        starts on a whole swizzle repeat (SWIZZLE_REPEAT_ROWS), so it lands in the layout of the
        whole tile."""
        return (self.panels % ctas != 0 and len(self.ref_type.get_shape()) == 2
                and self.box_rows % (ctas * SWIZZLE_REPEAT_ROWS) == 0)

    def shared_by(self, ctas: int) -> bool:
        """Whether `ctas` CTAs can split the loads of this tile evenly: by panels or by rows."""
        return self.panels % ctas == 0 or self.split_by_rows(ctas)


@dataclass(eq=False)
class Ring:
    """Loads that complete together: one stage each time `it` advances."""

    loads: list[tile.LoadOp]
    stages: int
    owner: RingOwner | None
    """The loop each of whose iterations, or the if each run of a branch that loads of which,
    advances the ring; None: once per output tile."""
    buffers: dict[tile.LoadOp, SharedBuffer] = field(default_factory=dict)
    stage_bytes: int = 0
    base: int = 0

    @property
    def loop(self) -> scf.ForOp | None:
        return self.owner if isinstance(self.owner, scf.ForOp) else None

    def loads_in(self, block: Block) -> list[tile.LoadOp]:
        """The ring's loads in `block` (one branch of an if's; all of a loop's)."""
        return [load for load in self.loads if load.parent_block() is block]

    def tx_bytes(self, loads: list[tile.LoadOp]) -> int:
        """The bytes TMA writes for `loads`: their tiles' (a realigned vector's box is longer)."""
        return sum(cast(tile.SharedTileType, load.result.type).num_bytes
                   + tile.realignment(load) * tile.element_bytes(cast(tile.SharedTileType, load.result.type).element_type)
                   for load in loads)


@dataclass
class Staging:
    """A consumer's chunk buffers for one register-tile store, at offset + consumer * stride (the
    first consumer's alone where every consumer holds the whole tile: it stores it)."""

    offset: int
    chunk: sm90.SharedRefType
    buffers: int
    chunk_bytes: int
    """From one chunk to the next (plan.staging_chunk_bytes, which the planner reserved)."""
    reuses_single_tiles: bool = False
    """In the bytes of the kernel-level loads (plan.staging_reuses_single_tiles): all consumers
    meet before writing them, so no wgmma still reads them."""

    @property
    def consumer_stride(self) -> int:
        return self.buffers * self.chunk_bytes


@dataclass
class SharedMemory:
    rings: list[Ring]
    staging: dict[tile.StoreOp, Staging]
    shared: dict[tile.ToSharedOp, SharedBuffer]
    """The one buffer of each tile.to_shared tile: every consumer writes its rows, all read it whole."""
    barriers: int
    smem_bytes: int
    col_scratch: int = 0
    """The scratch buffer all column reductions share (sm90.ColReduceOp.scratch_bytes of the widest)."""
    fence_slots: dict[tile.FenceOp, int] = field(default_factory=dict)
    """The counter slot (offset from the base, after the mbarriers) of each fence the producer
    passes: those in the kernel body and in loops it walks. Other fences only order stores."""

    @property
    def kernel_rings(self) -> list[Ring]:
        """The rings of the loads that run once per output tile (plan.tile_ring_stages deep)."""
        return [ring for ring in self.rings if ring.owner is None]

    @property
    def counted_rings(self) -> list[Ring]:
        """The rings of loops and ifs, whose counts the roles carry across tiles, in ring order."""
        return [ring for ring in self.rings if ring.owner is not None]

    def ring_of(self, owner: Operation) -> Ring | None:
        """The owner's ring (the first of a split loop's, whose count both share)."""
        return next((ring for ring in self.rings if ring.owner is owner), None)

    def rings_of(self, owner: Operation) -> list[Ring]:
        """The owner's rings: one, or a split loop's two (tile-pipeline's split_ring)."""
        return [ring for ring in self.rings if ring.owner is owner]

    def rings_within(self, op: Operation) -> list[Ring]:
        """The rings of the loops and ifs nested in `op`'s regions, whose counts its copy in
        each role carries (op's own ring excluded)."""
        return [ring for ring in self.counted_rings if ring.owner is not op and ring.owner is not None
                and op.is_ancestor(ring.owner)]

    def ring_loading(self, load: tile.LoadOp) -> Ring:
        return next(ring for ring in self.rings if load in ring.loads)

    def ring_values(self, base: SSAValue, block: Block) -> dict[Ring, SSAValue]:
        """Each ring as an `sm90.ring` (numbered in ring order) addressed from `base`, the
        shared-memory base of the code in `block`, at whose end they are made."""
        values: dict[Ring, SSAValue] = {}
        for number, ring in enumerate(self.rings):
            op = sm90.RingOp(base, number, ring.base, ring.stages, ring.stage_bytes)
            block.add_op(op)
            values[ring] = op.result
        return values


def _check_ring_order(block: Block, loads: list[tile.LoadOp]) -> None:
    """A ring's loads in one block are one TMA stage, which consumers wait for at its first load
    and the producer issues at its last. A fence after the first (a load that must follow a store
    of the same iteration) would make each wait for the other; so would another ring's loads or
    a fence nested between the first and the last (the producer fills the other ring's stages,
    and the consumers would wait for this one, before freeing them)."""
    first, last = block.get_operation_index(loads[0]), block.get_operation_index(loads[-1])
    tiles, before, instead = (("a loop iteration's tiles", "earlier in the same iteration", "in a later iteration or loop")
                              if isinstance(block.parent_op(), scf.ForOp) else
                              ("the tiles of a block", "earlier in the block", "after the construct that holds them"))
    for index, op in enumerate(block.ops):
        if isinstance(op, tile.FenceOp) and first < index < last:
            raise error_at(
                op,
                f"the GPU backend loads {tiles} as one TMA stage, so it cannot load a tile after a store {before} "
                f"that it may read: move the store after the loads, or load the stored tile {instead}",
            )
        if first < index < last and op.regions and any(isinstance(inner, tile.LoadOp | tile.FenceOp) for inner in op.walk()):
            raise error_at(
                op,
                "the GPU backend issues the loads of one block as one TMA stage where the last of them stands, so a "
                "loop or if that loads or fences cannot come between them: move the loads before or after it",
            )


def offset_of(op: Operation, key: str) -> int:
    """An offset tile-pipeline recorded on `op`: the lowering lays out nothing itself."""
    attr = op.attributes.get(key)
    if not isinstance(attr, IntegerAttr):
        raise error_at(
            op, f"convert-tile-to-sm90 reads the shared-memory layout tile-pipeline records, but {op.name} has no "
            f"{key}: run tile-pipeline first",
        )
    return attr.value.data


def stages_of(owner: RingOwner, plan: KernelPlan) -> int:
    decision = owner.attributes.get("pipeline") or owner.attributes.get("stages")
    if isinstance(decision, tile.DecisionAttr):
        return decision.int_value
    if isinstance(decision, IntegerAttr):
        return decision.value.data
    return plan.stages


def read_shared_memory(kernel: tile.KernelOp, plan: KernelPlan) -> SharedMemory:
    """The kernel's shared memory as tile-pipeline laid it out (plan.smem_plan): offsets of the
    single tiles, rings and staging tiles, the total; the mbarriers and store-fence slots of the
    first 1 KB are numbered here."""
    rings = [Ring(group, tile_ring_stages(kernel, plan.stages), None) for group in kernel_load_groups(kernel)]
    for owner in ring_owners(kernel):
        loads = [op for op in owner.walk() if isinstance(op, tile.LoadOp) and op.parent_op() is owner]
        for block in {load.parent_block(): None for load in loads}:
            assert block is not None
            _check_ring_order(block, [load for load in loads if load.parent_block() is block])
        if isinstance(owner, scf.ForOp) and KernelPlan.splits_ring(owner):
            # tile-pipeline's split_ring: the head's and the late tail's loads, each a ring of its
            # own over the same stage bytes (each load keeps its stage_offset), with its own mbarriers
            parts = split_ring_loads(owner)
            if isinstance(parts, str):  # hand-written IR: tile-pipeline decides only where it can
                raise error_at(owner, f"the loop's split_ring decision cannot hold: {parts}")
            rings += [Ring(part, stages_of(owner, plan), owner) for part in parts]
            continue
        rings.append(Ring(loads, stages_of(owner, plan), owner))
    for op in kernel.walk():
        if isinstance(op, tile.LoadOp) and not any(op in ring.loads for ring in rings):
            raise error_at(op, "convert-tile-to-sm90 needs every load where tile-pipeline leaves it: run tile-pipeline first")

    def buffer(op: Operation, key: str, base: int = 0) -> SharedBuffer:
        t = cast(tile.SharedTileType, op.results[0].type)
        rows = buffer_rows(op)
        shape = [rows, *t.get_shape()[1:]] if isinstance(t, tile.SharedTileType) else [
            t.get_shape()[-1] + tile.realignment(op)]
        box_rows = t.get_shape()[0] if isinstance(t, tile.SharedTileType) else 1
        return SharedBuffer(offset_of(op, key) - base, sm90.SharedRefType(shape, t.element_type, swizzle_of(t)), box_rows)

    shared = {op: buffer(op, "smem_offset") for op in kernel.walk() if isinstance(op, tile.ToSharedOp)}
    # the plan's room for each buffer (plan.buffer_bytes): a transposed A narrower than 64 columns
    # has whole 64-column slices, which its wgmma reads into the product's padding rows
    single_end = max((s.offset + buffer_bytes(op) for op, s in shared.items()), default=MBARRIER_REGION)
    barriers = 0
    for ring in rings:
        if ring.owner is None:
            # the kernel-level rings share their stages: the single tiles, from the barrier
            # region's end (stage 0 of plan.tile_ring_stages)
            ring.base = MBARRIER_REGION
            for load in ring.loads:
                ring.buffers[load] = buffer(load, "smem_offset", MBARRIER_REGION)
                single_end = max(single_end, MBARRIER_REGION + ring.buffers[load].offset + buffer_bytes(load))
        else:
            ring.base, ring.stage_bytes = offset_of(ring.owner, "ring_offset"), offset_of(ring.owner, "stage_bytes")
            for load in ring.loads:
                ring.buffers[load] = buffer(load, "stage_offset")
        barriers += sm90.RING_BARRIERS_PER_STAGE * ring.stages
    for ring in rings:
        if ring.owner is None:
            ring.stage_bytes = align(single_end, TILE_ALIGN) - MBARRIER_REGION
    fences = producer_fences(kernel)
    layout = smem_plan(kernel, plan.stages)
    if (barriers, len(fences)) != (layout.barrier_count, layout.fence_count):
        raise defect_at(kernel, f"the rings take {barriers} mbarriers and {len(fences)} store fences where the plan "
                                f"sized the barrier region for {layout.barrier_count} and {layout.fence_count}")
    fence_slots = {fence: sm90.MBARRIER_BYTES * (barriers + k) for k, fence in enumerate(fences)}
    if (barriers + len(fences)) * sm90.MBARRIER_BYTES > MBARRIER_REGION:  # the plan sized for them (SmemPlan.barriers_fit)
        raise error_at(
            kernel,
            f"{barriers} mbarriers and {len(fences)} store fences do not fit the {MBARRIER_REGION}-byte barrier region",
        )

    staging: dict[tile.StoreOp, Staging] = {}
    for op in kernel.walk():
        if isinstance(op, tile.StoreOp) and isinstance(op.value.type, tile.RegisterTileType):
            swizzle, chunk_cols, buffers = staging_chunk(op)
            rows = plan.consumer_rows(op.value.type.rows)
            chunk = sm90.SharedRefType([rows, chunk_cols], op.value.type.element_type, swizzle)
            reused = isinstance(op.attributes.get("staging_reuse"), tile.DecisionAttr)
            staging[op] = Staging(offset_of(op, "smem_offset"), chunk, buffers, staging_chunk_bytes(op, rows),
                                  reuses_single_tiles=reused)
    col_scratch = offset_of(kernel, "col_scratch_offset") if "col_scratch_offset" in kernel.attributes else 0
    smem_bytes = plan.smem_bytes
    if not smem_bytes:
        raise error_at(kernel, "convert-tile-to-sm90 needs the kernel's smem_bytes decision: run tile-pipeline first")
    _check_layout(rings, shared, smem_bytes)
    _check_staging(kernel, plan, rings, shared, staging, col_scratch, smem_bytes)
    return SharedMemory(rings, staging, shared, barriers, smem_bytes, col_scratch, fence_slots)


def _check_staging(kernel: tile.KernelOp, plan: KernelPlan, rings: list[Ring],
                   shared: dict[tile.ToSharedOp, SharedBuffer], staging: dict[tile.StoreOp, Staging],
                   col_scratch: int, smem_bytes: int) -> None:
    """The chunks each staged store writes (storing consumers x buffers x chunk) and the column
    scratch overlap no ring, shared buffer, other store's chunks (unless the plan shares one
    region among stores whose chunks lie alike: plan.staging_shareable) or each other, and end before the
    kernel's shared memory does; a store staged in the single tiles' bytes stays within them. The
    planner reserved these bytes and the lowering writes them: a difference between the two is a
    compiler defect, caught here rather than as two buffers sharing bytes at run time."""
    spans: list[tuple[int, int, Operation]] = [
        (ring.base, ring.base + ring.stages * ring.stage_bytes, ring.owner) for ring in rings if ring.owner is not None]
    spans += [(buffer.offset, buffer.offset + buffer.ref_type.num_bytes, op) for op, buffer in shared.items()]
    singles = [(start, start + ring.buffers[load].ref_type.num_bytes, load) for ring in rings if ring.owner is None
               for load in ring.loads for start in [ring.base + ring.buffers[load].offset]]
    spans += singles
    if scratch := col_scratch_bytes(kernel):
        spans.append((col_scratch, col_scratch + scratch, kernel))
    layouts = set()
    for store, chunks in staging.items():
        storing = plan.storing_consumers(cast(tile.RegisterTileType, store.value.type).rows)
        start, end = chunks.offset, chunks.offset + storing * chunks.consumer_stride
        layouts.add((start, storing, chunks.consumer_stride))
        if chunks.reuses_single_tiles:
            if not singles or start < min(a for a, _, _ in singles) or end > max(b for _, b, _ in singles):
                raise defect_at(store, f"this store's staging at smem+{start}..{end} leaves the single tiles' bytes it "
                                      f"reuses: the planner and the lowering disagree on its size")
            continue
        spans.append((start, end, store))
    # stores in one region (plan.shared_staging) share it whole: the same start, storing
    # consumers and per-consumer stride, so no consumer writes where another's store is read
    shares_staging = plan.shared_staging and len(layouts) == 1
    spans.sort(key=lambda span: span[0])
    for i, (start, end, first) in enumerate(spans):
        if start < MBARRIER_REGION or end > smem_bytes:
            raise defect_at(first, f"the bytes smem+{start}..{end} of {first.name} lie outside smem+{MBARRIER_REGION}.."
                                  f"{smem_bytes}: the planner and the lowering disagree on a buffer's size")
        for other_start, _, other in spans[i + 1:]:
            if other_start >= end:
                break
            if shares_staging and isinstance(first, tile.StoreOp) and isinstance(other, tile.StoreOp):
                continue
            if isinstance(first, tile.StoreOp) or isinstance(other, tile.StoreOp) or first is kernel or other is kernel:
                raise defect_at(other, f"the bytes from smem+{other_start} of {other.name} overlap those of {first.name} "
                                      f"at smem+{start}..{end}: the planner and the lowering disagree on a buffer's size")


def _check_layout(rings: list[Ring], shared: dict[tile.ToSharedOp, SharedBuffer], smem_bytes: int) -> None:
    """The offsets tile-pipeline recorded hold together, as IR edited by hand may not: every
    ring's stages and every tile.to_shared buffer lie between the barrier region and the end of
    the kernel's shared memory; each load of a stage fits the stage and none overlaps another
    load of its block (an if's branches each fill a stage from its first byte); rings overlap
    only where they split one loop's stages (split_ring)."""
    def fail(op: Operation, what: str) -> TkError:
        return error_at(op, f"{what}: the shared-memory layout recorded in the IR does not hold together (offsets "
                            f"edited after tile-pipeline laid them out?)")

    spans: list[tuple[int, int, Operation, RingOwner | None]] = []
    for ring in rings:
        if ring.owner is None:
            # the single tiles: each in every stage of the kernel-level ring (a persistent walk's)
            spans += [(start, start + ring.buffers[load].ref_type.num_bytes, load, None)
                      for load in ring.loads for stage in range(ring.stages)
                      for start in [ring.base + stage * ring.stage_bytes + ring.buffers[load].offset]]
            continue
        if ring.stage_bytes <= 0 or ring.base < MBARRIER_REGION or ring.base + ring.stages * ring.stage_bytes > smem_bytes:
            raise fail(ring.owner, f"this ring of {ring.stages} stages of {ring.stage_bytes} bytes at smem+{ring.base} "
                                   f"lies outside smem+{MBARRIER_REGION}..{smem_bytes}")
        for block in {load.parent_block(): None for load in ring.loads}:
            placed = sorted(((ring.buffers[load].offset, ring.buffers[load].ref_type.num_bytes, load)
                             for load in ring.loads if load.parent_block() is block), key=lambda p: p[:2])
            for (offset, size, load), following in zip(placed, [*placed[1:], None]):
                if offset < 0 or offset + size > ring.stage_bytes:
                    raise fail(load, f"this load's {size} bytes at stage offset {offset} do not fit the ring's "
                                     f"{ring.stage_bytes}-byte stages")
                if following is not None and offset + size > following[0]:
                    raise fail(following[2], f"this load's stage offset {following[0]} overlaps the {size} bytes of another "
                                             f"load of the stage at {offset}")
        spans.append((ring.base, ring.base + ring.stages * ring.stage_bytes, ring.owner, ring.owner))
    for to_shared, buffer in shared.items():
        end = buffer.offset + buffer.ref_type.num_bytes
        if buffer.offset < MBARRIER_REGION or end > smem_bytes:
            raise fail(to_shared, f"this tile's buffer at smem+{buffer.offset} lies outside "
                                  f"smem+{MBARRIER_REGION}..{smem_bytes}")
        spans.append((buffer.offset, end, to_shared, None))
    spans.sort(key=lambda span: span[0])
    for i, (start, end, first, owner) in enumerate(spans):
        for other_start, _, other, other_owner in spans[i + 1:]:
            if other_start >= end:
                break
            if owner is None or owner is not other_owner:
                raise fail(other, f"the bytes from smem+{other_start} overlap those of {first.name} at smem+{start}")
