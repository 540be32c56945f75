"""GPU timing shared by the benchmarks and the autotuner: CUDA events around back-to-back
batches of launches, the median of many.

torch is imported when a measurement starts, so this module imports anywhere.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from typing import Any

BATCH_MS = 0.5
"""GPU time each timed batch should hold, so that the host's launch path stays off the clock."""


def _one_launch_ms(torch: Any, fn: Callable[[int], object]) -> float:
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn(0)
    end.record()
    end.synchronize()
    return float(start.elapsed_time(end))


def median_ms(fns: dict[str, Callable[[int], object]], runs: int, sets: int = 1, warmup: int = 10) -> dict[str, float]:
    """Median time per launch of each function, called with input set i % sets on its i-th call.
    Each timed sample is a batch of back-to-back launches (about BATCH_MS of GPU work, as
    triton.testing.do_bench queues its launches) between two CUDA events, so the queue never
    drains and the events time the GPU, not the host's launch path. The functions take turns
    batch by batch, so clock and temperature drift over the measurement hit all alike."""
    import torch

    for i in range(warmup):
        for fn in fns.values():
            fn(i % sets)
    torch.cuda.synchronize()
    batch = {
        name: max(1, min(32, math.ceil(BATCH_MS / max(_one_launch_ms(torch, fn), 1e-3)))) for name, fn in fns.items()
    }
    events: dict[str, list[tuple[Any, Any]]] = {name: [] for name in fns}
    calls = 0
    for _ in range(runs):
        for name, fn in fns.items():
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(batch[name]):
                fn(calls % sets)
                calls += 1
            end.record()
            events[name].append((start, end))
    torch.cuda.synchronize()
    return {
        name: statistics.median(s.elapsed_time(e) for s, e in pairs) / batch[name] for name, pairs in events.items()
    }
