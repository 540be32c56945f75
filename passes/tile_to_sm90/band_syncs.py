"""Band combines whose first sync another combine's sync already provides.

A band row reduction meets the 4 warps' partials in shared memory (sm90.band_combine): the quad
leaders write, all threads sync, all read. The sync before the write keeps it from overwriting
partials that a thread still reads from the last run of the same combine. Every band row
reduction has a region of the scratch of its own (plan.band_region), so only its own earlier
runs read its region. Where another combine sits in the same block, that combine runs between
any two runs of this one (once each time the block runs, before or after it), and its second
sync, after its own write, is passed by every thread only once it has finished everything
before, the reads of this combine's region included. Those combines are marked `ordered` and
skip the first sync: softmax's online max and sum, one loop body, go from four syncs per tile
to two. A combine alone in its block keeps both (a loop body with one reduction).
"""

from __future__ import annotations

from xdsl.dialects.builtin import UnitAttr
from xdsl.ir import Block, Operation

from tkc.dialects import sm90
from tkc.dialects.tile import index_constant


def mark_ordered_band_combines(root: Operation) -> None:
    """Mark `ordered` every band combine that shares its block with another syncing the same
    threads on the same named barrier (module docstring); run after defer_band_combines, which
    moves combines between blocks."""
    blocks: dict[int, Block] = {}
    for op in root.walk():
        if isinstance(op, sm90.BandCombineOp) and (block := op.parent_block()) is not None:
            blocks[id(block)] = block
    for block in blocks.values():
        combines = [op for op in block.ops if isinstance(op, sm90.BandCombineOp)]
        syncs = {(index_constant(c.barrier_id), c.warpgroups.value.data) for c in combines}
        if len(combines) >= 2 and len(syncs) == 1 and None not in next(iter(syncs)):
            for combine in combines:
                combine.ordered = UnitAttr()
