"""Stream-K GEMM (`@stream_k(1)`) on the GPU against torch.matmul: tile counts below, at and above
the SM count (whole waves, then a split last wave), slices that begin and end inside tiles and tiles split over several CTAs (few tiles,
long K), ragged edges, all four transpose forms, and repeated launches (the kernel leaves its
scratch flags zero, so the next launch waits for the right partial sums)."""

import pytest
from test_gemm_gpu import FORMS, _source  # the four transpose forms and the example defining each

pytestmark = pytest.mark.gpu
SHAPES = [
    (128, 256, 64),  # one tile of one iteration: every other CTA idles
    (256, 512, 4096),  # 4 tiles of 64 iterations over 132 CTAs: each tile split over ~33 CTAs
    (1000, 1000, 1000),  # ragged edges, 32 tiles of 16 iterations
    (1024, 5120, 1384),  # 160 tiles: 1.2 tiles per CTA, ragged K
    (3072, 3072, 3072),  # 288 tiles: two whole waves, then 24 tiles split over 132 CTAs
    (1536, 2816, 512),  # 132 tiles: one whole wave on an H100/H200, nothing split
    (776, 2000, 72),  # ragged, K of 2 iterations, the last partial
]


@pytest.mark.parametrize("kernel", FORMS)
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_stream_k_gemm_matches_torch(kernel: str, shape: tuple[int, int, int]) -> None:
    import torch

    import tkc

    m, n, k = shape
    trans_a, trans_b = FORMS[kernel]
    compiled = tkc.compile(_source(kernel), kernel=kernel, **{"@stream_k": 1})
    torch.manual_seed(m + n + k)
    a = torch.randn((k, m) if trans_a else (m, k), device="cuda", dtype=torch.bfloat16)
    b = torch.randn((n, k) if trans_b else (k, n), device="cuda", dtype=torch.bfloat16)
    ref = (a.float().T if trans_a else a.float()) @ (b.float().T if trans_b else b.float())
    first = None
    for _ in range(3):
        c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        compiled(a, b, c)
        torch.cuda.synchronize()
        assert not torch.isnan(c).any(), "unwritten or NaN outputs"
        rel = ((c.float() - ref).norm() / ref.norm()).item()
        assert rel < 1e-2, f"relative error {rel:.3g}"
        # the finishing CTA adds the partial sums in a fixed order: launches agree bit for bit
        first = c if first is None else first
        assert torch.equal(c, first)
