"""Every test's compiles verify the IR after each pass (TKC_VERIFY_EACH=1; `tkc compile` by default
verifies at the end of each stage), so a pass that leaves invalid IR is named alone. The fuzz
tests compile as users do (tests/fuzz/conftest.py overrides this fixture; the fuzz pool, a
session fixture, is set up before any function's fixture anyway)."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _verify_each_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TKC_VERIFY_EACH", "1")
