"""Attention forward on the GPU against scaled_dot_product_attention and logsumexp in f32."""

import math
from pathlib import Path

import pytest

pytestmark = pytest.mark.gpu

EXAMPLE = Path(__file__).parents[2] / "examples" / "attention.tk"
CASES = [(1, 2, 128, 64), (2, 4, 512, 128), (1, 2, 2048, 64), (1, 1, 4096, 128), (1, 1, 16384, 128)]


def reference(q, k, v, causal: bool):  # noqa: ANN001, ANN201 - torch tensors
    import torch

    scores = (q.float() @ k.float().transpose(-1, -2)) / math.sqrt(q.shape[-1])
    if causal:
        n = q.shape[-2]
        scores = scores.masked_fill(torch.ones(n, n, device=q.device, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(scores, -1) @ v.float(), torch.logsumexp(scores, -1)


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("case", CASES, ids=lambda c: "B{}H{}N{}D{}".format(*c))
def test_attention_matches_torch(case: tuple[int, int, int, int], causal: bool) -> None:
    check_attention(case, causal, {})


# a persistent grid walks the causal tiles qi slowest, from the last down (heavy_first); ragged N
# and head counts that leave the CTAs' strided shares uneven
PERSISTENT_CASES = [(3, 5, 1000, 64), (2, 3, 777, 128), (1, 7, 2048, 64)]


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize("case", PERSISTENT_CASES, ids=lambda c: "B{}H{}N{}D{}".format(*c))
def test_persistent_attention_matches_torch(case: tuple[int, int, int, int], causal: bool) -> None:
    check_attention(case, causal, {"@persistent": 1})


# split K/V rings (@split_ring): one CTA per tile and persistent (a 2-stage ring at D = 128), at
# ragged N and with a single key tile (the loop's first head is also its last)
SPLIT_CASES = [((1, 2, 128, 64), {}), ((2, 3, 777, 128), {}), ((1, 2, 4096, 128), {"@persistent": 1}),
               ((3, 5, 1000, 64), {"@persistent": 1}), ((1, 1, 4099, 128), {"@stages": 2})]


@pytest.mark.parametrize("causal", [False, True], ids=["full", "causal"])
@pytest.mark.parametrize(("case", "pins"), SPLIT_CASES,
                         ids=["B{}H{}N{}D{}".format(*c) + "".join(f"-{k[1:]}{v}" for k, v in p.items()) for c, p in SPLIT_CASES])
def test_split_ring_attention_matches_torch(case: tuple[int, int, int, int], pins: dict[str, int], causal: bool) -> None:
    check_attention(case, causal, {"@split_ring": 1, **pins})


# CTA pairs along the query tiles share K and V (TMA multicast): at D = 64 a tile is one panel, split
# by rows; at D = 128 two panels. Full attention only (a causal loop's bounds differ along qi); an
# odd number of query tiles leaves the last pair half past the end
CLUSTER_CASES = [((3, 5, 1000, 64), {}), ((1, 2, 2048, 64), {}), ((2, 3, 777, 128), {"@persistent": 1})]


@pytest.mark.parametrize(("case", "pins"), CLUSTER_CASES,
                         ids=["B{}H{}N{}D{}".format(*c) + "".join(f"-{k[1:]}{v}" for k, v in p.items()) for c, p in CLUSTER_CASES])
def test_clustered_attention_matches_torch(case: tuple[int, int, int, int], pins: dict[str, int]) -> None:
    check_attention(case, False, {"@cluster": 2, **pins})


def check_attention(case: tuple[int, int, int, int], causal: bool, pins: dict[str, int]) -> None:
    import torch

    import tkc

    b, h, n, d = case
    kernel = tkc.compile(EXAMPLE, kernel="attn_fwd", D=d, CAUSAL=causal, **pins)
    torch.manual_seed(n + d)
    q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    o = torch.full((b, h, n, d), float("nan"), device="cuda", dtype=torch.bfloat16)
    lse = torch.full((b, h, n), float("nan"), device="cuda", dtype=torch.float32)
    kernel(q, k, v, o, lse)
    torch.cuda.synchronize()
    ref_o, ref_lse = reference(q, k, v, causal)
    assert not torch.isnan(o).any() and not torch.isnan(lse).any(), "unwritten or NaN outputs"
    rel_o = ((o.float() - ref_o).norm() / ref_o.norm()).item()
    rel_lse = ((lse - ref_lse).norm() / ref_lse.norm()).item()
    assert rel_o < 1e-2, f"O relative error {rel_o:.3g}"
    assert rel_lse < 1e-3, f"LSE relative error {rel_lse:.3g}"


def test_head_counts_that_break_the_kernels_requirement_are_refused_before_the_launch() -> None:
    """`require H == HKV * G`: 4 query heads over 2 key heads at G = 1 used to read key heads past
    the end of K (a trap, which leaves the CUDA context unusable); now the launch is refused and
    the next one runs."""
    import torch

    import tkc

    kernel = tkc.compile(EXAMPLE, kernel="attn_fwd", D=64)
    q, o = (torch.randn(1, 4, 128, 64, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    k, v = (torch.randn(1, 2, 128, 64, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    lse = torch.empty(1, 4, 128, device="cuda", dtype=torch.float32)
    with pytest.raises(tkc.TkError, match=r"kernel attn_fwd requires H == HKV \* G \(line 7\), and the arguments "
                                          r"give H = 4 \(from Q \(dim 1\)\), HKV = 2 \(from K \(dim 1\)\)"):
        kernel(q, k, v, o, lse)
    grouped = tkc.compile(EXAMPLE, kernel="attn_fwd", D=64, G=2)
    grouped(q, k, v, o, lse)
    torch.cuda.synchronize()
    want, _ = reference(q, k.repeat_interleave(2, 1), v.repeat_interleave(2, 1), False)
    assert ((o.float() - want).norm() / want.norm()).item() < 1e-2
