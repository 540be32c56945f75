"""Attention variants against plain attention and FlexAttention, in one process on the GPU.

    python benchmarks/attention_variants.py [--runs 50] [--n 4096,16384] [--window 1024] [--cap 50]
                                            [--pin VARIANT:@NAME=VALUE ...]

bf16, H = 16, D = 128, B = 32768 // N. tkc runs examples/attention.tk (full and causal) and the
variants written with positions and conditions: attention_alibi.tk (scores minus
slope_h |i - j|), attention_window.tk (causal, the last W keys) and attention_softcap.tk
(CAP tanh(scores / CAP)). FlexAttention (torch.nn.attention.flex_attention under
torch.compile) runs the same score_mod / mask_mod (its block mask skips the tiles the window
hides, as tkc's loop bounds do); where it does not compile, the row says why and tkc runs alone.

Every output is first checked against float32 torch math on a batch and two heads (and
FlexAttention's against the same). Times are the per-launch median of `--runs` samples after
warm-up, each a back-to-back batch of launches between CUDA events (timing.median_ms), all
implementations of one shape taking turns. TFLOP/s count 4·D per attended (query, key) pair,
so the window's count is its band's, not N². The ratios the issue asks for: each variant's time
over plain attention's at the same shape (`vs_plain`, >= 0.9 is the target: plain time / variant
time; for the window, TFLOP/s over causal attention's) and tkc over FlexAttention (`vs_flex`).
`--pin softcap:@fma_exp2=2` compiles one tkc variant (plain, causal, alibi, window, softcap) with
an annotation pinned, recorded under `pins`. Prints a table and writes JSON to
benchmarks/results/attention-variants-<date>.json.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable
from pathlib import Path

import torch

import tkc
from timing import median_ms, parse_pins, write_record

ROOT = Path(__file__).resolve().parents[1]
H, D = 16, 128
CHECK_HEADS = (0, H - 1)


def slopes(heads: int) -> torch.Tensor:
    """ALiBi's per-head slope 2^(-8 (h + 1) / H), as attention_alibi.tk computes it."""
    return torch.exp2(-8.0 * torch.arange(1, heads + 1, dtype=torch.float32) / heads).cuda()


def reference(variant: str, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, head: int, window: int,
              cap: float) -> torch.Tensor:
    """One head of one batch in float32 torch math."""
    q, k, v = (x.float() for x in (q, k, v))
    n = q.shape[0]
    s = q @ k.T / math.sqrt(D)
    i = torch.arange(n, device=q.device)
    gap = (i[:, None] - i[None, :]).float()
    if variant == "alibi":
        s = s - slopes(H)[head] * gap.abs()
    elif variant == "window":
        s = s.masked_fill(~((gap >= 0) & (gap < window)), -math.inf)
    elif variant == "softcap":
        s = cap * torch.tanh(s / cap)
    elif variant == "causal":
        s = s.masked_fill(gap < 0, -math.inf)
    return torch.softmax(s, dim=-1) @ v


def attended_pairs(variant: str, n: int, window: int) -> float:
    """(query, key) pairs each (batch, head) computes: the band for the window, half for causal."""
    if variant == "window":
        w = min(window, n)
        return w * (w + 1) / 2 + (n - w) * w
    if variant == "causal":
        return n * (n + 1) / 2
    return float(n) * n


VARIANTS = ("plain", "causal", "alibi", "window", "softcap")


def tkc_kernels(window: int, cap: float, pins: dict[str, dict[str, int | bool | float]]) -> dict[str, tkc.CompiledKernel]:
    examples = ROOT / "examples"
    sources = {
        "plain": ("attention.tk", "attn_fwd", {}),
        "causal": ("attention.tk", "attn_fwd", {"CAUSAL": True}),
        "alibi": ("attention_alibi.tk", "attn_alibi", {}),
        "window": ("attention_window.tk", "attn_window", {"W": window}),
        "softcap": ("attention_softcap.tk", "attn_softcap", {"CAP": cap}),
    }
    return {
        variant: tkc.compile(examples / file, kernel=kernel, **{"D": D, **params, **pins.get(variant, {})})
        for variant, (file, kernel, params) in sources.items()
    }


def flex_functions(n: int, window: int, cap: float) -> tuple[dict[str, Callable[..., torch.Tensor]], str | None]:
    """FlexAttention with each variant's score_mod / mask_mod, compiled; ({}, why) if it cannot be."""
    try:
        from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    except ImportError as e:
        return {}, f"torch.nn.attention.flex_attention is not available: {e}"
    compiled = torch.compile(flex_attention, dynamic=False)
    alibi_slopes = slopes(H)

    def alibi(score: torch.Tensor, b: torch.Tensor, h: torch.Tensor, q_idx: torch.Tensor,
              kv_idx: torch.Tensor) -> torch.Tensor:
        return score - alibi_slopes[h] * (q_idx - kv_idx).abs()

    def softcap(score: torch.Tensor, b: torch.Tensor, h: torch.Tensor, q_idx: torch.Tensor,
                kv_idx: torch.Tensor) -> torch.Tensor:
        return cap * torch.tanh(score / cap)

    def in_window(b: torch.Tensor, h: torch.Tensor, q_idx: torch.Tensor, kv_idx: torch.Tensor) -> torch.Tensor:
        return (q_idx >= kv_idx) & (q_idx - kv_idx < window)

    def causal(b: torch.Tensor, h: torch.Tensor, q_idx: torch.Tensor, kv_idx: torch.Tensor) -> torch.Tensor:
        return q_idx >= kv_idx

    try:
        window_mask = create_block_mask(in_window, None, None, n, n, device="cuda")
        causal_mask = create_block_mask(causal, None, None, n, n, device="cuda")
    except Exception as e:  # noqa: BLE001 - any failure means: no FlexAttention on this device
        return {}, f"create_block_mask failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
    return {
        "plain": lambda q, k, v: compiled(q, k, v),
        "causal": lambda q, k, v: compiled(q, k, v, block_mask=causal_mask),
        "alibi": lambda q, k, v: compiled(q, k, v, score_mod=alibi),
        "window": lambda q, k, v: compiled(q, k, v, block_mask=window_mask),
        "softcap": lambda q, k, v: compiled(q, k, v, score_mod=softcap),
    }, None


