"""The fused two-layer MLP (examples/mlp.tk: Y = relu(X @ W1) @ W2, the hidden dimension walked
a tile at a time, a K loop over D nested in it) on the GPU against torch."""

from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

MLP = Path(__file__).parents[2] / "examples" / "mlp.tk"
# (M, D, H, N); H / 128 hidden tiles: 4 (the case), 1, and several with a deeper D loop
SHAPES = [(256, 128, 512, 256), (128, 64, 128, 128), (1024, 512, 512, 512), (2048, 1024, 2048, 1024)]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_mlp_matches_torch(shape: tuple[int, int, int, int]) -> None:
    import torch

    import tkc

    m, d, h, n = shape
    compiled = tkc.compile(MLP, kernel="mlp")
    torch.manual_seed(m + d + h + n)
    x = torch.randn((m, d), device="cuda", dtype=torch.bfloat16)
    w1 = torch.randn((d, h), device="cuda", dtype=torch.bfloat16) / d**0.5
    w2 = torch.randn((h, n), device="cuda", dtype=torch.bfloat16) / h**0.5
    y = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    compiled(x, w1, w2, y)
    torch.cuda.synchronize()
    hidden = torch.relu(x.float() @ w1.float()).bfloat16().float()
    ref = hidden @ w2.float()
    assert not torch.isnan(y).any(), "unwritten or NaN outputs"
    rel = ((y.float() - ref).norm() / ref.norm()).item()
    assert rel < 1e-2, f"relative error {rel:.3g}"
