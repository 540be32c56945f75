"""convert-tile-to-sm90: split a tile kernel into a producer and consumer warpgroups.

What it decides, and why:
- **Roles.** Warpgroup 0 produces: one elected thread walks the kernel's control flow keeping
  only index math and loads, and issues each load as TMA boxes into shared memory
  (tile_to_sm90/producer.py). Warpgroups 1..C consume: they run everything else on register
  fragments, each owning R/C rows of every register tile (the occupancy plan's `consumers`;
  tile_to_sm90/consumer.py). Producer and consumers never share a register, only shared memory
  and mbarriers, so neither waits on the other's latency.
- **Fragments.** A register tile or row vector becomes each consumer's rows of it, a column
  vector (`!tile.rv<N, col>`, tile-vector-layout's) one replicated fragment: the type converter
  `KernelLowering.fragment_type` (tile_to_sm90/lowering.py) follows the tile types alone.
- **Rings.** The loads inside a loop form one stage of an S-stage ring (S from the pipeline
  decision); loads outside loops form a one-stage ring that turns over once per output tile
  (tile_to_sm90/rings.py). The roles acquire, wait for and release stages of `sm90.ring`s;
  their mbarriers are sm90-build-rings'.
- **Tensor-core overlap.** An accumulation loop keeps one wgmma group in flight across the
  back edge (tile_to_sm90/mma.py); a loop with tile-pipeline's `overlap` decision runs its
  last mma one iteration late (tile_to_sm90/overlap.py).
- **Shared memory** is tile-pipeline's (plan.smem_plan, recorded on the ops): the lowering
  reads it (tile_to_sm90/shared_memory.py) and places only the mbarriers and store-fence
  slots of the first kilobyte (tile-pipeline refuses a layout over 227 KB, naming the budget).
- **Epilogue, vector stores, tile.to_shared** (tile_to_sm90/stores.py), **fences**
  (tile_to_sm90/fences.py), **compute** op by op (tile_to_sm90/compute.py); a band tile's
  accumulated row reduction meets the warps' partials after its loop, not in every iteration
  (tile_to_sm90/band_deferral.py).
- **Clusters** (`@cluster(2)`): pairs of CTAs along grid axis 0 multicast a ring tile they
  share (tile_to_sm90/lowering.py), and a stage is free only when the consumers of both CTAs
  released it. With an odd number of tile rows the last pair's second tile is out of bounds:
  its TMA loads read zeros and its TMA stores are dropped.
- **Persistent grid.** With `persistent`, the grid is min(tiles, SMs x CTAs/SM) and each CTA walks
  tiles in grouped order (`group_m` tile rows at a time) so that concurrently running CTAs share
  A and B panels in L2; otherwise one CTA runs per tile, the plan's `heavy_first` axis in
  reverse (tile_to_sm90/roles.py).
The kernel's launch contract (tkc.abi.KernelABI, tile_to_sm90/launch_abi.py) is computed here
and kept on `sm90.kernel`.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects import scf
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.passes import ModulePass

from tkc import dtypes
from tkc.diagnostics import error_at
from tkc.dialects import sm90, tile
from tkc.passes.plan import WARPGROUP_THREADS
from tkc.passes.tile_to_sm90.consumer import ConsumerEmitter
from tkc.passes.tile_to_sm90.launch_abi import launch_abi
from tkc.passes.tile_to_sm90.lowering import KernelLowering
from tkc.passes.tile_to_sm90.producer import ProducerEmitter
from tkc.passes.tile_to_sm90.band_deferral import defer_band_combines
from tkc.passes.tile_to_sm90.band_syncs import mark_ordered_band_combines
from tkc.passes.tile_to_sm90.fences import init_store_fences


def _refuse_carried_shared_tiles(kernel: tile.KernelOp) -> None:
    """A shared tile handed from one iteration to the next (a `var` of one assigned another in
    the loop; canonicalize drops those that keep their value): the GPU backend gives each shared
    tile a buffer of its own, and a loop's loads rotate through a ring whose stages are reused."""
    for loop in (op for op in kernel.walk() if isinstance(op, scf.ForOp)):
        for arg in loop.body.block.args[1:]:
            if isinstance(arg.type, tile.SharedTileType | tile.SharedVectorType):
                dtype = dtypes.of_type(arg.type.element_type)
                kind = "st" if isinstance(arg.type, tile.SharedTileType) else "sv"
                spelled = f"{kind}<{dtype.name if dtype else arg.type.element_type}>{list(arg.type.get_shape())}"
                raise error_at(
                    loop,
                    f"this loop hands a shared tile ({spelled}) from one iteration to the next (a `var` "
                    f"holding a shared tile is assigned another in the loop): the GPU backend cannot; load "
                    f"the tile where it is used (the pipeline prefetches a loop's loads), or convert it to a "
                    f"register tile (`var r = f32(load ...)`), which a loop may carry",
                )


