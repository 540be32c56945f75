"""The walk-through kernels' cases: each line of cases.txt is a `tkc run` command line's
arguments (a .tk file under this directory, `-k KERNEL`, `-D NAME=VALUE`, `--size D=N,...`)."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from pathlib import Path

from tkc.frontend import parse_define

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Case:
    file: Path
    kernel: str | None = None
    params: dict[str, int | bool | float] = field(default_factory=dict)
    size: dict[str, int] = field(default_factory=dict)
    argv: tuple[str, ...] = ()
    """The `tkc run` arguments, the file's path absolute."""

    @property
    def name(self) -> str:
        parts = [str(self.file.relative_to(HERE)), *(f"-k {self.kernel}" for _ in [0] if self.kernel)]
        parts += [f"{k}={v}" for k, v in {**self.params, **self.size}.items()]
        return " ".join(parts)


def cases() -> list[Case]:
    found = []
    for line in (HERE / "cases.txt").read_text().splitlines():
        if not line.strip():
            continue
        words = shlex.split(line)
        file, kernel, params, size = HERE / words[0], None, {}, {}
        rest = iter(words[1:])
        for flag in rest:
            value = next(rest)
            if flag == "-k":
                kernel = value
            elif flag == "-D":
                name, number = parse_define(value)
                params[name] = number
            elif flag == "--size":
                size = {d: int(n) for d, n in (item.split("=") for item in value.split(","))}
            else:
                raise ValueError(f"cases.txt: unknown flag {flag} in {line!r}")
        found.append(Case(file, kernel, params, size, (str(file), *words[1:])))
    return found
