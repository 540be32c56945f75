"""TMA copies between a tensor and shared memory: the box of a shared tile, its element
coordinates, and the producer's loads.

A tile wider than its swizzle span is copied as one box per panel (panel_cols columns each; a
buffer padded to 64 rows, shared_tiles.buffer_rows, keeps its panels 64 rows apart and receives the
tile's rows in each),
all completing on the stage's `full` barrier. A load that a cluster shares
(lowering.multicast) is split between its n CTAs: each loads 1/n of the panels, or where they
do not split evenly a band of 1/n of the rows in every panel, and multicasts them to all.
"""

from __future__ import annotations

from typing import cast

from xdsl.dialects import arith
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Block, SSAValue

from tkc.dialects import sm90, tile
from tkc.passes.tile_to_sm90.roles import RoleEmitter
from tkc.passes.tile_to_sm90.shared_memory import SharedBuffer


CLUSTER_SHARE = "cluster_share"
"""The attribute of a multicast `sm90.tma_load` that says how the cluster's CTAs split the tile
(by swizzle panels, or by bands of rows where the panels do not split evenly); `tkc report`
quotes it."""


def element_coords(role: RoleEmitter, op: tile.LoadOp | tile.StoreOp, coords: list[SSAValue],
                   block: Block) -> list[SSAValue]:
    """TMA coordinates, innermost first, of the tile `op` reads or writes at `coords` (its
    coordinates as the role computed them)."""
    tensor_type = cast(tile.GlobalType, op.tensor.type)
    elements = [
        c if scale == 1 else role.mul(c, role.const(scale, block), block)
        for c, scale in zip(coords, tile.coord_scales(op))
    ]
    # a rank-1 tensor is mapped as one row of a 2-D tensor (see tkc/abi.py)
    return list(reversed(elements)) + ([role.const(0, block)] if tensor_type.rank == 1 else [])


def box(ref_type: sm90.SharedRefType, rank: int, rows: int) -> tuple[int, ...]:
    """The TMA box (innermost first) that copies one panel of a tile of `ref_type`."""
    shape = ref_type.get_shape()
    inner = (ref_type.panel_cols,) if len(shape) == 1 else (ref_type.panel_cols, rows)
    return inner + (1,) * (max(rank, 2) - len(inner))


def trap_wholly_past_end(role: RoleEmitter, load: tile.LoadOp, block: Block) -> None:
    """Stop the kernel where `load`'s box lies wholly past the end of a dim that is a whole
    number of its tiles (at a tile coordinate or a leading index): the interpreter's error, which
    TMA would turn into a tile of zeros read silently (docs/language.md, Tiles past the end of a
    tensor). Along a dim with a partial last tile such a box is padding, and an element
    coordinate may lie anywhere. Not in a 2-CTA cluster, whose odd last tile row pairs with one
    past the end by design, nor for a load tile-pipeline hoisted out of a loop (`speculative`):
    it runs where the loop runs no iteration too, and what it reads is used only where the loop
    runs."""
    if role.lowering.cluster > 1 or tile.SPECULATIVE in load.attributes:
        return
    dims = cast(tile.GlobalType, load.tensor.type).get_dims()
    shape = cast(tile.ShapedTileType, load.result.type).get_shape()
    extents = (1,) * (len(dims) - len(shape)) + tuple(shape)
    elements = tile.element_axes(load)
    outside: SSAValue | None = None
    for axis, (dim, extent, coord) in enumerate(zip(dims, extents, load.coords)):
        if axis in elements or (isinstance(dim, int) and dim % extent):
            continue
        size = role.dims[dim] if isinstance(dim, str) else role.const(dim, block)
        first = role.values[coord] if extent == 1 else role.mul(role.values[coord], role.const(extent, block), block)
        past = role.op(arith.CmpiOp(first, size, "uge"), block).results[0]
        if isinstance(dim, str) and extent > 1:
            whole = role.op(arith.CmpiOp(role.rem(size, role.const(extent, block), block), role.const(0, block), "eq"),
                            block).results[0]
            past = role.op(arith.AndIOp(past, whole), block).results[0]
        outside = past if outside is None else role.op(arith.OrIOp(outside, past), block).results[0]
    if outside is not None:
        role.trap_if(outside, block)


