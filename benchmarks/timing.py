"""Timing shared by the benchmarks: CUDA events around each launch, median of many."""

from __future__ import annotations

import statistics
from collections.abc import Callable

import torch


def median_ms(fns: dict[str, Callable[[int], object]], runs: int, sets: int = 1, warmup: int = 10) -> dict[str, float]:
    """Median time of each function, called with the input set i % sets of run i. The functions
    take turns run by run, so clock and temperature drift over the measurement hit all alike.
    Launches queue back to back (one synchronize at the end, as triton.testing.do_bench), so the
    events time the GPU's work, not the host's launch path."""
    for i in range(warmup):
        for fn in fns.values():
            fn(i % sets)
    torch.cuda.synchronize()
    events: dict[str, list[tuple[torch.cuda.Event, torch.cuda.Event]]] = {name: [] for name in fns}
    for i in range(runs):
        for name, fn in fns.items():
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn(i % sets)
            end.record()
            events[name].append((start, end))
    torch.cuda.synchronize()
    return {name: statistics.median(s.elapsed_time(e) for s, e in pairs) for name, pairs in events.items()}
