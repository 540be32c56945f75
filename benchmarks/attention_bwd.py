"""Attention backward throughput: tkc (examples/attention_autograd.py: attention_bwd.tk's kernels,
by default and with reduce_dq=True at D = 64) against SDPA's cuDNN and FlashAttention-2 backends, each timed as
`torch.autograd.grad(out, (q, k, v), dO)` on a retained forward graph.

    python benchmarks/attention_bwd.py [--runs 30] [--d 64,128] [--n 1024,4096,16384] [--groups 4,8]

bf16, H = 16, B = 32768 // N, causal and not. TFLOP/s count 2.5 x the forward's 4·B·H·N²·D
(halved for causal). Two timings per implementation, in one process: the median of back-to-back
batches between CUDA events (timing.median_ms, implementations taking turns) and triton's
do_bench (L2 flushed before each call). Every gradient is first checked against the cuDNN one
(FlashAttention-2's where cuDNN has no kernel). --groups adds grouped-query rows (HKV = H / G) for
tkc alone at D = 128, N = 4096, compared with the plain kernel's TFLOP/s. Prints a table and writes
benchmarks/results/attention_bwd-<date>.json, one record per row with tkc_over_cudnn and tkc_over_fa2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.functional import scaled_dot_product_attention as sdpa
from triton.testing import do_bench

from plot import plot
from timing import median_ms, write_record

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from attention_autograd import attention  # noqa: E402

Grad = Callable[[], tuple[torch.Tensor, ...]]


def _grad_fn(forward: Callable[[], torch.Tensor], leaves: tuple[torch.Tensor, ...], d_o: torch.Tensor) -> Grad:
    out = forward()

    def run() -> tuple[torch.Tensor, ...]:
        return torch.autograd.grad(out, leaves, d_o, retain_graph=True)

    return run


def _sdpa(kind: SDPBackend, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> Callable[[], torch.Tensor]:
    def run() -> torch.Tensor:
        with sdpa_kernel(kind):
            return sdpa(q, k, v, is_causal=causal, enable_gqa=k.shape[1] != q.shape[1])

    return run


def _rel(got: tuple[torch.Tensor, ...], want: tuple[torch.Tensor, ...]) -> float:
    return max(((g.float() - w.float()).norm() / w.float().norm()).item() for g, w in zip(got, want, strict=True))


def bench(d: int, n: int, causal: bool, runs: int, group: int = 1, baselines: bool = True) -> dict[str, object]:
    b, h = 32768 // n, 16
    torch.manual_seed(0)
    q = torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    k, v = (torch.randn(b, h // group, n, d, device="cuda", dtype=torch.bfloat16, requires_grad=True) for _ in range(2))
    d_o = torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16)
    leaves = (q, k, v)
    row: dict[str, object] = {"B": b, "H": h, "HKV": h // group, "N": n, "D": d, "causal": causal}
    fns: dict[str, Grad] = {"tkc": _grad_fn(lambda: attention(q, k, v, causal), leaves, d_o)}
    if d == 64:
        fns["tkc_reduce_dq"] = _grad_fn(lambda: attention(q, k, v, causal, reduce_dq=True), leaves, d_o)
    if baselines:
        for name, kind in (("cudnn", SDPBackend.CUDNN_ATTENTION), ("fa2", SDPBackend.FLASH_ATTENTION)):
            try:
                fn = _grad_fn(_sdpa(kind, q, k, v, causal), leaves, d_o)
                fn()
            except RuntimeError as e:  # no kernel of this backend for the shape
                row[f"{name}_unavailable"] = str(e).splitlines()[0]
                continue
            fns[name] = fn
    want = next((fns[name]() for name in ("cudnn", "fa2") if name in fns), None)
    if want is not None:
        row["tkc_rel_err"] = _rel(fns["tkc"](), want)
        if not row["tkc_rel_err"] < 1e-2:
            raise SystemExit(f"tkc backward D={d} N={n} causal={causal} G={group} is wrong: {row}")
    flop = 2.5 * 4.0 * b * h * n * n * d / (2 if causal else 1)
    for name, ms in median_ms({name: lambda _, fn=fn: fn() for name, fn in fns.items()}, runs, warmup=3).items():
        row[f"{name}_tflops"] = flop / ms / 1e9
    for name, fn in fns.items():
        row[f"{name}_tflops_do_bench"] = flop / do_bench(fn, warmup=25, rep=200) / 1e9
    for name in fns:
        if not name.startswith("tkc"):
            row[f"tkc_over_{name}"] = row["tkc_tflops"] / row[f"{name}_tflops"]
            row[f"tkc_over_{name}_do_bench"] = row["tkc_tflops_do_bench"] / row[f"{name}_tflops_do_bench"]
    return row


def _cell(row: dict[str, object], key: str, fmt: str) -> str:
    value = row.get(key)
    return format(value, fmt) if isinstance(value, float) else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--plot", action="store_true", help="also draw the record as a PNG beside it")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--d", default="64,128")
    parser.add_argument("--n", default="1024,4096,16384")
    parser.add_argument("--groups", default="4,8")
    args = parser.parse_args()
    rows = []
    cases = [(d, n, c, 1) for d in map(int, args.d.split(",")) for n in map(int, args.n.split(",")) for c in (False, True)]
    cases += [(128, 4096, False, g) for g in map(int, filter(None, args.groups.split(",")))]
    for d, n, causal, group in cases:
        row = bench(d, n, causal, args.runs, group, baselines=group == 1)
        rows.append(row)
        print(
            f"D={d:<4} N={n:<6} G={group} {'causal' if causal else 'full  '}  tkc {_cell(row, 'tkc_tflops', '6.1f')}"
            f" ({_cell(row, 'tkc_tflops_do_bench', '6.1f')})  cuDNN {_cell(row, 'cudnn_tflops', '6.1f')}"
            f" ({_cell(row, 'cudnn_tflops_do_bench', '6.1f')})  FA2 {_cell(row, 'fa2_tflops', '6.1f')} TFLOP/s  "
            f"tkc/cuDNN {_cell(row, 'tkc_over_cudnn', '.3f')} ({_cell(row, 'tkc_over_cudnn_do_bench', '.3f')})  "
            f"tkc/FA2 {_cell(row, 'tkc_over_fa2', '.3f')}  reduce_dq {_cell(row, 'tkc_reduce_dq_tflops', '6.1f')}",
            flush=True,
        )
    record = write_record("attention_bwd", {"benchmark": "attention backward bf16", "runs": args.runs, "rows": rows})
    if args.plot:
        plot(record)


if __name__ == "__main__":
    main()
