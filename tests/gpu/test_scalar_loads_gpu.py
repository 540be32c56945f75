"""Scalar loads (`load T[i...] : i32`) on the GPU: tile coordinates, loop bounds and math read
from an i32 table at run time match the interpreter, for tables that point anywhere in the
tensor and loops of zero trips; tiles at element coordinates read from a table."""

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

pytestmark = pytest.mark.gpu

KERNEL = Path(__file__).parent / "kernels" / "gather_rows.tk"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_gather_rows_matches_interpreter(seed: int) -> None:
    from tkc.driver import load_module
    from tkc.interpreter import interpret
    from tkc.runner import run_on_gpu

    rng = np.random.default_rng(seed)
    row_tiles, col_tiles, groups = 9, 6, 37
    x = rng.standard_normal((64 * row_tiles, 64 * col_tiles)).astype(ml_dtypes.bfloat16)
    table = np.stack([
        rng.integers(0, row_tiles, groups),
        rng.integers(-3, 4, groups) % 7,
        rng.integers(0, col_tiles + 1, groups),  # 0: the loop runs no iteration
    ], axis=1).astype(np.int32)
    inputs = {"X": x, "Table": table, "Y": np.full((64 * groups, 64), np.nan, np.float32)}
    module = load_module(str(KERNEL), None, {})
    expected = interpret(module, "gather_rows", inputs, {})["Y"]
    got = run_on_gpu(path=str(KERNEL), kernel="gather_rows", inputs=inputs, params={})["Y"]
    assert not np.isnan(got).any(), "unwritten outputs"
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-4)


ELEMENT_KERNEL = Path(__file__).parent / "kernels" / "element_coords.tk"


@pytest.mark.parametrize("seed", [0, 1])
def test_element_coordinates_match_numpy(seed: int) -> None:
    """Tiles at element rows read from a table: the last one runs past the end of X (zeros
    read, nothing written past M), the rows between the tiles stay untouched."""
    from tkc.runner import run_on_gpu

    rng = np.random.default_rng(seed)
    groups, cols = 23, 64 * 3
    starts = np.cumsum(64 + rng.integers(0, 40, groups)) - 64
    rows = int(starts[-1]) + 64 - int(rng.integers(1, 60))  # the last tile is partial
    x = rng.standard_normal((rows, cols)).astype(ml_dtypes.bfloat16)
    inputs = {"X": x, "Off": starts.astype(np.int32),
              "Y": np.full((rows, 64), np.nan, np.float32), "S": np.full((rows,), np.nan, np.float32)}
    got = run_on_gpu(path=str(ELEMENT_KERNEL), kernel="element_coords", inputs=inputs, params={})
    want_y = np.full((rows, 64), np.nan, np.float32)
    want_s = np.full((rows,), np.nan, np.float32)
    xf = x.astype(np.float32)
    for start in starts:
        block = xf[start:start + 64].reshape(-1, 3, 64).sum(axis=1)
        want_y[start:start + 64] = block
        want_s[start:start + 64] = block.max(axis=1)
    np.testing.assert_allclose(got["Y"], want_y, rtol=1e-5, atol=1e-4)  # NaN where nothing may be written
    np.testing.assert_allclose(got["S"], want_s, rtol=1e-5, atol=1e-4)


INVARIANT_KERNEL = Path(__file__).parent / "kernels" / "invariant_coords.tk"


