"""Variable-length attention forward: tkc's varlen kernel against tkc's dense attention on the
same number of tokens, SDPA on jagged nested tensors (the varlen path torch offers) and SDPA's
cuDNN backend run sequence by sequence.

    python benchmarks/attention_varlen.py [--runs 30] [--d 64,128] [--seed 0]

bf16, H = 16. Each case packs sequences of random lengths head-major ([H, T, D]); TFLOP/s count
4·H·D·Σ nᵢ² (halved for causal). The dense kernel runs B = T // N sequences of N = the mean
length rounded to 128, so both move about the same tokens. Outputs are checked against cuDNN per
sequence first. Times: the median of `--runs` batches of back-to-back launches (timing.median_ms).
Prints a table and writes benchmarks/results/attention-varlen-<date>.json.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import torch
from torch.nn.attention import SDPBackend, sdpa_kernel
from torch.nn.functional import scaled_dot_product_attention as sdpa

import tkc
from timing import median_ms, write_record

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "examples"))
from attention_varlen_ref import tile_table  # noqa: E402

CASES = {
    "8 x 517-4096": (8, 517, 4096),
    "12 x 1-2048": (12, 1, 2048),
    "64 x 128-1024": (64, 128, 1024),
}


def bench(name: str, d: int, causal: bool, runs: int, rng: np.random.Generator) -> dict[str, object]:
    count, low, high = CASES[name]
    h = 16
    lengths = rng.integers(low, high + 1, count)
    cu = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    t = int(cu[-1])
    q, k, v = (torch.randn(h, t, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    o = torch.full_like(q, float("nan"))
    cu_dev = torch.from_numpy(cu).cuda()
    tiles = torch.from_numpy(tile_table(cu, causal=causal)).cuda()
    varlen = tkc.compile(ROOT / "examples" / "attention_varlen.tk", kernel="attn_varlen", D=d, CAUSAL=causal)
    varlen(q, k, v, o, cu_dev, tiles)
    torch.cuda.synchronize()
    pieces = [(q[:, s:e][None], k[:, s:e][None], v[:, s:e][None]) for s, e in zip(cu[:-1], cu[1:])]

    def per_sequence() -> list[torch.Tensor]:
        with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
            return [sdpa(a, b, c, is_causal=causal) for a, b, c in pieces]

    reference = torch.cat([p[0] for p in per_sequence()], dim=1).float()
    rel = ((o.float() - reference).norm() / reference.norm()).item()
    if not rel < 1e-2 or torch.isnan(o).any():
        raise SystemExit(f"tkc varlen attention {name} D={d} causal={causal} is wrong: relative error {rel}")
    # dense tkc attention on about as many tokens
    n = max(128, int(round(t / count / 128)) * 128)
    b = max(1, t // n)
    dense = tkc.compile(ROOT / "examples" / "attention.tk", kernel="attn_fwd", D=d, CAUSAL=causal)
    dq, dk, dv = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
    do, dlse = torch.empty_like(dq), torch.empty(b, h, n, device="cuda", dtype=torch.float32)
    # SDPA on jagged nested tensors: [B, j, H, D] -> [B, H, j, D]
    nested = [torch.nested.nested_tensor([x[:, s:e].transpose(0, 1) for s, e in zip(cu[:-1], cu[1:])],
                                         layout=torch.jagged).transpose(1, 2) for x in (q, k, v)]

    def jagged() -> torch.Tensor:
        return sdpa(*nested, is_causal=causal)

    fns = {"tkc": lambda _: varlen(q, k, v, o, cu_dev, tiles), "tkc_dense": lambda _: dense(dq, dk, dv, do, dlse),
           "cudnn_loop": lambda _: per_sequence()}
    try:
        jagged()
        fns["sdpa_jagged"] = lambda _: jagged()
    except RuntimeError as e:
        print(f"SDPA on jagged tensors does not run here: {str(e).splitlines()[0]}")
    times = median_ms(fns, runs, warmup=3)
    scale = 0.5 if causal else 1.0
    flop = 4.0 * h * d * float(np.sum(lengths.astype(np.float64) ** 2)) * scale
    dense_flop = 4.0 * b * h * n * n * d * scale
    row: dict[str, object] = {"case": name, "lengths": lengths.tolist(), "H": h, "D": d, "causal": causal,
                              "tokens": t, "dense_B": b, "dense_N": n, "tkc_rel_err": rel}
    for key, ms in times.items():
        row[f"{key}_tflops"] = (dense_flop if key == "tkc_dense" else flop) / ms / 1e9
    for key in times:
        if key != "tkc":
            row[f"tkc_over_{key}"] = row["tkc_tflops"] / row[f"{key}_tflops"]
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--d", default="64,128")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = np.random.default_rng(args.seed)
    rows = []
    for name in CASES:
        for d in map(int, args.d.split(",")):
            for causal in (False, True):
                row = bench(name, d, causal, args.runs, rng)
                rows.append(row)
                rates = "  ".join(f"{k[:-7]} {v:6.1f}" for k, v in row.items() if k.endswith("_tflops"))
                print(f"{name:<14} D={d:<4} {'causal' if causal else 'full  '}  {rates} TFLOP/s   "
                      f"tkc/dense {row['tkc_over_tkc_dense']:.3f}", flush=True)
    write_record("attention-varlen", {"benchmark": "varlen attention forward bf16", "runs": args.runs, "rows": rows})


if __name__ == "__main__":
    main()
