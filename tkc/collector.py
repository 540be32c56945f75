"""Python's cyclic garbage collector, paused while tkc compiles.

A compile keeps nearly everything it allocates until it ends (the IR, the modules it imports) and
leaves little cyclic garbage: the peak memory of `tkc compile examples/attention.tk` is the same
with the collector off. Its passes over that growing heap took about 8% of a `tkc compile` (one
full collection during the imports, a dozen of the middle generation during the passes). So the
compilers pause it (`paused()`: `compile_module`, `tkc compile`, `tkc-opt`) and turn it back on
after, where it collects what the compile left.

A console script's compile leaves it off (`resume=False`): the process ends by `os._exit` right
after (tkc.command_line), and the first collection after turning it back on would walk everything
the compile allocated, about 0.03 s of a 0.5 s `tkc compile examples/gemm.tk`.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused(resume: bool = True) -> Iterator[None]:
    """The collector off for the block, back on after if it was on (so pauses nest) and `resume`
    (False: off until the process ends, for one that ends right after the block)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled and resume:
            gc.enable()
