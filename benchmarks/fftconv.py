"""Causal long convolution by FFT: examples/fftconv.tk (FlashFFTConv's Monarch form: an
8192-point FFT as 128- and 64-point DFT matmuls in f16) against torch.fft (rfft, product, irfft
in f32), in one process.

    python benchmarks/fftconv.py [--runs 30] [--b 16] [--h 1024] [--n 1024,2048,4096]

u [B, H, N] f16, one filter of N taps per channel (its spectrum computed once, as a model keeps
it). TFLOP/s count the kernel's matmuls: 16.8 MFLOP per sequence (two 128x128x64 and four
128x64x64 complex-part products each way). Times: median of back-to-back batches
(timing.median_ms) and triton's do_bench; `tkc_over_torch` is torch's time over tkc's. The
output is checked against torch's first. Writes benchmarks/results/fftconv-<date>.json.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import torch

import tkc
from timing import times, write_record

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))
import fftconv_ref  # noqa: E402

FLOP_PER_SEQUENCE = 4 * 2 * 128 * 128 * 64 + 8 * 2 * 128 * 64 * 64


def bench(b: int, h: int, n: int, runs: int) -> dict[str, object]:
    torch.manual_seed(0)
    u = torch.randn(b, h, n, device="cuda", dtype=torch.float16)
    k = torch.randn(h, n, device="cuda") * torch.exp(-torch.arange(n, device="cuda") / (n / 8)) / 10
    spectrum = [torch.from_numpy(s).cuda() for s in fftconv_ref.spectrum(k.cpu().numpy())]
    consts = {name: torch.from_numpy(v).cuda() for name, v in fftconv_ref.constants().items()}
    kernel = tkc.compile(EXAMPLES / "fftconv.tk", kernel="fftconv")
    y = torch.empty_like(u)
    k_f = torch.fft.rfft(k, n=2 * n)

    def tkc_conv() -> None:
        kernel(u.view(b, h, n // 64, 64), consts["F128R"], consts["F128I"], consts["F64R"], consts["F64I"],
               consts["TR"], consts["TI"], *spectrum, y.view(b, h, n // 64, 64))

    def torch_conv() -> torch.Tensor:
        return torch.fft.irfft(torch.fft.rfft(u.float(), n=2 * n) * k_f, n=2 * n)[..., :n]

    want = torch_conv()
    tkc_conv()
    row: dict[str, object] = {"B": b, "H": h, "N": n}
    row["tkc_rel_err"] = rel = ((y.float() - want).norm() / want.norm()).item()
    if not rel < 1e-2:
        raise SystemExit(f"tkc fftconv B={b} H={h} N={n} is wrong: relative error {rel}")
    fns = {"tkc": tkc_conv, "torch": torch_conv}
    row.update(times(fns, runs, over="torch"))
    row["tkc_tflops"] = b * h * FLOP_PER_SEQUENCE / row["tkc_ms"] / 1e9
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--b", type=int, default=16)
    parser.add_argument("--h", type=int, default=1024)
    parser.add_argument("--n", default="1024,2048,4096")
    args = parser.parse_args()
    rows = []
    for n in map(int, args.n.split(",")):
        row = bench(args.b, args.h, n, args.runs)
        rows.append(row)
        print(f"B={args.b} H={args.h} N={n:<5} tkc {row['tkc_ms']:.3f} ms ({row['tkc_ms_do_bench']:.3f}, "
              f"{row['tkc_tflops']:.0f} TFLOP/s)  torch {row['torch_ms']:.3f} ({row['torch_ms_do_bench']:.3f})  "
              f"tkc/torch {row['tkc_over_torch']:.2f}x ({row['tkc_over_torch_do_bench']:.2f}x)", flush=True)
    write_record("fftconv", {"benchmark": "causal FFT convolution f16", "runs": args.runs, "rows": rows})


if __name__ == "__main__":
    main()
