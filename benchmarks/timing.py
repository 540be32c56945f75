"""Shared by the benchmarks: CUDA events around back-to-back batches of launches (median of many;
tkc.timing, which the autotuner uses too), and the JSON record each benchmark writes to
benchmarks/results/."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import torch

import argparse
from collections.abc import Callable, Iterable

from tkc.frontend import parse_define
from tkc.timing import BATCH_MS, graph_ms, median_ms  # the autotuner times the same way

__all__ = ["BATCH_MS", "graph_ms", "median_ms", "times", "write_record"]


def times(fns: dict[str, Callable[[], object]], runs: int, over: str) -> dict[str, float]:
    """Both timings of each implementation, in one process: `NAME_ms`, the median of batches
    (median_ms, the implementations taking turns), and `NAME_ms_do_bench`, triton's do_bench (L2
    flushed before each call); and for each tkc implementation `NAME_over_OVER` (+ `_do_bench`),
    OVER's time over its own (above 1: tkc is faster)."""
    from triton.testing import do_bench

    batched = median_ms({name: lambda _, fn=fn: fn() for name, fn in fns.items()}, runs, warmup=5)
    row = {f"{name}_ms": ms for name, ms in batched.items()}
    for name, fn in fns.items():
        row[f"{name}_ms_do_bench"] = do_bench(fn, warmup=25, rep=200)
    for name in (n for n in fns if n.startswith("tkc")):
        for suffix in ("", "_do_bench"):
            row[f"{name}_over_{over}{suffix}"] = row[f"{over}_ms{suffix}"] / row[f"{name}_ms{suffix}"]
    return row


def write_record(kind: str, record: dict[str, object]) -> Path:
    """benchmarks/results/<kind>-<date>.json: the record, with the date and the GPU added."""
    record = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(), **record}
    out = Path(__file__).resolve().parent / "results" / f"{kind}-{record['date']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=2))
    print(f"wrote {out}")
    return out


def parse_pins(items: Iterable[str], names: Iterable[str], parser: argparse.ArgumentParser) -> dict[str, dict[str, int | bool | float]]:
    """`--pin NAME:PARAM=VALUE` items (PARAM a compile-time parameter or an @annotation) as
    {NAME: {PARAM: VALUE}}, NAME one of `names` (else the parser's usage error)."""
    known = list(names)
    pins: dict[str, dict[str, int | bool | float]] = {}
    for item in items:
        name, _, define = item.partition(":")
        if name not in known:
            parser.error(f"--pin {item}: {name!r} is none of {', '.join(known)}")
        param, value = parse_define(define)
        pins.setdefault(name, {})[param] = value
    return pins
