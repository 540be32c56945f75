"""The fuzz tests compile as `tkc compile` does by default, verifying the IR at the end of each
stage (IR a pass leaves invalid is still an internal error, which fails a case): this overrides
tests/conftest.py's TKC_VERIFY_EACH=1, which costs the fuzz runs more than the passes do."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _verify_each_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TKC_VERIFY_EACH", raising=False)
