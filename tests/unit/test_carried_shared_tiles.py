"""A `var` holding a shared tile in a loop that loads: kept as it is (canonicalize stops the loop
carrying it) or reassigned (refused by the GPU backend with a message at the loop, not an
internal error: the fuzzer's generated:114:1106 was a PassVerifyError after convert-tile-to-sm90)."""

from __future__ import annotations

import pytest

from tkc.diagnostics import TkError
from tkc.driver import compile_module
from tkc.frontend import parse_tk

KEPT = """kernel kept<BM = 64>(C: gl<bf16>[T, S], F: gl<f32>[T, S]) {
    grid (T / BM) as (i)
    let x = load C[i, 0] : st<bf16>[BM, BM]
    var v = x
    for k in 0 .. 4 {
        v = x
        store F[i, k] = row_sum(f32(load C[i, k + 1] : rt<bf16>[BM, BM]))
    }
}
"""

SWAPPED = """kernel swapped<BM = 64>(C: gl<bf16>[T, S], F: gl<f32>[T, S]) {
    grid (T / BM) as (i)
    var v = load C[i, 0] : st<bf16>[BM, BM]
    for k in 0 .. 4 {
        store F[i, k] = f32(v)
        v = load C[i, k + 1] : st<bf16>[BM, BM]
    }
    store F[i, 0] = f32(v)
}
"""


def test_a_shared_tile_the_loop_keeps_is_not_carried() -> None:
    compile_module(parse_tk(KEPT, "kept.tk"), "ptx")  # was an internal error


def test_a_shared_tile_handed_across_iterations_is_refused_at_the_loop() -> None:
    with pytest.raises(TkError) as raised:
        compile_module(parse_tk(SWAPPED, "swapped.tk"), "ptx")
    text = str(raised.value)
    assert "swapped.tk:4:5" in text and "hands a shared tile (st<bf16>[64, 64])" in text