def issue_load(role: RoleEmitter, load: tile.LoadOp, buffer: SharedBuffer, stage: SSAValue, full: SSAValue,
               block: Block) -> None:
    """The TMA boxes of `load` into its buffer in the stage at address `stage` (after the check
    that it reaches into its tensor, trap_wholly_past_end)."""
    trap_wholly_past_end(role, load, block)
    tensor_type = cast(tile.GlobalType, load.tensor.type)
    ref = buffer.ref_type
    coords = element_coords(role, load, [role.values[c] for c in load.coords], block)
    if line := tile.realignment(load):  # from the 16-byte boundary at or below the start (x & -line)
        coords[0] = role.op(arith.AndIOp(coords[0], role.const(-line, block)), block).results[0]
    ctas = role.lowering.cluster
    if load in role.lowering.multicast and buffer.split_by_rows(ctas):
        _issue_row_band(role, load, buffer, stage, full, coords, block)
        return
    name = role.lowering.params.tensor_map(load.tensor, box(ref, tensor_type.rank, buffer.box_rows), ref.swizzle.data)
    tmap = role.op(sm90.TensorMapParamOp(name), block).results[0]
    if load in role.lowering.multicast:
        # this CTA's share of the panels, delivered to every CTA of the cluster
        rank = role.tiles.rank
        assert rank is not None
        share = buffer.panels // ctas
        first = role.mul(rank, role.const(share, block), block)
        for k in range(share):
            shared_panel = role.add(first, role.const(k, block), block)
            dst = role.add(
                role.add(stage, role.const(buffer.offset, block), block),
                role.mul(shared_panel, role.const(buffer.panel_bytes, block), block),
                block,
            )
            column = role.add(coords[0], role.mul(shared_panel, role.const(ref.panel_cols, block), block), block)
            issued = role.op(sm90.TmaLoadOp(tmap, dst, full, [column, *coords[1:]], buffer.box_bytes, (1 << ctas) - 1),
                             block)
            issued.attributes[CLUSTER_SHARE] = StringAttr(
                f"each of the cluster's {ctas} CTAs loads {share} of the tile's {buffer.panels} swizzle panels and "
                "multicasts its share to all")
        return
    order = load.attributes.get("memory_order")
    for panel in range(buffer.panels):
        dst = role.add(stage, role.const(buffer.offset + panel * buffer.panel_bytes, block), block)
        panel_coords = [role.add(coords[0], role.const(panel * ref.panel_cols, block), block)] + coords[1:]
        issued = role.op(sm90.TmaLoadOp(tmap, dst, full, panel_coords, buffer.box_bytes), block)
        if isinstance(order, tile.DecisionAttr):
            # tile-memory-order's claim, which sm90-verify-barriers checks: a load after stores
            # follows a store-fence wait; the others are disjoint from every earlier store
            key = "after_stores" if order.int_value else "disjoint_from_stores"
            issued.attributes[key] = StringAttr(order.reason.data)


def _issue_row_band(role: RoleEmitter, load: tile.LoadOp, buffer: SharedBuffer, stage: SSAValue, full: SSAValue,
                    coords: list[SSAValue], block: Block) -> None:
    """This CTA's band of `load`'s rows (a 1/n share, n the cluster's CTAs) in every panel,
    multicast to every CTA of the cluster: the share of a tile whose panels do not split evenly
    (SharedBuffer.split_by_rows)."""
    ctas = role.lowering.cluster
    ref = buffer.ref_type
    band_rows = buffer.box_rows // ctas
    name = role.lowering.params.tensor_map(load.tensor, box(ref, cast(tile.GlobalType, load.tensor.type).rank, band_rows),
                                           ref.swizzle.data)
    tmap = role.op(sm90.TensorMapParamOp(name), block).results[0]
    rank = role.tiles.rank
    assert rank is not None
    first_row = role.mul(rank, role.const(band_rows, block), block)
    band_offset = role.mul(first_row, role.const(ref.panel_cols * tile.element_bytes(ref.element_type), block), block)
    row = role.add(coords[1], first_row, block)
    band_bytes = buffer.box_bytes // ctas
    for panel in range(buffer.panels):
        dst = role.add(role.add(stage, role.const(buffer.offset + panel * buffer.panel_bytes, block), block), band_offset,
                       block)
        column = role.add(coords[0], role.const(panel * ref.panel_cols, block), block)
        issued = role.op(sm90.TmaLoadOp(tmap, dst, full, [column, row, *coords[2:]], band_bytes, (1 << ctas) - 1), block)
        issued.attributes[CLUSTER_SHARE] = StringAttr(
            f"each of the cluster's {ctas} CTAs loads a band of {band_rows} of the tile's {buffer.box_rows} rows in "
            f"each of its {buffer.panels} swizzle panel(s), which do not split evenly, and multicasts its share to all")
