"""Shared by the benchmarks: CUDA events around back-to-back batches of launches (median of many;
tkc.timing, which the autotuner uses too), and the JSON record each benchmark writes to
benchmarks/results/."""

from __future__ import annotations

import datetime
import json
from pathlib import Path

import torch

from tkc.timing import BATCH_MS, median_ms  # the autotuner times the same way

__all__ = ["BATCH_MS", "median_ms", "write_record"]


def write_record(kind: str, record: dict[str, object]) -> Path:
    """benchmarks/results/<kind>-<date>.json: the record, with the date and the GPU added."""
    record = {"date": datetime.date.today().isoformat(), "gpu": torch.cuda.get_device_name(), **record}
    out = Path(__file__).resolve().parent / "results" / f"{kind}-{record['date']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(record, indent=2))
    print(f"wrote {out}")
    return out
