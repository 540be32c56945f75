"""Attention backward on the GPU: the gradients of examples/attention_autograd.attention (tkc's
forward and backward kernels: the three-kernel backward and the store_add one) against autograd
through attention computed in f32, causal and not, D 64 and 128, grouped-query heads, and sequence
lengths that are no multiple of a tile."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

EXAMPLES = Path(__file__).parents[2] / "examples"
CASES = [  # B, H, HKV, N, D
    (1, 2, 2, 128, 64),
    (2, 4, 4, 1000, 64),
    (1, 2, 2, 512, 128),
    (2, 2, 2, 1000, 128),
    (1, 8, 2, 384, 64),
    (1, 8, 1, 200, 128),
    (1, 1, 1, 17, 64),
]


def _attention_module():  # noqa: ANN202 - a module
    spec = importlib.util.spec_from_file_location("attention_autograd", EXAMPLES / "attention_autograd.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["attention_autograd"] = module
    spec.loader.exec_module(module)
    return module


def _reference(q, k, v, causal: bool):  # noqa: ANN001, ANN202 - torch tensors
    import torch

    group = q.shape[1] // k.shape[1]
    k, v = k.repeat_interleave(group, 1), v.repeat_interleave(group, 1)
    scores = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if causal:
        n = q.shape[-2]
        scores = scores.masked_fill(torch.ones(n, n, device=q.device, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(scores, -1) @ v


@pytest.mark.parametrize("reduce_dq", [False, True], ids=["three-kernels", "reduce-dq"])
@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "B{}H{}HKV{}N{}D{}".format(*c))
def test_attention_gradients_match_torch(case: tuple[int, int, int, int, int], causal: bool, reduce_dq: bool) -> None:
    import torch

    attention = _attention_module().attention
    b, h, hkv, n, d = case
    if reduce_dq and d != 64:
        pytest.skip("reduce_dq takes D = 64")
    torch.manual_seed(n + d + h)
    q = torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k, v = (torch.randn(b, hkv, n, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(2))
    d_o = torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16)
    out = attention(q, k, v, causal=causal, reduce_dq=reduce_dq)
    grads = torch.autograd.grad(out, (q, k, v), d_o)
    leaves = [t.detach().float().requires_grad_() for t in (q, k, v)]
    ref_out = _reference(*leaves, causal)
    ref_grads = torch.autograd.grad(ref_out, leaves, d_o.float())
    assert ((out.float() - ref_out).norm() / ref_out.norm()).item() < 1e-2
    for name, got, want in zip(("dQ", "dK", "dV"), grads, ref_grads, strict=True):
        assert got.shape == want.shape and not torch.isnan(got).any(), f"{name}: NaN or wrong shape"
        rel = ((got.float() - want).norm() / want.norm()).item()
        assert rel < 1e-2, f"{name}: relative error {rel:.3e}"
