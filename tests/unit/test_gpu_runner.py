"""tests/gpu/run_parallel.py: files side by side, each under its limit; one that fails or hangs
makes the run fail and is named with its output, the others still run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

RUNNER = Path(__file__).resolve().parents[2] / "tests" / "gpu" / "run_parallel.py"


def test_runner_reports_each_file_and_fails_on_a_failure_or_a_hang(tmp_path: Path) -> None:
    bodies = {
        "test_good.py": "def test_ok():\n    pass\n",
        "test_bad.py": "def test_wrong():\n    assert 1 == 2, 'BAD-MARKER'\n",
        "test_hang.py": "import time\n\ndef test_forever():\n    time.sleep(60)\n",
        "test_empty.py": "import pytest\n\npytest.importorskip('no_such_module_here')\n",
    }
    for name, body in bodies.items():
        (tmp_path / name).write_text("import pytest\n\npytestmark = pytest.mark.gpu\n\n" + body)
    files = [str(tmp_path / name) for name in bodies]
    result = subprocess.run([sys.executable, str(RUNNER), "--jobs", "4", "--timeout", "8", *files],
                            capture_output=True, text=True, timeout=60, cwd=tmp_path)
    lines = {line.split()[0]: line for line in result.stdout.splitlines() if line.startswith("test_")}
    assert result.returncode == 1
    assert "passed" in lines["test_good.py"]
    assert "failed" in lines["test_bad.py"] and "BAD-MARKER" in result.stdout
    assert "timed out after 8 s" in lines["test_hang.py"]
    assert "nothing to run" in lines["test_empty.py"]
    assert "4 files in" in result.stdout and "2 failed" in result.stdout
