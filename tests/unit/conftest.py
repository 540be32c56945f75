"""Every unit test gets an empty compile cache of its own (tkc.cache), so a result cached by one
test (or by the user's own compiles) never answers another test's compile."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def _own_cache(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    directory = tmp_path_factory.mktemp("tkc-cache")
    monkeypatch.setenv("TKC_CACHE_DIR", str(directory))
    for variable in ("TKC_ALWAYS_COMPILE", "TKC_DUMP_DIR", "TKC_PRINT_AUTOTUNING"):
        monkeypatch.delenv(variable, raising=False)
    return directory
