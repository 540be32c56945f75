"""fp8 quantisation throughput: examples/fp8_quant.tk's per-row-scaled e4m3 quantise and
dequantise kernels against a device-to-device copy and torch's own quantisation.

    python benchmarks/fp8_quant.py [--runs 50] [--m 262144,1048576,4194304] [--d 128,256] [--bm 64,128]

X is bf16 [M, D]. The quantiser reads X and writes Q (e4m3 [M, D]) and the f32 scales S [M]; the
dequantiser reads Q and S and writes Y (bf16 [M, D]). GB/s counts those bytes read plus written,
the per-launch median of `--runs` samples after warm-up (timing.median_ms: back-to-back batches
between CUDA events, the implementations taking turns). The copy is `y.copy_(x)` of X into a
tensor made by `torch.empty_like(x)` once (2 M D bf16 bytes read plus written), timed in the same
process; `share_of_copy` is a kernel's GB/s over the copy's (the target is 0.8). torch's row
(`torch_*_gbs`) is the same computation in eager torch (several kernels), for scale. Every tkc
output is checked against torch's first. Prints a table and writes JSON to
benchmarks/results/fp8_quant-<date>.json.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import torch

import tkc
from timing import median_ms, write_record

ROOT = Path(__file__).resolve().parents[1]
E4M3_MAX = 448.0


def torch_quant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    xf = x.float()
    scale = xf.abs().amax(dim=1).clamp_min(1e-30) / E4M3_MAX
    return (xf / scale[:, None]).clamp(-E4M3_MAX, E4M3_MAX).to(torch.float8_e4m3fn), scale


def torch_dequant(q: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    return (q.float() * scale[:, None]).to(torch.bfloat16)


def check(m: int, d: int, q: torch.Tensor, s: torch.Tensor, y: torch.Tensor, x: torch.Tensor) -> dict[str, float]:
    """tkc against torch: the scales to f32 rounding, the fp8 codes (a product by the reciprocal
    may land a tie on the other side: allowed for a few elements), the round trip."""
    q_ref, s_ref = torch_quant(x)
    scale_err = ((s - s_ref).abs() / s_ref).max().item()
    codes_differ = (q.view(torch.uint8) != q_ref.view(torch.uint8)).float().mean().item()
    y_ref = torch_dequant(q, s)
    dequant_err = ((y.float() - y_ref.float()).abs().max()).item()
    round_trip = ((y.float() - x.float()).norm() / x.float().norm()).item()
    if not (scale_err < 1e-6 and codes_differ < 1e-3 and dequant_err == 0 and round_trip < 0.05):
        raise SystemExit(f"tkc fp8 M={m} D={d} is wrong: scale error {scale_err}, codes differing {codes_differ}, "
                         f"dequantisation error {dequant_err}, round-trip error {round_trip}")
    return {"scale_rel_err": scale_err, "codes_differing": codes_differ, "round_trip_rel_err": round_trip}


def bench(m: int, d: int, bm: int, runs: int) -> dict[str, object]:
    path = ROOT / "examples" / "fp8_quant.tk"
    quant = tkc.compile(path, kernel="fp8_quant", D=d, BM=bm)
    dequant = tkc.compile(path, kernel="fp8_dequant", D=d, BM=bm)
    x = torch.randn(m, d, device="cuda", dtype=torch.bfloat16)
    q = torch.empty(m, d, device="cuda", dtype=torch.float8_e4m3fn)
    s = torch.empty(m, device="cuda", dtype=torch.float32)
    y = torch.empty_like(x)
    copy = torch.empty_like(x)
    quant(x, q, s)
    dequant(q, s, y)
    torch.cuda.synchronize()
    result: dict[str, object] = {"M": m, "D": d, "BM": bm, **check(m, d, q, s, y, x)}
    quant_bytes = m * d * (2 + 1) + 4 * m
    dequant_bytes = m * d * (1 + 2) + 4 * m
    copy_bytes = 2 * m * d * 2
    timed = {
        "quant": lambda _: quant(x, q, s),
        "dequant": lambda _: dequant(q, s, y),
        "copy": lambda _: copy.copy_(x),
        "torch_quant": lambda _: torch_quant(x),
        "torch_dequant": lambda _: torch_dequant(q, s),
    }
    nbytes = {"quant": quant_bytes, "dequant": dequant_bytes, "copy": copy_bytes,
              "torch_quant": quant_bytes, "torch_dequant": dequant_bytes}
    for name, ms in median_ms(timed, runs, warmup=5).items():
        result[f"{name}_gbs"] = nbytes[name] / ms / 1e6
    for name in ("quant", "dequant"):
        result[f"{name}_share_of_copy"] = result[f"{name}_gbs"] / result["copy_gbs"]  # type: ignore[operator]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--m", default="262144,1048576,4194304")
    parser.add_argument("--d", default="128,256")
    parser.add_argument("--bm", default="64,128")
    args = parser.parse_args()
    rows = []
    for d in map(int, args.d.split(",")):
        for m in map(int, args.m.split(",")):
            for bm in map(int, args.bm.split(",")):
                row = bench(m, d, bm, args.runs)
                rows.append(row)
                print(
                    f"M={m:<8} D={d:<4} BM={bm:<4} quant {row['quant_gbs']:7.0f} GB/s ({row['quant_share_of_copy']:.2f} of copy)  "
                    f"dequant {row['dequant_gbs']:7.0f} GB/s ({row['dequant_share_of_copy']:.2f})  "
                    f"copy {row['copy_gbs']:7.0f}  torch quant {row['torch_quant_gbs']:6.0f} dequant {row['torch_dequant_gbs']:6.0f}",
                    flush=True,
                )
    write_record("fp8_quant", {"benchmark": "fp8 per-row quantise/dequantise (e4m3, bf16 in/out)", "runs": args.runs,
                               "rows": rows})


if __name__ == "__main__":
    main()
