"""GPU timing shared by the benchmarks and the autotuner: CUDA events around back-to-back
batches of launches, the median of many (median_ms), and the same launches captured in a CUDA
graph and replayed (graph_ms), which takes the host's launch path off the clock for kernels
shorter than it.

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


GRAPH_LAUNCHES = 20
"""Launches of one function captured in each graph graph_ms replays."""


def graph_ms(fns: dict[str, Callable[[int], object]], runs: int, sets: int = 1, warmup: int = 3) -> dict[str, float]:
    """Median time per launch of each function, from replays of a CUDA graph that holds
    GRAPH_LAUNCHES of its launches (input set i % sets on the i-th). A replay is one launch of the
    host's, so a kernel shorter than its host launch path (a small GEMM: about 10 us of Python and
    driver per call) is timed as the GPU runs it, as in a captured training step. The functions
    take turns replay by replay, as in median_ms."""
    import torch

    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):  # torch captures on a side stream; warm up there as well
        for i in range(warmup):
            for fn in fns.values():
                fn(i % sets)
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    graphs = {}
    for name, fn in fns.items():
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=side):  # the stream warmed up: a kernel's scratch is allocated there
            for i in range(GRAPH_LAUNCHES):
                fn(i % sets)
        graphs[name] = graph
    for graph in graphs.values():
        graph.replay()
    events: dict[str, list[tuple[Any, Any]]] = {name: [] for name in fns}
    for _ in range(runs):
        for name, graph in graphs.items():
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            graph.replay()
            end.record()
            events[name].append((start, end))
    torch.cuda.synchronize()
    return {
        name: statistics.median(s.elapsed_time(e) for s, e in pairs) / GRAPH_LAUNCHES
        for name, pairs in events.items()
    }
