"""passes/signs.py: which index values are provably at least 0, from the store coordinates of
kernels written as users write them (and after tile-sweep-order's backward walk)."""

import pytest
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

from tkc.dialects import tile
from tkc.frontend import parse_tk
from tkc.passes.signs import never_negative
from tkc.passes.tile_sweep_order import TileSweepOrderPass

KERNEL = """
kernel k(T: gl<i32>[G], X: gl<f32>[M, 64], Y: gl<f32>[M, 64]) {{
    grid (ceildiv(M, 64), G) as (i, g)
    let t = load T[g] : i32
    for j in {lower} .. 4 {{
        store Y[elem({row}), 0] = load X[0, 0] : rt<f32>[64, 64]
    }}
}}
"""


def _row(row: str, lower: str = "0") -> bool:
    module = parse_tk(KERNEL.format(row=row, lower=lower), "signs.tk", None)
    store = next(op for op in module.walk() if isinstance(op, tile.StoreOp))
    return never_negative(store.coords[0])


@pytest.mark.parametrize("row", ["i * 64", "t", "t + i * 3", "j", "max(i - 5, 0)",
                                 "min(i, t)", "ceildiv(i, 2)", "(i - 5) % 7", "i < 3 ? i : t", "(i + j) / 2"])
def test_provably_at_least_zero(row: str) -> None:
    assert _row(row)


@pytest.mark.parametrize("row", ["i * 64 - 5", "t - 1", "max(i - 5, 0 - 1)", "min(i, 0 - 3)", "i % (0 - 7)",
                                 "M - 64"])
def test_may_be_negative(row: str) -> None:
    assert not _row(row)


def test_a_loop_counter_from_a_negative_start_may_be_negative() -> None:
    assert not _row("j", lower="0 - 2")


def test_a_counter_walked_backwards_is_at_least_its_lower_bound() -> None:
    """The second loop re-reads the first's tiles: tile-sweep-order walks it from 3 down to 0,
    its counter read as (lb + ub - 1) - r."""
    source = """
kernel k(X: gl<f32>[M, N], Y: gl<f32>[M, N]) {
    grid (ceildiv(M, 64)) as (i)
    var s = zero<f32>[64]
    for j in 0 .. ceildiv(N, 64) {
        s = s + row_sum(load X[i, j] : rt<f32>[64, 64])
    }
    for j in 0 .. ceildiv(N, 64) {
        store Y[i, elem(j * 64)] = add_row(load X[i, j] : rt<f32>[64, 64], s)
    }
}
"""
    module = parse_tk(source, "sweep.tk", None)
    CommonSubexpressionElimination().apply(Context(), module)  # the loops' bounds become one
    TileSweepOrderPass().apply(Context(), module)
    store = next(op for op in module.walk() if isinstance(op, tile.StoreOp))
    column = store.coords[1].owner
    assert isinstance(column, arith.MuliOp)
    assert isinstance(column.lhs.owner, arith.SubiOp)  # j in j * 64, now (0 + ceildiv(N, 64) - 1) - r
    assert never_negative(store.coords[1])