def check(name: str, variant: str, out: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
          window: int, cap: float) -> float:
    worst = 0.0
    for head in CHECK_HEADS:
        want = reference(variant, q[0, head], k[0, head], v[0, head], head, window, cap)
        got = out[0, head].float()
        worst = max(worst, ((got - want).norm() / want.norm()).item())
    if not worst < 1e-2:
        raise SystemExit(f"{name} {variant} N={q.shape[2]} is wrong: relative error {worst:.3g}")
    return worst


def bench(n: int, runs: int, window: int, cap: float, kernels: dict[str, tkc.CompiledKernel]) -> dict[str, object]:
    b = 32768 // n
    q, k, v = (torch.randn(b, H, n, D, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    o = torch.empty_like(q)
    lse = torch.empty(b, H, n, device="cuda", dtype=torch.float32)
    row: dict[str, object] = {"B": b, "H": H, "N": n, "D": D, "window": window, "cap": cap}
    timed: dict[str, Callable[[int], object]] = {}
    for variant, kernel in kernels.items():
        o.fill_(float("nan"))
        kernel(q, k, v, o, lse)
        torch.cuda.synchronize()
        row[f"tkc_{variant}_rel_err"] = check("tkc", variant, o, q, k, v, window, cap)
        timed[f"tkc_{variant}"] = lambda _, kernel=kernel: kernel(q, k, v, o, lse)
    flex, why = flex_functions(n, window, cap)
    for variant, fn in flex.items():
        try:
            out = fn(q, k, v)
            torch.cuda.synchronize()
        except Exception as e:  # noqa: BLE001 - a compile failure skips FlexAttention, with the reason
            why = f"flex_attention ({variant}) failed: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
            timed = {name: f for name, f in timed.items() if not name.startswith("flex_")}
            break
        row[f"flex_{variant}_rel_err"] = check("flex", variant, out, q, k, v, window, cap)
        timed[f"flex_{variant}"] = lambda _, fn=fn: fn(q, k, v)
    if why is not None:
        row["flex_unavailable"] = why
        print(f"FlexAttention skipped: {why}", flush=True)
    for name, ms in median_ms(timed, runs, warmup=5).items():
        variant = name.split("_", 1)[1]
        row[f"{name}_ms"] = ms
        row[f"{name}_tflops"] = 4.0 * D * b * H * attended_pairs(variant, n, window) / ms / 1e9
    for variant in ("alibi", "window", "softcap"):
        # plain's time over the variant's; the window against causal attention's rate
        baseline = "causal" if variant == "window" else "plain"
        row[f"tkc_{variant}_vs_plain"] = row[f"tkc_{variant}_tflops"] / row[f"tkc_{baseline}_tflops"]
        if f"flex_{variant}_ms" in row:
            row[f"tkc_{variant}_vs_flex"] = row[f"flex_{variant}_ms"] / row[f"tkc_{variant}_ms"]
    return row


def _cell(row: dict[str, object], key: str, spec: str) -> str:
    value = row.get(key)
    return format(value, spec) if isinstance(value, float) else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--n", default="4096,16384")
    parser.add_argument("--window", type=int, default=1024)
    parser.add_argument("--cap", type=float, default=50.0)
    parser.add_argument("--pin", action="append", default=[], help="VARIANT:@NAME=VALUE, an annotation of one tkc variant")
    args = parser.parse_args()
    pins = parse_pins(args.pin, VARIANTS, parser)
    kernels = tkc_kernels(args.window, args.cap, pins)
    rows = []
    for n in map(int, args.n.split(",")):
        row = bench(n, args.runs, args.window, args.cap, kernels)
        rows.append(row)
        for variant in VARIANTS:
            print(
                f"N={n:<6} {variant:<8} tkc {_cell(row, f'tkc_{variant}_ms', '8.3f')} ms "
                f"{_cell(row, f'tkc_{variant}_tflops', '6.1f')} TFLOP/s   flex {_cell(row, f'flex_{variant}_ms', '8.3f')} ms "
                f"{_cell(row, f'flex_{variant}_tflops', '6.1f')} TFLOP/s   "
                f"vs plain {_cell(row, f'tkc_{variant}_vs_plain', '.3f')}  vs flex {_cell(row, f'tkc_{variant}_vs_flex', '.3f')}",
                flush=True,
            )
    write_record("attention-variants", {"benchmark": "attention variants forward bf16", "pins": pins, "runs": args.runs,
                                        "rows": rows})


if __name__ == "__main__":
    main()
