"""The exact bank model against the known answers of hopper-ptx.md §7, and the swizzle maps."""

from __future__ import annotations

import pytest

from tkc.passes.bank_model import (
    Access,
    Layout,
    conflicts,
    fragment_pairs,
    row_vector,
    swizzle_address,
    warp_request,
    wavefronts,
)

TILE = {0: Layout(64, 64, 2, 0), 128: Layout(64, 64, 2, 128)}
"""A 64-column bf16 tile (128-byte rows), unswizzled and 128B-swizzled."""


@pytest.mark.parametrize(
    ("lanes", "width", "unswizzled", "swizzled"),
    [
        (lambda t: (t, 0), 16, (32, 4), (4, 4)),  # lane t reads 16 B at chunk 0 of row t: 8-way vs free
        (lambda t: (t, 0), 4, (32, 1), (4, 1)),  # lane t reads 4 B at column 0 of row t
        (lambda t: (0, 2 * t), 4, (1, 1), (1, 1)),  # the warp reads one row, 4 B each
        (lambda t: (t // 4, 2 * (t % 4)), 4, (8, 1), (1, 1)),  # accumulator bf16x2 store
    ],
)
def test_known_answers(lanes, width, unswizzled, swizzled) -> None:
    for swizzle, expected in ((0, unswizzled), (128, swizzled)):
        addrs = [TILE[swizzle].address(*lanes(t)) for t in range(32)]
        assert wavefronts(addrs, width) == expected


def test_broadcast_counts_once() -> None:
    assert wavefronts([0] * 32, 4) == (1, 1)


def test_tma_128b_swizzle_formula() -> None:
    """Element (r, c) of a 64-column bf16 tile sits at r*128 + (((c>>3) ^ (r&7)) << 4) + (c&7)*2."""
    for r in range(64):
        for c in range(64):
            assert TILE[128].address(r, c) == r * 128 + (((c >> 3) ^ (r & 7)) << 4) + (c & 7) * 2


def test_64b_swizzle_pairs_rows() -> None:
    """64B: two consecutive 64-byte rows share one XOR value, (r >> 1) & 3."""
    layout = Layout(16, 32, 2, 64)
    for r in range(16):
        assert layout.address(r, 0) == r * 64 + (((r >> 1) & 3) << 4)
    assert swizzle_address(0x80, 32) == 0x90


def test_panels() -> None:
    """A 256-column bf16 tile is four 64-column panels of rows x 128 B."""
    layout = Layout(64, 256, 2, 128)
    assert layout.address(0, 64) == 64 * 128
    assert layout.num_bytes == 64 * 256 * 2


def test_whole_tile_accesses() -> None:
    bf16x2 = fragment_pairs("st.shared.b32", 2)
    assert conflicts(Layout(128, 256, 2, 0), bf16x2).ways == 8
    assert conflicts(Layout(128, 256, 2, 128), bf16x2).ways == 1
    assert conflicts(Layout(64, 64, 2, 0, pad=16), bf16x2).ways == 1
    pairs = fragment_pairs("st.shared.v2.f32", 4)
    assert [conflicts(Layout(64, 32, 4, s), pairs).ways for s in (128, 64, 32, 0)] == [2, 2, 1, 4]
    assert conflicts(Layout(128, 1, 4, 0), row_vector("st.shared.b32", 4)).ways == 1


def _every_instruction(layout: Layout, access: Access) -> tuple[int, int, int]:
    """`conflicts` without `repeats`: every instruction of the tile simulated."""
    ways = actual = ideal = 0
    for r0 in range(0, layout.rows, access.rows):
        for c0 in range(0, layout.cols, access.cols):
            a, i = wavefronts(warp_request(layout, access, r0, c0), access.width)
            ways, actual, ideal = max(ways, -(-a // i)), actual + a, ideal + i
    return ways, actual, ideal


@pytest.mark.parametrize("access", [fragment_pairs("st", 2), fragment_pairs("st", 4), row_vector("st", 4)])
def test_repeats_keep_the_count_exact(access: Access) -> None:
    """Simulating one instruction for all those `repeats` apart counts what simulating each does,
    for every swizzle, padding and height, tall and wide tiles and odd widths included."""
    elem_bytes = access.width // 2 if access.cols == 8 else access.width  # a pair, or one element
    for rows in (16, 40, 72):
        for cols in (1, 24, 64, 192):
            for swizzle, pad in ((0, 0), (0, 4), (0, 16), (32, 0), (64, 0), (128, 0)):
                if swizzle and cols * elem_bytes % swizzle or access.cols == 1 and cols > 1:  # vectors: one column
                    continue
                layout = Layout(rows, cols, elem_bytes, swizzle, pad)
                c = conflicts(layout, access)
                assert (c.ways, c.actual, c.ideal) == _every_instruction(layout, access), layout
