"""store_add on the GPU, element by element (test_kernels_vs_interpreter_gpu compares norms): a
replicated tile is added exactly once, and split-K's sums match C + A B wherever the adds land,
at ragged shapes."""

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
