"""1000^3 (and neighbours) GEMM: tkc configs vs cuBLAS, graphs and do_bench, plus host launch time."""
import sys, time, json, os
import torch
from triton.testing import do_bench
import tkc
from tkc.timing import graph_ms, median_ms

KERNEL = os.environ.get("KERNEL", "gemm")
SRC = f"examples/{KERNEL}.tk"
CONFIGS = [
    {}, {"BN": 128}, {"BM": 64, "BN": 128}, {"BM": 64, "BN": 64}, {"BM": 128, "BN": 64},
    {"BN": 128, "@stream_k": 1}, {"@stream_k": 1}, {"BM": 64, "BN": 128, "@stream_k": 1},
    {"BM": 64, "BN": 256}, {"BM": 64, "BN": 128, "BK": 128}, {"BN": 128, "BK": 128},
]
import os
if os.environ.get("CONFIGS"): CONFIGS = json.loads(os.environ["CONFIGS"])
shapes = [tuple(map(int, s.split("x"))) for s in (sys.argv[1] if len(sys.argv) > 1 else "1000x1000x1000").split(",")]
rows = []
for m, n, k in shapes:
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16); b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
    bT = b.T.contiguous(); barg = bT if KERNEL == "gemm_abt" else b
    c = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
    ref = a.float() @ b.float()
    flop = 2.0 * m * n * k
    fns = {"cublas": (lambda i: torch.matmul(a, bT.T, out=c)) if KERNEL == "gemm_abt" else (lambda i: torch.matmul(a, b, out=c))}
    for cfg in CONFIGS:
        name = " ".join(f"{k_}={v}" for k_, v in cfg.items()) or "default"
        try:
            ker = tkc.compile(SRC, kernel=KERNEL, **cfg)
            out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
            ker(a, barg, out); torch.cuda.synchronize()
            rel = ((out.float() - ref).norm() / ref.norm()).item()
            if not rel < 1e-2:
                print(name, "WRONG", rel); continue
            fns[name] = (lambda i, ker=ker: ker(a, barg, c))
        except Exception as e:
            print(name, "failed:", str(e)[:300]); continue
    g = graph_ms(fns, 100)
    bt = median_ms(fns, 100)
    db = {nm: do_bench(lambda fn=fn: fn(0), warmup=25, rep=200) for nm, fn in fns.items()}
    for nm, fn in fns.items():
        torch.cuda.synchronize(); t0 = time.perf_counter()
        for _ in range(200): fn(0)
        host = (time.perf_counter() - t0) / 200 * 1e6; torch.cuda.synchronize()
        row = dict(shape=f"{m}x{n}x{k}", cfg=nm, graph_us=g[nm]*1e3, batched_us=bt[nm]*1e3, do_bench_us=db[nm]*1e3, host_us=host,
                   over_graph=g["cublas"]/g[nm], over_batched=bt["cublas"]/bt[nm], over_do_bench=db["cublas"]/db[nm])
        rows.append(row)
        print(f"{row['shape']:>16} {nm:<34} graph {row['graph_us']:7.2f} us ({row['over_graph']:.3f})  batched {row['batched_us']:7.2f} ({row['over_batched']:.3f})  do_bench {row['do_bench_us']:7.2f} ({row['over_do_bench']:.3f})  host {host:6.2f} us", flush=True)
import os
json.dump(rows, open(os.path.join(os.environ.get("OUT", "."), f"g-{KERNEL}-{time.time():.0f}.json"), "w"), indent=1)
