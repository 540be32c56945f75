"""Bar charts of benchmark records: TFLOP/s of tkc and each baseline, one group of bars per row,
written as a PNG beside the JSON (matplotlib: `pip install -e '.[plot]'`).

    python benchmarks/plot.py benchmarks/results/gemm-2026-12-01.json [...]
    python benchmarks/gemm.py --plot          # the same, for the record it just wrote
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

MEASURED = ("_tflops", "_rel_err", "_over_", "_unavailable")
"""Row keys that hold a measurement (or why a baseline has none); every other key names the row
(a shape, a flag)."""


def row_label(row: dict[str, object]) -> str:
    named = [(k, v) for k, v in row.items() if not any(part in k for part in MEASURED)]
    return " ".join(k if v is True else f"not {k}" if v is False else f"{k}={v}" for k, v in named)


def plot(record_path: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt

    record = json.loads(record_path.read_text())
    rows = record["rows"]
    implementations = list(dict.fromkeys(k.removesuffix("_tflops") for row in rows for k in row if k.endswith("_tflops")))
    implementations.sort(key=lambda name: name != "tkc")  # tkc's bar first in every group
    width = 0.8 / len(implementations)
    figure, axes = plt.subplots(figsize=(max(6.0, 1.1 * len(rows)), 4.5))
    for i, name in enumerate(implementations):
        # a baseline that has no kernel for a row's shape gets no bar there (NaN draws nothing)
        heights = [row.get(f"{name}_tflops", float("nan")) for row in rows]
        axes.bar([r + i * width for r in range(len(rows))], heights, width, label=name)
    axes.set_xticks([r + width * (len(implementations) - 1) / 2 for r in range(len(rows))])
    axes.set_xticklabels([row_label(row) for row in rows], rotation=30, ha="right", fontsize=8)
    axes.set_ylabel("TFLOP/s")
    axes.set_title(f"{record['benchmark']} on {record['gpu']}, {record['date']}")
    axes.legend()
    figure.tight_layout()
    out = record_path.with_suffix(".png")
    figure.savefig(out, dpi=110)
    plt.close(figure)
    print(f"wrote {out}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("records", nargs="+", type=Path)
    for record in parser.parse_args().records:
        plot(record)


if __name__ == "__main__":
    main()