def lower_kernel(kernel: tile.KernelOp) -> sm90.KernelOp:
    """The sm90.kernel of one tile.kernel: store fences initialised by one thread (and the rings'
    barriers, which sm90-build-rings adds there), then the roles."""
    _refuse_carried_shared_tiles(kernel)
    lowering = KernelLowering.of(kernel)
    cluster = lowering.cluster
    lowered = sm90.KernelOp(
        kernel.sym_name.data,
        None,
        WARPGROUP_THREADS * (1 + lowering.consumers),
        lowering.memory.smem_bytes,
        max(1, lowering.plan.ctas_per_sm),
        cluster,
    )
    block = lowered.body.block
    base = sm90.SmemBaseOp()
    block.add_op(base)
    init = sm90.SingleThreadOp("block")
    block.add_op(init)
    init_store_fences(lowering, base.results[0], init.body.block)
    # the peer's multicasts complete on our barriers: they must be initialised cluster-wide
    block.add_op(sm90.ClusterSyncOp() if cluster > 1 else sm90.SyncBlockOp())
    if lowering.plan.schedule_wgmma:
        lowered.attributes[sm90.SCHEDULE_WGMMA] = StringAttr(lowering.plan.reasons["schedule_wgmma"])
    if lowering.plan.dependent_launch:
        # the kernel before may still be running: no global access before it has completed
        block.add_ops([sm90.GridDependencyWaitOp(), sm90.LaunchDependentsOp()])
    roles = sm90.RolesOp(lowering.consumers, lowering.plan.producer_registers, lowering.plan.consumer_registers)
    block.add_op(roles)
    producer_body = sm90.SingleThreadOp("warpgroup")
    roles.producer.block.add_op(producer_body)
    ProducerEmitter(lowering, producer_body.body.block).emit_kernel_body()
    ConsumerEmitter(lowering, roles.consumer.block).emit_kernel_body()
    if lowering.memory.staging:
        # a staged store leaves its last chunks' TMA reads running (stores.py): the block's
        # shared memory must outlive them
        drain = sm90.SingleThreadOp("warpgroup")
        roles.consumer.block.add_op(drain)
        drain.body.block.add_op(sm90.TmaStoreWaitOp(0, read=True))
    if lowering.plan.band:
        defer_band_combines(roles)
        mark_ordered_band_combines(roles)
    if cluster > 1:
        # no CTA leaves while its peer may still multicast into it or arrive on its barriers
        block.add_op(sm90.ClusterSyncOp())
    lowered.properties["abi"] = launch_abi(lowering)
    return lowered


class ConvertTileToSm90Pass(ModulePass):
    name = "convert-tile-to-sm90"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in [k for k in op.body.block.ops if isinstance(k, tile.KernelOp)]:
            lowered = lower_kernel(kernel)
            op.body.block.insert_op_before(lowered, kernel)
            op.body.block.erase_op(kernel)
