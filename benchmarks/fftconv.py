"""Causal long convolution by FFT: examples/fftconv.tk (FlashFFTConv's Monarch form: an FFT of
ROWS x COLS >= 2N points as DFT matmuls in f16, two sequences of a channel per complex FFT)
against torch.fft (rfft, product, irfft in f32, 2N points), in one process.

    python benchmarks/fftconv.py [--runs 30] [--b 16] [--h 1024] [--n 1024,2048,4096] [-D NAME=VALUE ...]

u [B, H, N] f16 (B even), one filter of N taps per channel (its spectrum computed once, as a
model keeps it). The FFT is the smallest the example takes (fftconv_ref.fft_shape: 2048 points
as 64 x 32 at N = 1024, 64 x 64 at 2048, 128 x 64 at 4096). TFLOP/s count the kernel's matmuls:
per pair of sequences, 8 ROWS x ROWS x COLS and 8 ROWS x COLS x COLS real products (forward and
inverse, each a complex DFT along rows and one along columns), 8 ROWS COLS (ROWS + COLS) flops
per sequence. Times: median of back-to-back batches (timing.median_ms), CUDA-graph replay and
triton's do_bench; `tkc_over_torch` is torch's time over tkc's. The output is checked against
torch's first. `-D` pins a compile-time parameter or annotation of the kernel (ROWS and COLS
too), recorded under `params`. Writes benchmarks/results/fftconv-<date>.json.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

import tkc
from tkc.frontend import parse_define
from timing import graph_ms, times, write_record

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))
import fftconv_ref  # noqa: E402



def bench(b: int, h: int, n: int, runs: int, params: dict[str, int | bool | float]) -> dict[str, object]:
    torch.manual_seed(0)
    rows, cols = fftconv_ref.fft_shape(n)
    params = {"ROWS": rows, "COLS": cols, **params}
    rows, cols = int(params["ROWS"]), int(params["COLS"])
    u = torch.randn(b, h, n, device="cuda", dtype=torch.float16)
    k = torch.randn(h, n, device="cuda") * torch.exp(-torch.arange(n, device="cuda") / (n / 8)) / 10
    spectrum = [torch.from_numpy(s).cuda() for s in fftconv_ref.spectrum(k.cpu().numpy(), rows, cols)]
    consts = {name: torch.from_numpy(v).cuda() for name, v in fftconv_ref.constants(rows, cols).items()}
    kernel = tkc.compile(EXAMPLES / "fftconv.tk", kernel="fftconv", **params)
    y = torch.empty_like(u)
    k_f = torch.fft.rfft(k, n=2 * n)
    pairs = (b // 2, 2, h, n // cols, cols)

    def tkc_conv() -> None:
        kernel(u.view(pairs), consts["FRR"], consts["FRI"], consts["FCR"], consts["FCI"], consts["TR"], consts["TI"],
               *spectrum, y.view(pairs))

    def torch_conv() -> torch.Tensor:
        return torch.fft.irfft(torch.fft.rfft(u.float(), n=2 * n) * k_f, n=2 * n)[..., :n]

    want = torch_conv()
    tkc_conv()
    row: dict[str, object] = {"B": b, "H": h, "N": n, "ROWS": rows, "COLS": cols}
    row["tkc_rel_err"] = rel = ((y.float() - want).norm() / want.norm()).item()
    if not rel < 1e-2:
        raise SystemExit(f"tkc fftconv B={b} H={h} N={n} is wrong: relative error {rel}")
    fns = {"tkc": tkc_conv, "torch": torch_conv}
    row.update(times(fns, runs, over="torch"))
    graphs = graph_ms({name: lambda _, fn=fn: fn() for name, fn in fns.items()}, runs)
    row.update({f"{name}_ms_graph": ms for name, ms in graphs.items()})
    row["tkc_over_torch_graph"] = graphs["torch"] / graphs["tkc"]
    row["tkc_tflops"] = b * h * 8 * rows * cols * (rows + cols) / row["tkc_ms"] / 1e9
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--b", type=int, default=16)
    parser.add_argument("--h", type=int, default=1024)
    parser.add_argument("--n", default="1024,2048,4096")
    parser.add_argument("-D", dest="define", action="append", default=[],
                        help="compile-time parameter NAME=VALUE, or @ANNOTATION=VALUE, of the tkc kernel")
    args = parser.parse_args()
    if args.b % 2:
        parser.error(f"--b {args.b}: the kernel takes sequences in pairs, so B is even")
    params = dict(parse_define(item) for item in args.define)
    rows = []
    for n in map(int, args.n.split(",")):
        row = bench(args.b, args.h, n, args.runs, params)
        rows.append(row)
        print(f"B={args.b} H={args.h} N={n:<5} tkc {row['tkc_ms']:.3f} ms ({row['tkc_ms_do_bench']:.3f}, "
              f"{row['tkc_tflops']:.0f} TFLOP/s)  torch {row['torch_ms']:.3f} ({row['torch_ms_do_bench']:.3f})  "
              f"tkc/torch {row['tkc_over_torch']:.2f}x ({row['tkc_over_torch_do_bench']:.2f}x, graphs "
              f"{row['tkc_over_torch_graph']:.2f}x)  FFT {row['ROWS']}x{row['COLS']}", flush=True)
    write_record("fftconv", {"benchmark": "causal FFT convolution f16", "params": params, "runs": args.runs,
                             "rows": rows})


if __name__ == "__main__":
    main()
