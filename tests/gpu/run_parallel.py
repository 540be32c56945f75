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
import sys
import tempfile
import time
from pathlib import Path

from processes import Processes

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
    start = time.monotonic()
    commands = {str(file): [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "gpu", str(file)]
                for file in files}
    results = Processes(commands, args.jobs, args.timeout, logs).results()
    failed = []
    for file in files:
        result = results[str(file)]
        output = result.stdout + result.stderr
        # exit 5: nothing collected (a module that skips itself where torch is missing)
        status = (f"timed out after {args.timeout:.0f} s" if result.timed_out else "passed" if result.returncode == 0 else
                  "nothing to run" if result.returncode == 5 else f"failed (pytest exit {result.returncode})")
        if status not in ("passed", "nothing to run"):
            failed.append((file, output))
        summary = output.strip().splitlines()[-1:] or [""]
        print(f"{file.name:<40} {status:<28} {result.seconds:6.0f} s  {summary[0][:90]}")
    for file, output in failed:
        print(f"\n===== {file.name} =====\n{output[-6000:]}")
    print(f"{len(files)} files in {time.monotonic() - start:.0f} s, {len(failed)} failed; logs in {logs}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
