"""Attention as a differentiable PyTorch function built from tkc kernels: the forward is
attention.tk's attn_fwd (O and the log-sum-exp LSE), the backward attention_bwd.tk's kernels.

    from attention_autograd import attention
    o = attention(q, k, v, causal=True)     # q [B, H, N, D], k and v [B, H / G, N, D], bf16, CUDA
    o.float().square().sum().backward()     # q.grad, k.grad, v.grad from the tkc backward

The backward is attn_bwd_delta, then attn_bwd_dkdv and attn_bwd_dq side by side on two streams,
in which one block sums each gradient element in a fixed order, so gradients are
bit-reproducible. `reduce_dq=True` (D = 64:
at D = 128 the registers do not hold dK, dV and a share of dQ at once) takes attn_bwd_prep and
attn_bwd instead, which add each key block's share of dQ into an f32 buffer by TMA reduce-add
(five matmuls instead of seven, blocks adding in no fixed order); on the H200 it measured
0.6x the three kernels' speed (benchmarks/attention_bwd.py), so it is not the default.
Each kernel is compiled once per (kernel, D, G, causal) and cached on disk by tkc.compile.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import torch

import tkc

HERE = Path(__file__).resolve().parent
HEAD_DIMS = (64, 128)
REDUCE_DQ_D = (64,)
"""Head dims whose backward can add dQ in the dK/dV kernel (attn_bwd)."""


CONCURRENT_DQ = True
"""Run attn_bwd_dq beside attn_bwd_dkdv on a second stream (False: one after the other)."""


@cache
def _side_stream(device: torch.device) -> torch.cuda.Stream:
    return torch.cuda.Stream(device)


@cache
def _kernel(file: str, name: str, **params: Any) -> tkc.CompiledKernel:
    return tkc.compile(HERE / file, kernel=name, **params)


def _tma_rows(rows: torch.Tensor) -> torch.Tensor:
    """`rows` [B, H, N] f32 as the backward kernels read it, by TMA, whose rows must be whole
    16-byte units: where N is not a multiple of 4, a view into a buffer with padded rows."""
    n = rows.shape[-1]
    if n % 4 == 0:
        return rows
    padded = torch.empty(*rows.shape[:-1], -(-n // 4) * 4, device=rows.device, dtype=rows.dtype)[..., :n]
    return padded.copy_(rows)


def _check(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> int:
    if not (q.is_cuda and q.dtype == k.dtype == v.dtype == torch.bfloat16 and q.dim() == k.dim() == v.dim() == 4):
        raise ValueError("attention takes bf16 CUDA tensors [B, H, N, D] (q) and [B, H / G, N, D] (k, v)")
    b, h, n, d = q.shape
    if k.shape != v.shape or k.shape[0] != b or k.shape[2:] != (n, d) or h % k.shape[1]:
        raise ValueError(f"q {list(q.shape)}, k {list(k.shape)}, v {list(v.shape)}: k and v must be "
                         "[B, H / G, N, D] for q [B, H, N, D]")
    if d not in HEAD_DIMS:
        raise ValueError(f"head dim {d}: the tkc attention kernels take D = 64 or 128")
    return h // k.shape[1]


class Attention(torch.autograd.Function):
    @staticmethod
    def forward(ctx: Any, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool,
                reduce_dq: bool) -> torch.Tensor:
        group = _check(q, k, v)
        if reduce_dq and q.shape[-1] not in REDUCE_DQ_D:
            raise ValueError(f"reduce_dq takes head dims {REDUCE_DQ_D}, not {q.shape[-1]}")
        q, k, v = q.contiguous(), k.contiguous(), v.contiguous()
        d = q.shape[-1]
        o = torch.empty_like(q)
        lse = torch.empty(q.shape[:-1], device=q.device, dtype=torch.float32)
        _kernel("attention.tk", "attn_fwd", D=d, G=group, CAUSAL=causal)(q, k, v, o, lse)
        ctx.save_for_backward(q, k, v, o, lse)
        ctx.causal, ctx.group, ctx.reduce_dq = causal, group, reduce_dq
        return o

    @staticmethod
    def backward(ctx: Any, d_o: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, None, None]:
        q, k, v, o, lse = ctx.saved_tensors
        d_o = d_o.to(torch.bfloat16).contiguous()
        d, causal, group = q.shape[-1], ctx.causal, ctx.group
        delta = torch.empty_like(lse)
        dk, dv = torch.empty_like(k), torch.empty_like(v)
        if ctx.reduce_dq:
            dq_sum = torch.empty(q.shape, device=q.device, dtype=torch.float32)
            _kernel("attention_bwd.tk", "attn_bwd_prep", D=d)(o, d_o, delta, dq_sum)
            lse, delta = _tma_rows(lse), _tma_rows(delta)
            _kernel("attention_bwd.tk", "attn_bwd", D=d, G=group, CAUSAL=causal)(q, k, v, d_o, lse, delta, dq_sum, dk, dv)
            return dq_sum.to(torch.bfloat16), dk, dv, None, None
        _kernel("attention_bwd.tk", "attn_bwd_delta", D=d)(o, d_o, delta)
        lse, delta = _tma_rows(lse), _tma_rows(delta)
        dq = torch.empty_like(q)
        dkdv = _kernel("attention_bwd.tk", "attn_bwd_dkdv", D=d, G=group, CAUSAL=causal)
        dq_kernel = _kernel("attention_bwd.tk", "attn_bwd_dq", D=d, G=group, CAUSAL=causal)
        if not CONCURRENT_DQ:
            dkdv(q, k, v, d_o, lse, delta, dk, dv)
            dq_kernel(q, k, v, d_o, lse, delta, dq)
            return dq, dk, dv, None, None
        # dK/dV and dQ read the same inputs and write different outputs: dQ runs on a side stream,
        # so its blocks fill the SMs that dK/dV's last wave leaves idle (H100, batched: 1.01-1.03x
        # the whole backward at B*N 32768 H16, D 64/128, N 1024-16384; the same bits)
        main, side = torch.cuda.current_stream(q.device), _side_stream(q.device)
        side.wait_stream(main)
        dkdv(q, k, v, d_o, lse, delta, dk, dv)
        with torch.cuda.stream(side):
            dq_kernel(q, k, v, d_o, lse, delta, dq)
        main.wait_stream(side)
        return dq, dk, dv, None, None


def attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool = False,
              reduce_dq: bool = False) -> torch.Tensor:
    """softmax(q k^T / sqrt(D)) v per head (query head h reads key head h / G), differentiable;
    `reduce_dq`: the backward adds dQ by TMA reduce-add (D = 64; not bit-reproducible)."""
    return Attention.apply(q, k, v, causal, reduce_dq)
