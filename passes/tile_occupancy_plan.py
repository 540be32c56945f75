"""tile-occupancy-plan: warpgroups, registers per role, stages, shared memory, CTAs per SM, grid.

The block is one producer warpgroup (TMA) and `consumers` consumer warpgroups (wgmma), each
owning 64-row slices of every register tile that is tall enough, every one of them a whole copy
of a shorter one. Decisions, in order, each a field of the kernel's
`plan = #tile.plan<...>` as `#tile.decision<value, "why">` (PlanAttr, whose verifier states how
they agree; read back by `KernelPlan.of`); planning again starts a fresh plan:

  consumers            padded rows of the tallest register tile / 64, at most 4, among the counts C
                       that split every height R whose padded height P (R rounded up to a
                       multiple of 64: the GPU backend computes register tiles in 64-row
                       slices) is 64·C or more into whole wgmmas (P a multiple of 64·C, the
                       last consumer's rows past R padding, which the reason says); fewer when
                       the register demand per thread does not fit the split below or the
                       widest wgmma does not fit the entry count (below); then
                       every TMA box must span at most 256 elements per dimension (loaded
                       tiles' rows, unswizzled rows, vectors, each consumer's stored rows)
  replicated_rows      (only where some tile's padded height is under 64·C rows) the tallest
                       such height: the consumers cannot split those tiles, so each computes them
                       whole (redundant work, no exchange); those whose rows are no multiple of
                       64 as fragments of their padded height (plan.fragment_rows), which the
                       reason says. Values change height only through
                       shared memory (tile.to_shared, a wgmma's A and B), which every consumer
                       reads whole, so each height is distributed on its own; the lowering lets
                       the first consumer alone store a replicated tile or write it to shared memory
  band                 (where the replicated tiles are under 64 rows, or pinned) 1 where
                       plan.band_obstacle finds nothing in the way (no mma, scan, transpose or
                       vector-to-scalar reduction, 32-column multiples) and @band(0) does not pin
                       it off: the tiles are held unpadded, every warp all rows, the 4 warps
                       sharing the columns (sm90.FragmentType's band layout), and the register
                       demand counts them so; @band(1) where it cannot is an error
  threads              128 x (1 + consumers)
  producer_registers   setmaxnreg values (multiples of 8 in [24, 256]) splitting the block's
  consumer_registers   entry allocation (threads x floor8(65536 / threads), what ptxas gives with
                       .maxntid + .minnctapersm): producer 40 (24-32 beside 3-4 consumers), the
                       rest to consumers: 40/232 for 2, 32/160 for 3, 24/112 for 4, as ThunderKittens;
                       the producer drops to 24 where the consumers' demand comes within 8 of
                       their share (24/240 for 2, as FlashAttention-3). A launch variant without
                       tail masks keeps its masked kernel's split
  stages               (when a loop loads tiles, or the kernel streams its tiles) the deepest ring,
                       at most 4 (deeper only pinned: @stages, -D @stages, the tuner's space), whose shared memory
                       fits 232448 bytes: 1 KB of mbarriers + single tiles + S x stage bytes +
                       epilogue staging + 1 KB alignment slack (plan.smem_plan)
  smem_bytes           that total
  persistent, group_m  a 2-D grid with a K loop (GEMM-like) runs one CTA per SM over the tiles,
                       8 tile-rows at a time (L2 reuse); so does a kernel whose every load is a
                       tile's own (plan.streaming_candidate: no loop or if loads, one load group,
                       no tile.to_shared), in grid order, its loads then a ring of `stages` over
                       the tiles it walks (plan.streams_tiles), so the next tiles' loads are in
                       flight while one is computed and stored (memory-bound kernels: rotary and
                       fp8 quantisation went from 0.69-0.71 to 0.90-0.94 of a device copy on the
                       H200); and so does a kernel with a K loop whose bounds no block index
                       changes (every tile costs the same) where the persistent layout keeps
                       the ring as deep as one-tile CTAs would have it and those would not
                       share an SM (attention D64 non-causal: 0.83/0.88 -> 0.92/0.95 of cuDNN at
                       N 1024/2048); its kernel-level loads are then a 2-stage ring
                       (plan.tile_ring_stages), the next tile's Q landing while this one runs;
                       and so does a kernel whose loop trip count is read from a tile table
                       at one grid axis (table_first, below) where the walk keeps the ring's
                       depth (varlen attention D 64: 1.05-1.22x on the H200 where sequences
                       are short, 0.99x at 517-4096 tokens);
                       other grids launch one CTA per tile, and so does a kernel whose loop
                       trip count is read from memory otherwise (its tiles take different
                       times in an order the plan cannot know; the hardware balances them).
                       A kernel walked heavy-first (a loop whose trip count grows with a block
                       index: causal attention) has a one-CTA-per-tile variant that a launch
                       takes from tkc.abi.ONE_CTA_FROM_TILES tiles along that axis
  ctas_per_sm          2 when two blocks fit both budgets and the widest wgmma fits the halved
                       entry count (for a persistent grid only where it streams), else 1;
                       @ctas_per_sm(k) pins k up to 4 (an error where k do not fit)
  cluster              only pinned (@cluster(2)): tile rows i and i+1 run on a 2-CTA cluster
                       that multicasts the pipelined tile they share (GEMM's B)
  heavy_first          (one CTA per tile) the grid axis whose block index a loop's trip count
                       grows with (causal attention's query tile) launches in reverse, so the
                       longest tiles start first and the short ones fill the last wave
  table_first          (persistent) the grid axis whose block index reads the tile table a
                       loop's trip count comes from (varlen attention's t), when no other axis
                       changes it: the walk takes that axis slowest, in grid order, so a
                       table listing the heaviest tiles first (attention_varlen_ref.tile_table)
                       gives each CTA as many tiles of each length; @persistent(0) launches one
                       CTA per tile instead, balanced by the hardware whatever the table's order
  stream_k             only pinned (@stream_k(1), the pass option stream_k=true): a persistent
                       kernel whose tile is one K loop of mma accumulations from zero runs its
                       whole waves, then splits the last partial wave's K iterations over all CTAs
                       (occupancy.stream_k_obstacle says what else refuses it)
  dependent_launch     1 unless pinned off (@dependent_launch(0), the pass option
                       dependent_launch=false): the kernel launches as a programmatic dependent
                       of the one before it on the stream, its blocks setting up shared memory
                       while that kernel ends and waiting for it (griddepcontrol.wait) before
                       any global access (0.3-8 % on back-to-back launches on the H200)
  fma_exp2             only pinned (@fma_exp2(k)): every k-th element of a register tile's exp2
                       is a polynomial on the FMA pipe (sm90_to_ptx.scalars.fma_exp2_f32), the
                       rest ex2.approx on the MUFU unit; refused where there is no such exp2
  schedule_wgmma       only pinned (@schedule_wgmma(1)): sm90-schedule-wgmma issues the consumers'
                       wgmmas early and waits for their products late (off by default: the
                       kernels it changes ran 0.85-1.05x as fast with it on the H200)
  whole_staging        decided before the stages, whose shared memory it changes, wherever a
                       register-tile store spans more than one swizzle panel: 1 (every such store
                       stages its whole tile between one pair of syncs, plan.staging_chunk giving
                       a buffer per chunk) in a kernel without an mma where that keeps the ring's
                       stages and the blocks per SM, else 0; @whole_staging(b) pins it
  shared_staging       decided with whole_staging, which weighs each choice with the region
                       the stores would share under it, wherever two or more register-tile
                       stores stage alike (plan.staging_shareable: the same storing consumers
                       and bytes per consumer): 1 (one region for all of them: a store's first
                       chunk waits for the TMA reads of every earlier store of its consumer
                       either way) where a region each would not fit or would cost the ring a
                       stage, else 0 (a block more per SM is left to the pin: the register
                       estimate that admits it can run under ptxas); @shared_staging(b) pins it

The register demand per consumer thread is the peak over the program of the live register
tiles' registers, as their sm90 fragments hold them (f32 tiles 1 per element, narrower ones 1
per 2, divided over consumers x 128 threads, or over 128 where the tile is replicated, a tile of
fewer than 64 rows counting 64; row vectors 2 per 64 rows of a consumer's slice;
column vectors, replicated in every thread, a quarter of their f32 columns, an eighth of
narrower ones) plus 32 for addresses, indices and descriptors. A tile that a run of element-wise
ops only hands on inside the run (or to the reduction right after it) counts nothing: the
lowering computes such a chain register by register (`row_sum(h * h)` never holds h * h whole).
ptxas compiles every instruction within the entry count (setmaxnreg.inc raises the budget of the
code after it, but not of one instruction: C7602), so one wgmma m64nN, N/2 accumulators + 26
(+4 with A in registers), must fit the entry count of the chosen consumers and CTAs per SM.
The model is passes/occupancy.py; its analyses are linear in the program: the live-range sweep,
the index-growth pass behind heavy_first, and `check_budgets` (registers and one copy of the
shared tiles), which tile-bank-conflicts calls before it simulates any tile.
Pins (`annotations = {consumers, registers = [p, c], persistent (or persistent = 0), group_m,
heavy_first, stages}`, `stages` on the loop) are checked against the same budgets; an infeasible one is a TkError naming the budget.
The pass options pin the same decisions from the pipeline, over the kernel's annotations
(`tkc-opt -p 'tile-occupancy-plan{stages=2 consumers=2 persistent=false}'`): consumers, stages
(every pipelined loop's), persistent (true or false), registers=p,c, group_m and cluster, each
within the values the annotation may hold (a ValueError otherwise: the pipeline is not built).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tkc.dialects.tile import KERNEL_PINS, REGISTER_COUNTS, KernelOp
from tkc.passes.occupancy import PlanOptions, Planner


@dataclass(frozen=True)
class TileOccupancyPlanPass(ModulePass):
    name = "tile-occupancy-plan"

    consumers: int | None = None
    stages: int | None = None
    persistent: bool | None = None
    registers: tuple[int, ...] | None = None
    group_m: int | None = None
    cluster: int | None = None
    stream_k: bool | None = None
    dependent_launch: bool | None = None
    band: bool | None = None

    def __post_init__(self) -> None:
        for key, value in self.options().items():
            if key == "registers":
                if not (isinstance(value, tuple) and len(value) == 2 and set(value) <= set(REGISTER_COUNTS)):
                    raise ValueError(f"{self.name}: registers=producer,consumer takes two multiples of 8 in 24..256")
            elif key in KERNEL_PINS and value not in KERNEL_PINS[key].values:
                raise ValueError(f"{self.name}: {key}={value} is not {KERNEL_PINS[key].text}")

    def options(self) -> PlanOptions:
        """The options given (a field left at None pins nothing)."""
        return {f.name: value for f in fields(self) if (value := getattr(self, f.name)) is not None}

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in op.walk():
            if isinstance(kernel, KernelOp):
                Planner(kernel, self.options()).plan()
