"""Attention forward throughput: tkc against SDPA's cuDNN and FlashAttention-2 backends.

    python benchmarks/attention.py [--runs 50] [--d 64,128] [--n 1024,2000,4096,4099,16384] [-D NAME=VALUE ...]

bf16, H = 16, B = 32768 // N (B·N = 32768 where N divides it), causal and not; N = 2000 and 4099
are no multiple of the 128-row tiles. TFLOP/s count 4·B·H·N²·D (halved for causal), the per-launch
median of `--runs` samples after warm-up, each a back-to-back batch of launches between CUDA events
(timing.median_ms), the implementations taking turns, and again from replays of CUDA graphs of those launches
(timing.graph_ms, the `_graph` fields); every output is checked against the cuDNN
result first (FlashAttention-2's where SDPA has no cuDNN kernel for the shape: the row then says
why, under cudnn_unavailable). `-D` pins compile-time parameters or annotations of the tkc kernel
(`-D @persistent=1 -D @split_ring=1`), recorded under `params`. Prints a table and writes JSON to
benchmarks/results/attention-<date>.json.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.functional import scaled_dot_product_attention as sdpa

import tkc
from tkc.frontend import parse_define
from plot import plot
from timing import graph_ms, median_ms, write_record

ROOT = Path(__file__).resolve().parents[1]


def backend(kind: SDPBackend, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> Callable[[], torch.Tensor]:
    def run() -> torch.Tensor:
        with sdpa_kernel(kind):
            return sdpa(q, k, v, is_causal=causal)

    return run


def bench(d: int, n: int, causal: bool, runs: int, params: dict[str, int | bool | float]) -> dict[str, object]:
    b, h = 32768 // n, 16
    kernel = tkc.compile(ROOT / "examples" / "attention.tk", kernel="attn_fwd", **{"D": d, "CAUSAL": causal, **params})
    q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    o = torch.empty_like(q)
    lse = torch.empty(b, h, n, device="cuda", dtype=torch.float32)
    result: dict[str, object] = {"B": b, "H": h, "N": n, "D": d, "causal": causal}
    baselines: dict[str, Callable[[], torch.Tensor]] = {}
    outputs: dict[str, torch.Tensor] = {}
    for name, kind in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("fa2", SDPBackend.FLASH_ATTENTION)):
        run = backend(kind, q, k, v, causal)
        try:
            outputs[name] = run()
        except RuntimeError as e:  # SDPA has no kernel of this backend for the shape
            result[f"{name}_unavailable"] = str(e).splitlines()[0]
            continue
        baselines[name] = run
    if not outputs:
        raise SystemExit(f"neither cuDNN nor FlashAttention-2 runs D={d} N={n} causal={causal}: {result}")
    reference = next(iter(outputs.values())).float()
    o.fill_(float("nan"))
    kernel(q, k, v, o, lse)
    torch.cuda.synchronize()
    rel = ((o.float() - reference).norm() / reference.norm()).item()
    if not rel < 1e-2:
        raise SystemExit(f"tkc attention D={d} N={n} causal={causal} is wrong: relative error {rel}")
    flop = 4.0 * b * h * n * n * d / (2 if causal else 1)
    result["tkc_rel_err"] = rel
    timed = {"tkc": lambda: kernel(q, k, v, o, lse), **baselines}
    fns = {name: lambda _, fn=fn: fn() for name, fn in timed.items()}
    for name, ms in median_ms(fns, runs, warmup=5).items():
        result[f"{name}_tflops"] = flop / ms / 1e9
    try:
        for name, ms in graph_ms(fns, runs).items():
            result[f"{name}_tflops_graph"] = flop / ms / 1e9
    except RuntimeError as e:  # a baseline that a CUDA graph cannot capture: the row says so
        result["graph_unavailable"] = str(e).splitlines()[0]
    for name in baselines:
        for suffix in ("", "_graph"):
            if f"tkc_tflops{suffix}" in result and f"{name}_tflops{suffix}" in result:
                result[f"tkc_over_{name}{suffix}"] = result[f"tkc_tflops{suffix}"] / result[f"{name}_tflops{suffix}"]
    return result


def _tflops(row: dict[str, object], name: str) -> str:
    value = row.get(f"{name}_tflops")
    return f"{value:6.1f}" if isinstance(value, float) else "   n/a"


def _ratio(row: dict[str, object], name: str) -> str:
    value = row.get(f"tkc_over_{name}")
    return f"{value:.3f}" if isinstance(value, float) else "  n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plot", action="store_true", help="also draw the record as a PNG beside it")
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--d", default="64,128")
    parser.add_argument("--n", default="1024,2000,4096,4099,16384")
    parser.add_argument("-D", dest="define", action="append", default=[],
                        help="compile-time parameter NAME=VALUE, or @ANNOTATION=VALUE, of the tkc kernel")
    args = parser.parse_args()
    params = dict(parse_define(item) for item in args.define)
    rows = []
    for d in map(int, args.d.split(",")):
        for n in map(int, args.n.split(",")):
            for causal in (False, True):
                row = bench(d, n, causal, args.runs, params)
                rows.append(row)
                print(
                    f"D={d:<4} N={n:<6} {'causal' if causal else 'full  '}  tkc {_tflops(row, 'tkc')}  "
                    f"cuDNN {_tflops(row, 'cudnn')}  FA2 {_tflops(row, 'fa2')} TFLOP/s   "
                    f"tkc/cuDNN {_ratio(row, 'cudnn')}  tkc/FA2 {_ratio(row, 'fa2')}   "
                    f"graphs: tkc/cuDNN {_ratio(row, 'cudnn_graph')}",
                    flush=True,
                )
    record = write_record(
        "attention",
        {
            "benchmark": "attention forward bf16",
            "params": params,
            "runs": args.runs,
            "rows": rows,
        },
    )
    if args.plot:
        plot(record)


if __name__ == "__main__":
    main()