@pytest.mark.parametrize("seed", [0, 1])
def test_coordinates_written_in_and_after_a_loop_match_the_interpreter(seed: int) -> None:
    """`elem(start + BM, end)` written inside a K loop and again at the store after it (one value
    after tile-hoist-invariants): each group's rows from start + 64 to its end (at most 64 of
    them) get their product, rows past the end of a group or of Y are not written; and the rows
    r .. r + 1 summed over a loop are stored at the same range."""
    from tkc.driver import load_module
    from tkc.interpreter import interpret
    from tkc.runner import run_on_gpu

    rng = np.random.default_rng(seed)
    tokens, k, n = 400, 200, 256
    offsets = np.array([0, 70, 160, 300, 330, tokens], np.int32) if seed == 0 else \
        np.sort(rng.integers(0, tokens, 6)).astype(np.int32)
    inputs = {"X": rng.standard_normal((tokens, k)).astype(ml_dtypes.bfloat16),
              "W": rng.standard_normal((k, n)).astype(ml_dtypes.bfloat16), "Off": offsets,
              "Y": np.full((tokens, n), np.nan, ml_dtypes.bfloat16), "S": np.full((tokens,), np.nan, np.float32)}
    module = load_module(str(INVARIANT_KERNEL), None, {})
    expected = interpret(module, "invariant_coords", dict(inputs), {})
    got = run_on_gpu(path=str(INVARIANT_KERNEL), kernel="invariant_coords", inputs=inputs, params={})
    for name in ("Y", "S"):
        want, have = np.asarray(expected[name], np.float64), np.asarray(got[name], np.float64)
        assert np.array_equal(np.isnan(want), np.isnan(have)), f"{name}: written elsewhere than the interpreter writes"
        np.testing.assert_allclose(have[~np.isnan(want)], want[~np.isnan(want)], rtol=2e-2, atol=2e-2)


VAR_KERNELS = Path(__file__).parent / "kernels" / "var_conditions.tk"


@pytest.mark.parametrize("kernel", ["sum_until", "sum_first", "flagged_tiles"])
@pytest.mark.parametrize("tiles", [1, 5])
def test_loads_under_ifs_on_vars_match_numpy(kernel: str, tiles: int) -> None:
    from tkc.runner import run_on_gpu

    rng = np.random.default_rng(tiles)
    t, d = 64 * tiles, 128
    flags = rng.integers(0, 2, tiles).astype(np.int32)
    flags[:tiles // 2] = 0  # sum_until stops past the first tile
    x = rng.standard_normal((t, d if kernel == "sum_until" else 64)).astype(np.float32)
    blocks = x.reshape(tiles, 64, -1).sum(axis=1)
    if kernel == "sum_until":
        stop = int(np.argmax(flags)) if flags.any() else tiles - 1
        inputs, want = {"Stop": flags, "X": x, "Y": np.full(d, np.nan, np.float32)}, blocks[:stop + 1].sum(0)
    elif kernel == "sum_first":
        inputs, want = {"X": x, "Y": np.full(64, np.nan, np.float32)}, blocks[:2].sum(0)
    else:
        inputs = {"F": flags, "X": x, "Y": np.full((tiles, 64), np.nan, np.float32)}
        want = blocks * (flags > 0)[:, None]
    got = run_on_gpu(path=str(VAR_KERNELS), kernel=kernel, inputs=inputs, params={})["Y"]
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


CUMSUM_KERNEL = Path(__file__).parent / "kernels" / "varlen_cumsum.tk"


@pytest.mark.parametrize("lengths", [[5, 64, 130, 1, 3], [1, 1, 67, 200, 9], [64, 128, 63]])
def test_column_vectors_stored_from_run_time_starts_match_numpy(lengths: list[int]) -> None:
    """A column vector (a cumsum) stored at an element coordinate read from a table: sequences
    that start at odd elements get their sums too (they were left unwritten), and nothing is
    written past a sequence's end."""
    from tkc.runner import run_on_gpu

    rng = np.random.default_rng(len(lengths))
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    total = int(offsets[-1])
    v = rng.standard_normal(total).astype(np.float32)
    inputs = {"V": v, "CU": offsets, "P": np.full(total, np.nan, np.float32), "Tot": np.full(total, np.nan, np.float32)}
    got = run_on_gpu(path=str(CUMSUM_KERNEL), kernel="varlen_cumsum", inputs=inputs, params={})
    want_p = np.concatenate([np.cumsum(v[a:b]) for a, b in zip(offsets[:-1], offsets[1:])])
    want_tot = np.full(total, np.nan, np.float32)
    want_tot[offsets[:-1]] = [v[a:b].sum() for a, b in zip(offsets[:-1], offsets[1:])]
    np.testing.assert_allclose(got["P"], want_p, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got["Tot"], want_tot, rtol=1e-4, atol=1e-4)  # NaN where nothing may be written
