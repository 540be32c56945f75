"""The progress line of long work (`tkc tune`'s trials, `tkc run --interpret`'s loop iterations):
`[done/total] what`, on stderr.

On a terminal the line is rewritten in place (and ended when the work is done); elsewhere each
update is a line of its own, and only when asked (`force`): a test harness or a pipe reading
stderr gets nothing it did not ask for. `delay` keeps quick work quiet (nothing is shown until
it has run that long); `interval` throttles the updates on a terminal, `log_interval` the lines
elsewhere (default: the same).
"""

from __future__ import annotations

import sys
import time
from typing import IO


class ProgressLine:
    def __init__(self, stream: IO[str] | None = None, *, delay: float = 0.0, interval: float = 0.0,
                 log_interval: float | None = None, force: bool = False, quiet: bool = False):
        self.stream = stream or sys.stderr
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self.enabled = not quiet and (self.tty or force)
        self.delay = delay
        self.interval = interval if self.tty or log_interval is None else log_interval
        self._started = time.monotonic()
        self._shown = -float("inf")
        self._open = False  # a line rewritten in place and not ended yet

    def show(self, done: int, total: int, what: str) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        finished = done >= total
        if now - self._started < self.delay or (not finished and now - self._shown < self.interval):
            return
        self._shown = now
        line = f"[{done}/{total}] {what}"
        if self.tty:
            self.stream.write(f"\r\x1b[K{line}" + ("\n" if finished else ""))
            self._open = not finished
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End a line left open in place (work that stopped short of its total)."""
        if self._open:
            self.stream.write("\n")
            self.stream.flush()
            self._open = False
