"""Run the GPU test files side by side: each `tests/gpu/test_*.py` in a pytest process of its
own, JOBS at a time, each under a time limit, then one line per file and the failures' output.

    python tests/gpu/run_parallel.py [--jobs 4] [--timeout 300] [--log-dir DIR] [FILE ...]

The suite is mostly compiling (host CPU), so on a machine with many cores files run faster side by
side than `pytest -m gpu tests/gpu` runs them one after another (the kernels themselves are short,
and a file's own processes keep their CUDA contexts apart). A file that hangs (a TMA mistake hangs
rather than fails) is stopped at its limit and reported, and the others still run. Exits 1 if any
file failed or timed out.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("files", nargs="*", type=Path, help="test files (default: every tests/gpu/test_*.py)")
    parser.add_argument("--jobs", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per file")
    parser.add_argument("--log-dir", type=Path, default=None, help="keep each file's pytest output here")
    args = parser.parse_args()
    files = args.files or sorted(HERE.glob("test_*.py"))
    logs = args.log_dir or Path(tempfile.mkdtemp(prefix="tkc-gpu-tests-"))
    logs.mkdir(parents=True, exist_ok=True)
    pending = list(files)
    running: dict[Path, tuple[subprocess.Popen[bytes], float]] = {}
    results: dict[Path, tuple[str, float]] = {}
    start = time.monotonic()
    while pending or running:
        while pending and len(running) < args.jobs:
            file = pending.pop(0)
            with open(logs / f"{file.stem}.log", "wb") as log:
                process = subprocess.Popen([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "gpu",
                                            str(file)], stdout=log, stderr=subprocess.STDOUT)
            running[file] = (process, time.monotonic())
        for file, (process, began) in list(running.items()):
            elapsed = time.monotonic() - began
            if process.poll() is None and elapsed < args.timeout:
                continue
            if process.poll() is None:
                process.kill()
                process.wait()
                status = f"timed out after {args.timeout:.0f} s"
            else:
                # exit 5: nothing collected (a module that skips itself where torch is missing)
                status = {0: "passed", 5: "nothing to run"}.get(process.returncode,
                                                                 f"failed (pytest exit {process.returncode})")
            results[file] = (status, elapsed)
            del running[file]
        time.sleep(0.2)
    failed = [file for file, (status, _) in results.items() if status not in ("passed", "nothing to run")]
    for file in files:
        status, elapsed = results[file]
        summary = (logs / f"{file.stem}.log").read_text(errors="replace").strip().splitlines()[-1:] or [""]
        print(f"{file.name:<40} {status:<28} {elapsed:6.0f} s  {summary[0][:90]}")
    for file in failed:
        print(f"\n===== {file.name} =====\n" + (logs / f"{file.stem}.log").read_text(errors="replace")[-6000:])
    print(f"{len(files)} files in {time.monotonic() - start:.0f} s, {len(failed)} failed; logs in {logs}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
