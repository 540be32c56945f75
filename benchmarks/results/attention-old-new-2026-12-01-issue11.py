"""Old (8682f84) and new PTX of the attention kernels whose PTX changed, in one process."""
import torch, triton
from triton.testing import do_bench
import tkc
from tkc.runtime import load
from tkc.timing import median_ms
for d, tag in ((128, "CAUSAL1"), (64, "D64.CAUSAL1")):
    new = tkc.compile("examples/attention.tk", kernel="attn_fwd", D=d, CAUSAL=1)
    old = load(ptx=open(f".whl/oldptx/examples.attention.attn_fwd.{tag}.ptx").read(), abi=new.abi)
    for n in (1024, 4096, 16384):
        b, h = 32768 // n, 16
        q, k, v = (torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16) for _ in range(3))
        outs = {name: (torch.empty_like(q), torch.empty(b, h, n, device="cuda", dtype=torch.float32)) for name in ("old", "new")}
        fns = {"old": lambda: old(q, k, v, *outs["old"]), "new": lambda: new(q, k, v, *outs["new"])}
        for f in fns.values():
            f()
        torch.cuda.synchronize()
        same = torch.equal(outs["old"][0], outs["new"][0]) and torch.equal(outs["old"][1], outs["new"][1])
        flop = 4.0 * b * h * n * n * d / 2
        batched = median_ms({name: (lambda i, f=f: f()) for name, f in fns.items()}, 50, 1)
        bench = {name: do_bench(f) for name, f in fns.items()}
        print(f"D={d} N={n} causal  identical_outputs={same}  batched TFLOP/s old {flop/batched['old']/1e9:.1f} new {flop/batched['new']/1e9:.1f} new/old {batched['old']/batched['new']:.3f}"
              f"  do_bench old {flop/bench['old']/1e9:.1f} new {flop/bench['new']/1e9:.1f} new/old {bench['old']/bench['new']:.3f}")
