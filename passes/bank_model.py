"""The exact shared-memory bank model (hopper-ptx.md §7) and the address maps of tkc's shared layouts.

Shared memory has 32 banks of 4 bytes. A warp request is served in 128-byte phases (32 lanes
of 4 bytes, 16 of 8, 8 of 16); a phase costs the largest number of distinct 4-byte words that
fall into one bank (identical words broadcast). `wavefronts` is that model, verbatim.

A shared tile is stored as column panels `span` bytes wide, row-major within a panel (the
ThunderKittens layout, which TMA writes and wgmma reads), then XOR-swizzled on absolute
address bits: `phys = o ^ (((o >> 7) & m) << 4)`. Unswizzled tiles are plain row-major and
may pad each row. The warp-level accesses the lowering emits (accumulator-fragment pairs,
row vectors) are enumerated lane by lane, instruction by instruction, so `conflicts` is exact
for the whole tile, not a sample.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

BANKS = 32
WARP = 32
SWIZZLE_MASK = {0: 0, 32: 1, 64: 3, 128: 7}
"""Swizzle span in bytes -> the mask m of the row bits XORed into the 16-byte chunk index."""


def wavefronts(addrs: Sequence[int], width: int) -> tuple[int, int]:
    """(actual, ideal) wavefronts of one warp request: 32 byte addresses in lane order, `width` bytes each."""
    per = 128 // width
    total = 0
    for p in range(0, WARP, per):
        banks: dict[int, set[int]] = {}
        for a in addrs[p : p + per]:
            for w in range(a // 4, (a + width) // 4):
                banks.setdefault(w % BANKS, set()).add(w)
        total += max(len(s) for s in banks.values())
    return total, max(1, WARP * width // 128)


def swizzle_address(offset: int, swizzle: int) -> int:
    """Where the byte at dense offset `offset` (from an aligned base) lands under `swizzle`."""
    return offset ^ (((offset >> 7) & SWIZZLE_MASK[swizzle]) << 4)


@dataclass(frozen=True)
class Layout:
    """Placement of a rows x cols tile: swizzle span in bytes (0 = none) and row padding (unswizzled only)."""

    rows: int
    cols: int
    elem_bytes: int
    swizzle: int
    pad: int = 0

    @property
    def pitch(self) -> int:
        """Bytes between consecutive rows of a panel."""
        return self.swizzle if self.swizzle else self.cols * self.elem_bytes + self.pad

    @property
    def panel_cols(self) -> int:
        return self.swizzle // self.elem_bytes if self.swizzle else self.cols

    @property
    def num_bytes(self) -> int:
        return self.cols // self.panel_cols * self.rows * self.pitch

    def address(self, row: int, col: int) -> int:
        panel, col = divmod(col, self.panel_cols)
        return swizzle_address(panel * self.rows * self.pitch + row * self.pitch + col * self.elem_bytes, self.swizzle)

    def describe(self) -> str:
        if self.swizzle:
            return f"{self.swizzle}B swizzle"
        return f"no swizzle, rows padded by {self.pad} B" if self.pad else "no swizzle"


@dataclass(frozen=True)
class Access:
    """A warp-level shared access: `lane(t, r0, c0)` is lane t's (row, col) in the instruction at
    (r0, c0); each instruction covers `rows` x `cols` elements, `width` bytes per lane."""

    instruction: str
    width: int
    rows: int
    cols: int
    lane: Callable[[int, int, int], tuple[int, int]]


@cache
def fragment_pairs(instruction: str, elem_bytes: int) -> Access:
    """Accumulator fragment (hopper-ptx.md §5): lane l holds columns 2(l%4), +1 of row l/4; one
    instruction stores that pair for the warp's 8 rows x 8 columns."""
    return Access(instruction, 2 * elem_bytes, 8, 8, lambda t, r0, c0: (r0 + t // 4, c0 + 2 * (t % 4)))


@cache
def row_vector(instruction: str, elem_bytes: int) -> Access:
    """A row vector as the fragments hold it: lane l has row l/4 (the quad shares it), 8 rows a warp."""
    return Access(instruction, elem_bytes, 8, 1, lambda t, r0, c0: (r0 + t // 4, c0))


def warp_request(layout: Layout, access: Access, r0: int, c0: int) -> tuple[int, ...]:
    """The 32 lane addresses of the instruction at (r0, c0)."""
    return tuple(layout.address(*access.lane(t, r0, c0)) for t in range(WARP))


def repeats(layout: Layout, access: Access) -> tuple[int, int]:
    """(rows, cols) such that instructions that many rows, or columns, apart make requests that
    differ by one multiple of 128 bytes in every lane (columns: the tile's width when there is no
    such distance).

    Moving a request by a multiple of 128 bytes keeps each lane's bank and which lanes share a
    word, so it costs the same. A swizzle XORs bits 4-6 of an offset with bits 7-9: an offset
    moved by a multiple of 1024 bytes is swizzled alike (unswizzled, any multiple of 128 will
    do). Rows `pitch` bytes apart reach such a multiple after `period / gcd(period, pitch)` rows;
    the next panel lies `rows * pitch` bytes on, in the same place within it."""
    period = 1024 if layout.swizzle else 128
    rows = math.lcm(access.rows, period // math.gcd(period, layout.pitch))
    panels_repeat = layout.panel_cols < layout.cols and layout.rows * layout.pitch % period == 0
    cols = math.lcm(access.cols, layout.panel_cols) if panels_repeat else layout.cols
    return rows, cols


@dataclass(frozen=True)
class Conflicts:
    ways: int
    """Worst instruction: its wavefronts over the ideal (1 = conflict-free)."""
    actual: int
    """Wavefronts of all instructions over the tile."""
    ideal: int


@cache
def conflicts(layout: Layout, access: Access) -> Conflicts:
    """The whole tile's conflicts, memoised: kernels repeat tile shapes (the access builders are
    memoised too, so equal accesses are the same object). Still exact, but each instruction
    stands for all those a multiple of `repeats` away, and each distinct request (moved to its
    first 128 bytes) is simulated once, so a tile has a few dozen requests to simulate."""
    rows_apart, cols_apart = repeats(layout, access)
    requests: dict[tuple[int, int], tuple[int, ...]] = {}
    counts: Counter[tuple[int, ...]] = Counter()
    for r0 in range(0, layout.rows, access.rows):
        for c0 in range(0, layout.cols, access.cols):
            first = (r0 % rows_apart, c0 % cols_apart)  # met before: both are multiples of the steps
            if first not in requests:
                addrs = warp_request(layout, access, *first)
                base = min(addrs) // 128 * 128
                requests[first] = tuple(a - base for a in addrs)
            counts[requests[first]] += 1
    ways = actual = ideal = 0
    for addrs, count in counts.items():
        a, i = wavefronts(addrs, access.width)
        ways = max(ways, -(-a // i))
        actual += a * count
        ideal += i * count
    return Conflicts(ways, actual, ideal)
