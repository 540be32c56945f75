"""tile-swizzle-select: the swizzle of every shared tile, its alignment, and the wgmma descriptors.

A shared tile (the result of `tile.load`, written by TMA, or of `tile.to_shared`, written by
st.shared) is stored as column panels `span` bytes wide, one TMA box each, so the inner box is
exactly the span as TMA requires when it swizzles. The span is the widest of 128/64/32 bytes
that divides the row bytes: K-major rows of 128 B (64 bf16, 128 fp8, 32 fp32) get 128B swizzle,
narrower rows 64B or 32B, the rule ThunderKittens uses for every dtype. wgmma reads exactly
that layout with its swizzle mode 1/2/3, so TMA feeds wgmma with no conversion and neither
side conflicts on banks. Rows narrower than 32 B stay unswizzled (wgmma cannot read those here).

Written on the defining op:
  swizzle = #tile.decision<S, "why">       S in bytes, also in the type `!tile.st<..., swizzle S>`
  smem_align = 1024|512|256|128 : i64       the swizzle repeat (8 rows x span) the base needs
and on each `tile.mma`, for each operand read from shared memory:
  a_desc / b_desc = #tile.decision<C, "0x...: K-major|MN-major ...">
where C (layout bits 62-63, SBO >> 4 at bit 32, LBO >> 4 at bit 16; an i64 in two's complement,
spelled in hex in the reason) is ORed with `(addr >> 4) & 0x3FFF` (hopper-ptx.md §4);
`shared_tiles.wgmma_descriptor` also gives the k-step advance and the panel stride.
A shared vector is unswizzled. Where its load starts at an `elem(x)` along its tensor's innermost
dim that is not provably a multiple of 16 bytes (a sequence offset read from a table: TMA starts
a box there only on 16 bytes), the box starts at the boundary at or below x, N elements (16
bytes) longer, and the consumers read the vector from x mod N on, when only registers read it:
  realigned = #tile.decision<N, "why">      on the load
A pinned `swizzle = N : i64` (@swizzle(N)) is checked and kept; tile-bank-conflicts may
re-swizzle a tile through `shared_tiles.set_swizzle`, which keeps types and descriptors consistent.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.passes import ModulePass

from tkc.diagnostics import error_at
from tkc.dialects.tile import (
    REALIGNED,
    TMA_BOX_MAX,
    TMA_GLOBAL_ALIGN,
    DecisionAttr,
    LoadOp,
    MmaOp,
    SharedTileType,
    SharedVectorType,
    StoreOp,
    ToRegOp,
    ToSharedOp,
    element_bytes,
    element_name,
    innermost_element_start,
)
from tkc.passes.divisibility import alignment_shortfall, known_multiple
from tkc.passes.shared_tiles import operand_major, read_by_wgmma, set_swizzle, shared_tile_ops, users
from tkc.passes.wgmma_layout import SWIZZLE_SPANS, widest_span


def role_names(op: LoadOp | ToSharedOp) -> list[str]:
    """How the tile is written and read, for reasons and the report."""
    roles = ["written by TMA" if isinstance(op, LoadOp) else "written by st.shared"]
    for user, v in users(op.result):
        if isinstance(user, MmaOp):
            roles.append(f"read {operand_major(user, v)}-major by wgmma as {'A' if v is user.a else 'B'}")
        elif isinstance(user, ToRegOp):
            roles.append("read by ld.shared")
        elif isinstance(user, StoreOp):
            roles.append("stored by TMA")
    return list(dict.fromkeys(roles))


def check_and_choose(op: LoadOp | ToSharedOp) -> tuple[int, str]:
    tile = op.result.type
    assert isinstance(tile, SharedTileType)
    row_bytes = tile.cols * element_bytes(tile.element_type)
    shape = f"{tile.rows}x{tile.cols}x{element_name(tile.element_type)}"
    wgmma = read_by_wgmma(op)
    for mma, major in wgmma:
        if major == "MN" and element_bytes(tile.element_type) == 1:
            raise error_at(mma, "fp8 wgmma reads both operands K-major only: store B as [N, K] and use mma_ABt")
    roles = ", ".join(role_names(op))
    pin = op.attributes.get("swizzle")
    if isinstance(pin, IntegerAttr):
        value = pin.value.data
        if value not in (0, *SWIZZLE_SPANS):
            raise error_at(op, f"@swizzle({value}): the swizzle is 0, 32, 64 or 128 bytes")
        if value and row_bytes % value:
            raise error_at(
                op,
                f"@swizzle({value}) needs rows of a multiple of {value} bytes (TMA box = one {value}-byte panel); "
                f"the {shape} tile has {row_bytes}-byte rows",
            )
        if not value and wgmma:
            raise error_at(op, f"@swizzle(0): wgmma reads the {shape} tile, and tkc feeds wgmma only swizzled tiles")
        return value, f"pinned by @swizzle({value}); {roles}"
    span = widest_span(row_bytes)
    if not span:
        if wgmma:
            raise error_at(op, f"the {shape} tile has {row_bytes}-byte rows: wgmma needs rows of 32 bytes or more")
        return 0, f"rows of {row_bytes} B are narrower than the 32B swizzle span; {roles}"
    panels = row_bytes // span
    tma = isinstance(op, LoadOp) or any(isinstance(user, StoreOp) for user, _ in users(op.result))
    box = (" (one TMA box each)" if panels > 1 else " (one TMA box)") if tma else ""
    layout = f"{panels} panels of {span} B{box}" if panels > 1 else f"one {span}-byte panel{box}"
    return span, f"{row_bytes}-byte rows ({tile.cols} x {element_name(tile.element_type)}) as {layout}; {roles}"


def realignment_reason(load: LoadOp) -> tuple[int, str] | None:
    """Whether a shared vector's load starts its TMA box below its `elem(x)` start along the
    tensor's innermost dim (REALIGNED): where x is not provably a multiple of 16 bytes' elements,
    the vector is read only into registers (which may start anywhere in the buffer) and the box,
    that many elements longer, still fits TMA_BOX_MAX. The elements and the reason."""
    result = load.result.type
    if not isinstance(result, SharedVectorType) or (element_start := innermost_element_start(load)) is None:
        return None
    coord, line = element_start
    start = known_multiple(coord)
    if start.aligned(line) or result.get_shape()[-1] + line > TMA_BOX_MAX:
        return None
    if not all(isinstance(use.operation, ToRegOp) for use in load.result.uses):
        return None
    return line, (f"its elem(...) start along the tensor's innermost dim {alignment_shortfall(start, line)}, and TMA "
                  f"starts a box only on {TMA_GLOBAL_ALIGN} bytes there: the box starts at the boundary at or below it ({line} elements "
                  f"longer), and the consumers read the vector from the start on")


@dataclass(frozen=True)
class TileSwizzleSelectPass(ModulePass):
    name = "tile-swizzle-select"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for tile_op in shared_tile_ops(op):
            if isinstance(tile_op.attributes.get("swizzle"), DecisionAttr):
                continue
            set_swizzle(tile_op, *check_and_choose(tile_op))
        for load in op.walk():
            if isinstance(load, LoadOp) and REALIGNED not in load.attributes:
                if (decision := realignment_reason(load)) is not None:
                    load.attributes[REALIGNED] = DecisionAttr(*decision)
