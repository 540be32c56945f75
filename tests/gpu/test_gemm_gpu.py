"""GEMM on the GPU in all four transpose forms against torch.matmul (f32 math on bf16 inputs)."""

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.gpu

EXAMPLES = Path(__file__).parents[2] / "examples"
# kernel -> (A stored transposed, B stored transposed)
FORMS = {"gemm": (False, False), "gemm_abt": (False, True), "gemm_atb": (True, False), "gemm_atbt": (True, True)}
# 384 and 128 rows: an odd number of 128-row tiles, so a 2-CTA cluster's last pair is half out of bounds
SHAPES = [(256, 256, 256), (1024, 2048, 512), (4096, 4096, 4096), (384, 512, 256), (128, 256, 128)]


def _source(kernel: str) -> Path:
    for path in sorted(EXAMPLES.glob("gemm*.tk")):
        if f"kernel {kernel}" in path.read_text() or f"kernel {kernel}<" in path.read_text():
            return path
    pytest.skip(f"no example defines kernel {kernel}")


def check_gemm(kernel: str, shape: tuple[int, int, int], pins: dict[str, int]) -> tuple[Any, tuple[Any, ...]]:
    """The kernel compiled with `pins`, launched on random inputs of `shape` against torch (f32
    math); returns it and the tensors it ran on."""
    import torch

    import tkc

    m, n, k = shape
    trans_a, trans_b = FORMS[kernel]
    compiled = tkc.compile(_source(kernel), kernel=kernel, **pins)
    torch.manual_seed(m + n + k)
    a = torch.randn((k, m) if trans_a else (m, k), device="cuda", dtype=torch.bfloat16)
    b = torch.randn((n, k) if trans_b else (k, n), device="cuda", dtype=torch.bfloat16)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    compiled(a, b, c)
    torch.cuda.synchronize()
    ref = (a.float().T if trans_a else a.float()) @ (b.float().T if trans_b else b.float())
    assert not torch.isnan(c).any(), "unwritten or NaN outputs"
    rel = ((c.float() - ref).norm() / ref.norm()).item()
    assert rel < 1e-2, f"relative error {rel:.3g}"
    return compiled, (a, b, c)


@pytest.mark.parametrize("kernel", FORMS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_gemm_matches_torch(kernel: str, shape: tuple[int, int, int]) -> None:
    check_gemm(kernel, shape, {})


# 640 rows: five 128-row tiles, so the second 4-CTA cluster has three tiles wholly out of bounds
# (their CTAs still load their share of B for the fourth); 1000: rows that are no 128-byte lines
CLUSTER_SHAPES = [(640, 512, 256), (1000, 1000, 1000), (2048, 4096, 1024)]
# gemm's B tile has four swizzle panels, one per CTA of four; gemm_abt's Bt tile has one, which
# the CTAs split by rows (a band of 128 or 64 of its 256 rows each)
CLUSTERED = [("gemm", 4), ("gemm_abt", 2), ("gemm_abt", 4)]


@pytest.mark.parametrize("kernel,cluster", CLUSTERED, ids=lambda v: str(v))
@pytest.mark.parametrize("shape", CLUSTER_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_gemm_cluster_matches_torch(kernel: str, cluster: int, shape: tuple[int, int, int]) -> None:
    compiled, tensors = check_gemm(kernel, shape, {"@cluster": cluster})
    launcher = compiled._variant_for(tensors)._launcher  # the variant these shapes launched
    assert launcher is not None
    grid = launcher.launch_config(*tensors).grid
    assert grid[0] % cluster == 0
    if cluster == 4:
        assert launcher.max_clusters is not None, "no occupancy answer for the 4-CTA clusters"
        assert grid[0] // 4 <= launcher.max_clusters
