"""The rule package can be imported before the compiler (a module of user rules that starts
with `from s2sad_rules import defjvp`)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("code", [
    "import s2sad_rules; import s2sad; assert s2sad_rules.TABLE.vjp_rules",
    "from s2sad_rules import defjvp, TABLE; import s2sad_rules.operators; "
    "import numpy as np, s2sad; assert abs(s2sad.grad(np.sin)(0.0) - 1.0) < 1e-12",
])
def test_rules_first(code):
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
