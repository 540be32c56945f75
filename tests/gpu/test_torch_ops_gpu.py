"""tkc kernels as torch custom operators: eager, under torch.compile, in a CUDA graph."""

from __future__ import annotations

from pathlib import Path

import pytest

import tkc

torch = pytest.importorskip("torch")
torch_ops = pytest.importorskip("tkc.torch_ops")

REPO = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.gpu


def test_gemm_operator_eager_compiled_and_in_a_graph() -> None:
    gemm = torch_ops.custom_op(tkc.compile(REPO / "examples/gemm.tk", kernel="gemm"))
    a = torch.randn(512, 256, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(256, 512, device="cuda", dtype=torch.bfloat16)
    ref = a.float() @ b.float()

    def error(c: torch.Tensor) -> float:
        return ((c.float() - ref).norm() / ref.norm()).item()

    assert error(gemm(a, b)) < 1e-2
    compiled = torch.compile(lambda x, y: gemm(x, y) * 2, fullgraph=True)
    assert ((compiled(a, b).float() - 2 * ref).norm() / (2 * ref).norm()).item() < 1e-2
    graph = torch.cuda.CUDAGraph()
    gemm(a, b)  # warm: the module is loaded before capture
    with torch.cuda.graph(graph):
        captured = gemm(a, b)
    a.copy_(torch.randn_like(a))
    graph.replay()
    torch.cuda.synchronize()
    assert ((captured.float() - a.float() @ b.float()).norm() / (a.float() @ b.float()).norm()).item() < 1e-2


def test_a_tensor_read_and_written_is_a_mutated_input() -> None:
    kernel = tkc.compile(REPO / "tests/gpu/kernels/raw_same_tile.tk", kernel="raw_same_tile")
    sig = torch_ops.signature(kernel)
    assert [a.name for a in sig.inputs] == ["X"] and sig.mutated == ("X",) and [a.name for a in sig.outputs] == ["Y"]
    op = torch_ops.custom_op(kernel)
    x = torch.randn(128, 128, device="cuda", dtype=torch.float32)
    expected = x * 2.0 + 1.0
    y = op(x)
    torch.testing.assert_close(y, expected)
    torch.testing.assert_close(x, expected)


def test_attention_operator_returns_both_outputs() -> None:
    attention = torch_ops.custom_op(tkc.compile(REPO / "examples/attention.tk", kernel="attn_fwd", D=64))
    q, k, v = (torch.randn(1, 2, 256, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    o, lse = attention(q, k, v)
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v)
    assert o.shape == q.shape and lse.shape == (1, 2, 256) and lse.dtype == torch.float32
    assert ((o.float() - ref.float()).norm() / ref.float().norm()).item() < 1e-2
