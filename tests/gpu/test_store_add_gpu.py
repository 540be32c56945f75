"""store_add on the GPU, element by element (test_kernels_vs_interpreter_gpu compares norms): a
replicated tile is added exactly once, split-K's sums match C + A B wherever the adds land, in
f32 and in bf16, at ragged shapes, and adds at an element range with an end leave every row past
the end as it was (bit for bit) or as the next range's own add made it."""

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest

pytestmark = pytest.mark.gpu

KERNELS = Path(__file__).parent / "kernels"


def _run(name: str, inputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    from tkc.runner import run_on_gpu

    return {k: np.asarray(v, np.float32) for k, v in run_on_gpu(str(KERNELS / name), None, inputs, {}).items()}


def _normal(seed: int, *shape: int) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _bf16(x: np.ndarray) -> np.ndarray:
    """`x` rounded to bf16, as f32."""
    return x.astype(ml_dtypes.bfloat16).astype(np.float32)


def test_a_replicated_tile_is_added_once() -> None:
    x, r, c = _normal(5, 256, 64), _normal(6, 128, 64), _normal(7, 128, 64)
    out = _run("store_add_replicated.tk", {"X": x, "Y": np.zeros((256, 64), np.float32), "R": r, "C": c})
    np.testing.assert_allclose(out["C"], c + 3 * r, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("m, n, k", [(256, 256, 512), (200, 136, 200)])
def test_split_k_sums_every_slice(m: int, n: int, k: int) -> None:
    a, b, c = _bf16(_normal(8, m, k)), _bf16(_normal(9, k, n)), _normal(10, m, n)
    out = _run("store_add_splitk.tk", {"A": a, "B": b, "C": c})
    want = c + a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(out["C"], want, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("m, n, k", [(256, 256, 512), (200, 136, 200)])
def test_bf16_split_k_sums_every_slice(m: int, n: int, k: int) -> None:
    """Three bf16 adds per element (each rounded to bf16, in any order): within a few roundings
    of C + A B, and never added past the ends (a missing or doubled slice is off by ~8). A
    rounding of a partial sum up to 64 is up to 0.25, and three of them can meet where the
    total cancels to near 0 (seen on the H200: 0.0 for -0.345), so the bound is absolute."""
    a, b, c = _bf16(_normal(11, m, k)), _bf16(_normal(12, k, n)), _bf16(_normal(13, m, n))
    out = _run("store_add_bf16_splitk.tk", {"A": a, "B": b, "C": c})
    want = c + a.astype(np.float64) @ b.astype(np.float64)
    np.testing.assert_allclose(out["C"], want, rtol=2e-2, atol=1.0)


@pytest.mark.parametrize("m", [250, 300, 37])
def test_adds_stop_at_an_element_range_end(m: int) -> None:
    """Segments of 100 rows whose first 92 are added: the 8 rows after each keep their values bit
    for bit, though the segment's last tile reaches over them and into the next segment."""
    x, o, p = _normal(14, m, 64), _normal(15, m, 64), _bf16(_normal(16, m, 64))
    out = _run("store_add_segments.tk", {"X": x, "O": o, "P": p})
    added = (np.arange(m) % 100 < 92)[:, None]
    np.testing.assert_array_equal(out["O"], np.where(added, o + (x * np.float32(2) + np.float32(1)), o))
    np.testing.assert_array_equal(out["P"][~added[:, 0]], p[~added[:, 0]])
    np.testing.assert_allclose(out["P"], np.where(added, _bf16(p + _bf16(x - 1)), p), rtol=1e-2, atol=1e-2)
