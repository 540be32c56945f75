"""The shared-memory layouts that TMA and wgmma agree on: one table per fact, for every pass.

A shared tile is stored in column panels of one swizzle span (128, 64 or 32 bytes of a row); TMA
writes one box per panel and wgmma reads it through a matrix descriptor whose constant part (the
layout code, the leading and stride byte offsets) follows from the tile's rows, its span and
which dimension is contiguous. tile-swizzle-select decides the span and records the descriptor,
tile-bank-conflicts and the staging plan choose among the same spans, and the PTX lowering builds
the same descriptors, all from this module.
"""

from __future__ import annotations

from dataclasses import dataclass

SWIZZLE_SPANS = (128, 64, 32)
"""Swizzle spans in bytes, widest first."""
DESCRIPTOR_LAYOUT = {128: 1, 64: 2, 32: 3}
"""wgmma descriptor bits 62-63 for each swizzle span."""
K_STEP_BYTES = 32
"""Bytes of K one wgmma k-step reads from a row (16 bf16/f16 elements, 32 fp8)."""


def widest_span(row_bytes: int) -> int:
    """The widest swizzle span that divides a row, 0 when none does."""
    return next((span for span in SWIZZLE_SPANS if row_bytes % span == 0), 0)


@dataclass(frozen=True)
class Descriptor:
    """A wgmma shared-memory matrix descriptor for one operand tile."""

    major: str
    """"K": rows are M/N indices, K contiguous; "MN": rows are K indices, M/N contiguous."""
    swizzle: int
    lbo: int
    sbo: int
    k_step: int
    """Bytes the start address advances per wgmma k-step inside one panel."""
    panel_bytes: int
    """Distance between the span-wide column panels (K-major: next K panel; MN-major: = LBO)."""

    @property
    def constant(self) -> int:
        """The descriptor without its start address."""
        return (
            DESCRIPTOR_LAYOUT[self.swizzle] << 62
            | ((self.sbo >> 4) & 0x3FFF) << 32
            | ((self.lbo >> 4) & 0x3FFF) << 16
        )

    def describe(self, mn_panels: int = 2) -> str:
        """The descriptor in words; `mn_panels`, the MN-major tile's panels (with one, LBO is never read)."""
        lbo = ("LBO 16 (unused)" if self.major == "K" else f"LBO {self.lbo} (unused: one {self.swizzle}-byte MN panel)"
               if mn_panels == 1 else f"LBO {self.lbo} (next {self.swizzle}-byte MN panel)")
        return (
            f"{self.constant:#018x}: {self.major}-major, {self.swizzle}B swizzle "
            f"(layout {DESCRIPTOR_LAYOUT[self.swizzle]}): {lbo}, "
            f"SBO {self.sbo} (8 rows x {self.swizzle} B), k-step +{self.k_step} B, panels {self.panel_bytes} B apart"
        )


def descriptor(rows: int, span: int, major: str, element_bytes: int) -> Descriptor:
    """The descriptor of a tile of `rows` rows in `span`-byte panels, read `major`-major."""
    panel = rows * span
    if major == "K":
        return Descriptor("K", span, 16, 8 * span, K_STEP_BYTES, panel)
    return Descriptor("MN", span, panel, 8 * span, K_STEP_BYTES // element_bytes * span, panel)
