"""Attention forward throughput: tkc against SDPA's cuDNN and FlashAttention-2 backends.

    python benchmarks/attention.py [--runs 50] [--d 64,128] [--n 1024,4096,16384]

bf16, H = 16, B·N = 32768, causal and not. TFLOP/s count 4·B·H·N²·D (halved for causal), the
per-launch median of `--runs` samples after warm-up, each a back-to-back batch of launches between
CUDA events (timing.median_ms), the implementations taking turns; every output is checked against
the cuDNN result first. Prints a table and writes JSON to benchmarks/results/attention-<date>.json.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.functional import scaled_dot_product_attention as sdpa

import tkc
from plot import plot
from timing import median_ms, write_record

ROOT = Path(__file__).resolve().parents[1]


def backend(kind: SDPBackend, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> Callable[[], torch.Tensor]:
    def run() -> torch.Tensor:
        with sdpa_kernel(kind):
            return sdpa(q, k, v, is_causal=causal)

    return run


def bench(d: int, n: int, causal: bool, runs: int) -> dict[str, float]:
    b, h = 32768 // n, 16
    kernel = tkc.compile(ROOT / "examples" / "attention.tk", kernel="attn_fwd", D=d, CAUSAL=causal)
    q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    o = torch.empty_like(q)
    lse = torch.empty(b, h, n, device="cuda", dtype=torch.float32)
    reference = backend(SDPBackend.CUDNN_ATTENTION, q, k, v, causal)()
    o.fill_(float("nan"))
    kernel(q, k, v, o, lse)
    torch.cuda.synchronize()
    rel = ((o.float() - reference.float()).norm() / reference.float().norm()).item()
    if not rel < 1e-2:
        raise SystemExit(f"tkc attention D={d} N={n} causal={causal} is wrong: relative error {rel}")
    flop = 4.0 * b * h * n * n * d / (2 if causal else 1)
    result = {"B": b, "H": h, "N": n, "D": d, "causal": causal, "tkc_rel_err": rel}
    timed = {
        "tkc": lambda: kernel(q, k, v, o, lse),
        "cudnn": backend(SDPBackend.CUDNN_ATTENTION, q, k, v, causal),
        "fa2": backend(SDPBackend.FLASH_ATTENTION, q, k, v, causal),
    }
    for name, ms in median_ms({name: lambda _, fn=fn: fn() for name, fn in timed.items()}, runs, warmup=5).items():
        result[f"{name}_tflops"] = flop / ms / 1e9
    result["tkc_over_cudnn"] = result["tkc_tflops"] / result["cudnn_tflops"]
    result["tkc_over_fa2"] = result["tkc_tflops"] / result["fa2_tflops"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plot", action="store_true", help="also draw the record as a PNG beside it")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--d", default="64,128")
    parser.add_argument("--n", default="1024,4096,16384")
    args = parser.parse_args()
    rows = []
    for d in map(int, args.d.split(",")):
        for n in map(int, args.n.split(",")):
            for causal in (False, True):
                row = bench(d, n, causal, args.runs)
                rows.append(row)
                print(
                    f"D={d:<4} N={n:<6} {'causal' if causal else 'full  '}  tkc {row['tkc_tflops']:6.1f}  "
                    f"cuDNN {row['cudnn_tflops']:6.1f}  FA2 {row['fa2_tflops']:6.1f} TFLOP/s   "
                    f"tkc/cuDNN {row['tkc_over_cudnn']:.3f}  tkc/FA2 {row['tkc_over_fa2']:.3f}",
                    flush=True,
                )
    record = write_record(
        "attention",
        {
            "benchmark": "attention forward bf16",
            "runs": args.runs,
            "rows": rows,
        },
    )
    if args.plot:
        plot(record)


if __name__ == "__main__":
    main()
