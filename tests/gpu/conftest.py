"""GPU tests run only where torch sees a CUDA device of compute capability 9.0."""

import pytest


def _hopper() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if _hopper():
        return
    skip = pytest.mark.skip(reason="needs a Hopper GPU (sm_90) with torch")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)
