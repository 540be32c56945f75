"""Strided views of the arguments a kernel reaches only through tensor maps, on the GPU.

The runtime maps such an argument with the view's own strides (tkc/runtime/launch.py): a
transposed [B, N, H, D] tensor given as [B, H, N, D], a column slice, rows padded to 16 bytes.
Each result is checked against torch (or the interpreter on packed copies), and each strided
write against the bytes around it, which must keep the poison they were given.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

import tkc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.gpu

REPO = Path(__file__).resolve().parents[2]
ATTENTION = REPO / "examples" / "attention.tk"
GEMM = REPO / "examples" / "gemm.tk"
POISON = float("nan")


def relative_error(got: torch.Tensor, want: torch.Tensor) -> float:
    return ((got.float() - want.float()).norm() / want.float().norm()).item()


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("d", [64, 128])
@pytest.mark.parametrize("n", [1000, 4096])
def test_attention_on_transposed_bnhd_views(n: int, d: int, causal: bool) -> None:
    """Q, K, V and O in FlashAttention's [B, N, H, D] layout, passed as `.transpose(1, 2)` views
    (O's buffer has an extra head that must stay poisoned); LSE is stored through its address, so
    it stays contiguous."""
    b, h = 2, 3
    kernel = tkc.compile(ATTENTION, kernel="attn_fwd", D=d, CAUSAL=causal)
    torch.manual_seed(n + d)
    q, k, v = (torch.randn(b, n, h, d, device="cuda", dtype=torch.bfloat16).transpose(1, 2) for _ in range(3))
    o_store = torch.full((b, n, h + 1, d), POISON, device="cuda", dtype=torch.bfloat16)
    o = o_store[:, :, :h].transpose(1, 2)
    lse = torch.full((b, h, n), POISON, device="cuda", dtype=torch.float32)
    assert not q.is_contiguous() and not o.is_contiguous()
    kernel(q, k, v, o, lse)
    torch.cuda.synchronize()
    ref = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=causal)
    scores = (q.float() @ k.float().transpose(-1, -2)) / math.sqrt(d)
    if causal:
        scores = scores.masked_fill(torch.ones(n, n, device="cuda", dtype=torch.bool).triu(1), float("-inf"))
    assert not torch.isnan(o).any() and not torch.isnan(lse).any(), "unwritten or NaN outputs"
    assert relative_error(o, ref) < 1e-2
    assert relative_error(lse, torch.logsumexp(scores, -1)) < 1e-3
    assert torch.isnan(o_store[:, :, h:]).all(), "the store wrote outside the view"


@pytest.mark.parametrize("k", [1000, 1001, 4096])
def test_gemm_on_column_slices(k: int) -> None:
    """A = a_big[:, :K], B = b_big[:, :N], C = c_big[:, :N]: rows of the big tensors' length, the
    columns past the slice poisoned in C (a contiguous A with K = 1001 would be refused: rows of
    2002 bytes; a slice of 16-byte-aligned rows is not)."""
    m, n = 1000, 1000
    kernel = tkc.compile(GEMM, kernel="gemm")
    torch.manual_seed(k)
    a_big = torch.randn(m, 1024 + 4096, device="cuda", dtype=torch.bfloat16)
    b_big = torch.randn(k, n + 24, device="cuda", dtype=torch.bfloat16)
    c_big = torch.full((m, n + 40), POISON, device="cuda", dtype=torch.bfloat16)
    a, b, c = a_big[:, :k], b_big[:, :n], c_big[:, :n]
    kernel(a, b, c)
    torch.cuda.synchronize()
    assert not torch.isnan(c).any(), "unwritten or NaN outputs"
    assert relative_error(c, a.float() @ b.float()) < 1e-2
    assert torch.isnan(c_big[:, n:]).all(), "the store wrote outside the view"


def test_padded_lse_rows_read_through_a_tensor_map() -> None:
    """LSE as `lse_store[..., :N]` of a [B, H, round_up(N, 4)] f32 buffer with N % 4 != 0, read a
    vector at a time by TMA (tests/gpu/kernels/lse_rows.tk), against the interpreter on packed
    copies."""
    b, h, n, d = 2, 3, 1001, 64
    kernel = tkc.compile(REPO / "tests" / "gpu" / "kernels" / "lse_rows.tk", kernel="lse_rows")
    torch.manual_seed(0)
    x = torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16)
    lse_store = torch.randn(b, h, n + 3, device="cuda", dtype=torch.float32)
    lse = lse_store[..., :n]
    y = torch.full((b, h, n, d), POISON, device="cuda", dtype=torch.bfloat16)
    kernel(x, lse, y)
    torch.cuda.synchronize()
    want = np.asarray(kernel.interpret(X=x.float().cpu().numpy(), LSE=lse.cpu().numpy())["Y"], np.float64)
    got = y.double().cpu().numpy()
    assert not np.isnan(got).any(), "unwritten or NaN outputs"
    assert np.linalg.norm(got - want) / np.linalg.norm(want) < 1e-2


def test_one_address_and_shape_with_other_strides_gets_its_own_tensor_map() -> None:
    """A packed [M, K] at the start of a buffer and the column slice [M, K] of the same buffer read
    as [M, 2K] rows: same address, same shape, other strides. The launch and tensor-map caches
    must tell them apart."""
    m, n, k = 256, 256, 512
    kernel = tkc.compile(GEMM, kernel="gemm")
    torch.manual_seed(1)
    storage = torch.randn(m * 2 * k, device="cuda", dtype=torch.bfloat16)
    packed, sliced = storage[: m * k].view(m, k), storage.view(m, 2 * k)[:, :k]
    assert packed.data_ptr() == sliced.data_ptr() and packed.shape == sliced.shape
    b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    for a in (packed, sliced, packed, sliced):
        c = torch.full((m, n), POISON, device="cuda", dtype=torch.bfloat16)
        kernel(a, b, c)
        torch.cuda.synchronize()
        assert relative_error(c, a.float() @ b.float()) < 1e-2


def test_keys_and_values_broadcast_over_heads() -> None:
    """A read-only view may repeat elements: K and V of one head expanded over H (stride 0), as
    multi-query attention shares them."""
    b, h, n, d = 1, 4, 512, 64
    kernel = tkc.compile(ATTENTION, kernel="attn_fwd", D=d)
    torch.manual_seed(2)
    q = torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16)
    k, v = (torch.randn(b, 1, n, d, device="cuda", dtype=torch.bfloat16).expand(b, h, n, d) for _ in range(2))
    o = torch.full((b, h, n, d), POISON, device="cuda", dtype=torch.bfloat16)
    lse = torch.empty(b, h, n, device="cuda", dtype=torch.float32)
    kernel(q, k, v, o, lse)
    torch.cuda.synchronize()
    ref = torch.nn.functional.scaled_dot_product_attention(q, k.contiguous(), v.contiguous())
    assert relative_error(o, ref) < 1e-2


def test_operator_and_graph_on_views() -> None:
    """The torch operator takes views as inputs (its outputs are allocated contiguous), eagerly
    and in a CUDA graph."""
    import tkc.torch_ops

    gemm = tkc.torch_ops.custom_op(tkc.compile(GEMM, kernel="gemm"))
    a_big = torch.randn(512, 384, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(256, 1024, device="cuda", dtype=torch.bfloat16)[:, :512]
    a = a_big[:, :256]
    assert relative_error(gemm(a, b), a.float() @ b.float()) < 1e-2
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        captured = gemm(a, b)
    a_big.copy_(torch.randn_like(a_big))
    graph.replay()
    torch.cuda.synchronize()
    assert relative_error(captured, a.float() @ b.float()) < 1e-2


def test_refusals_name_the_argument() -> None:
    """Views a tensor map cannot address, and a pointer argument that is not contiguous, are
    refused before anything launches."""
    kernel = tkc.compile(ATTENTION, kernel="attn_fwd", D=64)
    q, k, v = (torch.randn(1, 2, 256, 64, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    o = torch.empty(1, 2, 256, 64, device="cuda", dtype=torch.bfloat16)
    lse_store = torch.empty(1, 2, 260, device="cuda", dtype=torch.float32)
    with pytest.raises(tkc.TkError, match="argument LSE is not contiguous row-major.*through its address"):
        kernel(q, k, v, o, lse_store[..., :256])
    with pytest.raises(tkc.TkError, match="argument Q: its innermost dim must be dense"):
        kernel(torch.randn(1, 2, 64, 256, device="cuda", dtype=torch.bfloat16).transpose(2, 3), k, v, o,
               torch.empty(1, 2, 256, device="cuda", dtype=torch.float32))
    with pytest.raises(tkc.TkError, match="argument O: dim B .* stride 0"):
        kernel(torch.randn(2, 2, 256, 64, device="cuda", dtype=torch.bfloat16), *(torch.randn(2, 2, 256, 64,
               device="cuda", dtype=torch.bfloat16) for _ in range(2)), o.expand(2, 2, 256, 64),
               torch.empty(2, 2, 256, device="cuda", dtype=torch.float32))
