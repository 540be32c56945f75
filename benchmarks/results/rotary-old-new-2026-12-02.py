import torch
from triton.testing import do_bench
import tkc
from tkc.runtime import load
from tkc.timing import median_ms
new = tkc.compile("examples/rotary.tk", "rotary")
old = load(ptx=open(".whl/rotary-old.ptx").read(), abi=new.abi)
for b, h, n in ((16, 16, 2048), (4, 32, 8192)):
    d = 128
    x = torch.randn(b, h, n, d, device="cuda", dtype=torch.bfloat16)
    cos, sin = (torch.randn(n, d // 2, device="cuda", dtype=torch.bfloat16) for _ in range(2))
    y1, y2 = torch.empty_like(x), torch.empty_like(x)
    fns = {"old": lambda i: old(x, cos, sin, y1), "new": lambda i: new(x, cos, sin, y2)}
    for f in fns.values(): f(0)
    torch.cuda.synchronize()
    x1, x2 = x[..., : d // 2].float(), x[..., d // 2 :].float()
    ref = torch.cat([x1 * cos.float() - x2 * sin.float(), x2 * cos.float() + x1 * sin.float()], -1)
    err = max(((y.float() - ref).norm() / ref.norm()).item() for y in (y1, y2))
    nbytes = 2 * x.numel() * 2 + 2 * cos.numel() * 2
    t = median_ms(fns, 50, 1)
    bench = {k: do_bench(lambda f=f: f(0)) for k, f in fns.items()}
    print(f"rotary B{b} H{h} N{n} D{d} rel_err {err:.1e}  batched TB/s old {nbytes/t['old']/1e9:.2f} new {nbytes/t['new']/1e9:.2f}"
          f"  do_bench TB/s old {nbytes/bench['old']/1e9:.2f} new {nbytes/bench['new']/1e9:.2f}", flush=True)
