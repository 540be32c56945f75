"""tile-warp-specialize: decide which warpgroups run each op of a kernel body.

On the GPU a kernel runs as one producer warpgroup, whose single elected thread issues the
loads as TMA copies, and C consumer warpgroups, which compute on register fragments and store
(the occupancy plan's `consumers`). convert-tile-to-sm90 gives each role its own copy of the
body; this pass decides, while the ops are still tile ops, what goes into each copy:

- **The producer** runs the loads and what they need: the index math of their coordinates,
  the loops around them (their bounds count the ring's stages), and the loop-carried scalars
  and if-results a coordinate is computed from; and the fences on its way (it waits at one
  before a later load; a fence in a loop it does not run only orders the consumers' stores).
  Nothing else, so it holds no register tile and never waits on the consumers' latency, only
  on their barrier arrivals. So a loop bound, an if condition or a coordinate it needs may not
  be computed from a tile or vector (an if on `sum(load F[i]) < 1` around a load): that is a
  user error at the loop, if or load.
- **The consumers** run everything else and the loads too (a consumer's load waits until the
  ring stage has landed and reads it in place; its coordinates are the producer's business),
  with whatever that needs. A loop or an if they run carries all its values.
- An op both need runs in both (`both`); an op neither needs (dead code) runs in the consumers.

Written on every op of the kernel body but the yields (which follow their loop or if):
  role = #tile<role producer | consumers | both>
and on every scf.for / scf.if the producer runs:
  producer_values = array<i64: ...>   the results (a loop's: its iter_args) the producer's copy carries

convert-tile-to-sm90 derives the roles anew and compares (`check_roles`), so an edited
dump is a diagnostic, never a producer that lacks a value.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from tkc.dialects.tile import KernelOp
from tkc.passes.warp_roles import derive_roles, write_roles


class TileWarpSpecializePass(ModulePass):
    name = "tile-warp-specialize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for kernel in op.body.block.ops:
            if isinstance(kernel, KernelOp):
                write_roles(kernel, derive_roles(kernel))
