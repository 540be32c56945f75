"""Commands run as processes a few at a time, each under a time limit, their output in files:
the GPU examples' `tkc run` cases (test_examples_gpu.py) and the GPU test files side by side
(run_parallel.py). A TMA mistake hangs rather than fails, and a fault leaves a CUDA context
unusable, so each case gets a process of its own and a limit.

Every process is spawned from the calling thread: spawning from a thread pool failed on the
H200 machine's Python 3.12 (`OSError: [Errno 14] Bad address` from its vfork path).
"""

from __future__ import annotations

import subprocess
import time
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Finished:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool


class Processes:
    """`commands` (by key) run `jobs` at a time, each stopped after `timeout_s`; `logs` holds
    each one's stdout and stderr."""

    def __init__(self, commands: dict[str, list[str]], jobs: int, timeout_s: float, logs: Path) -> None:
        self.pending = dict(commands)
        self.jobs = jobs
        self.timeout_s = timeout_s
        self.logs = logs
        self.running: dict[str, tuple[subprocess.Popen[bytes], Path, float]] = {}
        self.finished: dict[str, Finished] = {}

    def result(self, key: str, command: list[str] | None = None) -> Finished:
        """The outcome of `key`'s command, running others meanwhile; `command` starts a key
        not given at construction."""
        if key not in self.finished and key not in self.running and key not in self.pending:
            assert command is not None, f"no command for {key}"
            self.pending[key] = command
        while key not in self.finished:
            self._step()
        return self.finished[key]

    def results(self) -> dict[str, Finished]:
        """Every command's outcome, once all have finished."""
        while self.pending or self.running:
            self._step()
        return self.finished

    def _step(self) -> None:
        while self.pending and len(self.running) < self.jobs:
            key, command = next(iter(self.pending.items()))
            del self.pending[key]
            log = self.logs / f"run{len(self.finished) + len(self.running)}"
            with open(log.with_suffix(".out"), "wb") as out, open(log.with_suffix(".err"), "wb") as err:
                self.running[key] = (subprocess.Popen(command, stdout=out, stderr=err), log, time.monotonic())
        for key, (process, log, started) in list(self.running.items()):
            seconds = time.monotonic() - started
            timed_out = process.poll() is None and seconds > self.timeout_s
            if process.poll() is None and not timed_out:
                continue
            if timed_out:
                process.kill()
                process.wait()
            del self.running[key]
            note = f"\ntimed out after {self.timeout_s:.0f} s" if timed_out else ""
            self.finished[key] = Finished(process.returncode, log.with_suffix(".out").read_text(errors="replace"),
                                          log.with_suffix(".err").read_text(errors="replace") + note, seconds,
                                          timed_out)
        time.sleep(0.05)
