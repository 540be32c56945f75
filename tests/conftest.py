"""Every test's compiles verify the IR after each pass (TKC_VERIFY_EACH=1; `tkc compile` by default
verifies at the end of each stage), so a pass that leaves invalid IR is named alone. Session
fixtures are set up before this one (pytest runs higher-scoped fixtures first), so the fuzz pool
(tests/fuzz) compiles as `tkc compile` does by default: a third faster, and what users run."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _verify_each_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TKC_VERIFY_EACH", "1")
