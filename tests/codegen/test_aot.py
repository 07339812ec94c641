"""Ahead-of-time modules: import without the compiler, deterministic, used when fresh."""

import json
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

MODEL = """
import numpy as np


def helper(z):
    return np.tanh(z) * 2.0


def loss(w, x):
    return np.sum(helper(x @ w) ** 2) + 0.5 * np.sum(w * w)


def f(x, y):
    return np.sin(x) * y + x ** 3
"""

DECORATED = """
import numpy as np
import s2sad


def helper(z):
    return np.tanh(z) * 2.0


@s2sad.grad
def loss(w, x):
    return np.sum(helper(x @ w) ** 2) + 0.5 * np.sum(w * w)
"""


def make_package(tmp_path, text=MODEL):
    pkg = f"aotpkg_{uuid.uuid4().hex[:8]}"
    (tmp_path / pkg).mkdir()
    (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / pkg / "model.py").write_text(textwrap.dedent(text))
    return pkg


def run(tmp_path, *args, code=None, env_extra=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    env.update(env_extra or {})
    cmd = [sys.executable, "-c", code] if code else [sys.executable, "-m", "s2sad", *args]
    return subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                          timeout=180, check=False)


def build(tmp_path, pkg, *extra):
    r = run(tmp_path, "build", f"{pkg}.model:loss", "--mode", "grad",
            "--args", "np.ones((3, 2)), np.ones((4, 3))", *extra)
    assert r.returncode == 0, r.stderr
    return tmp_path / pkg / "model_s2sad.py"


FD_CHECK = """
import json, sys
import numpy as np
import {pkg}.model_s2sad as gen
import {pkg}.model as model
rng = np.random.default_rng(0)
w, x = rng.standard_normal((3, 2)), rng.standard_normal((4, 3))
g = gen.loss_grad(w, x)
fd = np.zeros_like(w)
h = 1e-6
for i in np.ndindex(w.shape):
    e = np.zeros_like(w); e[i] = h
    fd[i] = (model.loss(w + e, x) - model.loss(w - e, x)) / (2 * h)
print(json.dumps({{"err": float(np.max(np.abs(g - fd))),
                  "loaded": [m for m in ("s2sad", "gast", "astor") if m in sys.modules]}}))
"""


def test_module_imports_without_the_compiler_and_matches_finite_differences(tmp_path):
    pkg = make_package(tmp_path)
    out = build(tmp_path, pkg)
    text = out.read_text()
    assert "import s2sad" not in text and "from s2sad" not in text
    r = run(tmp_path, code=FD_CHECK.format(pkg=pkg))
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["loaded"] == []
    assert result["err"] < 1e-6


def test_runtime_helpers_are_inlined(tmp_path):
    pkg = make_package(tmp_path)
    r = run(tmp_path, "build", f"{pkg}.model:f", "--mode", "vjp")  # generic: needs unbroadcast
    assert r.returncode == 0, r.stderr
    text = (tmp_path / pkg / "model_s2sad.py").read_text()
    assert "def unbroadcast(" in text and "def sum_to_shape(" in text
    check = textwrap.dedent(f"""
        import sys
        import numpy as np
        from {pkg}.model_s2sad import f_vjp
        x, y = np.array([0.3, 1.2]), 2.0
        out, pullback = f_vjp(x, y)
        x_bar, y_bar = pullback(np.ones(2))
        assert np.allclose(x_bar, np.cos(x) * y + 3 * x ** 2)
        assert np.isclose(y_bar, np.sum(np.sin(x)))
        assert "s2sad" not in sys.modules
    """)
    r = run(tmp_path, code=check)
    assert r.returncode == 0, r.stderr


def test_output_is_deterministic_and_has_a_header(tmp_path):
    pkg = make_package(tmp_path)
    first = build(tmp_path, pkg).read_bytes()
    out = tmp_path / pkg / "model_s2sad.py"
    out.unlink()
    second = build(tmp_path, pkg, "--out", str(out)).read_bytes()
    assert first == second
    head = first.decode().split('"""')[0]
    assert f"{pkg}.model:loss" in head
    assert "grad of" in head and "with respect to w" in head
    assert "source hash" in head


USE_AOT = """
import json, sys
import numpy as np
import s2sad.transform, s2sad.frontend.lower

calls = []
def refuse(*a, **k):
    calls.append(a)
    raise AssertionError("the compiler ran")
expect_compile = {expect_compile}
if not expect_compile:
    s2sad.transform.lowered = refuse
    s2sad.transform.derivative_ir = refuse
    s2sad.frontend.lower.lower = refuse
import {pkg}.model as model
w, x = np.ones((3, 2)) * 0.1, np.ones((4, 3)) * 0.2
g = model.loss(w, x)
g = model.loss(w, x)
f = model.loss.func
h = 1e-6
e = np.zeros_like(w); e[0, 0] = h
fd = (f(w + e, x) - f(w - e, x)) / (2 * h)
print(json.dumps({{"g00": float(g[0, 0]), "fd": float(fd),
                   "module": model.loss.compiled_function.__module__}}))
"""


def test_decorated_function_uses_a_fresh_module_without_compiling(tmp_path):
    pkg = make_package(tmp_path, DECORATED)
    r = run(tmp_path, "build", f"{pkg}.model:loss", "--args", "np.ones((3, 2)), np.ones((4, 3))")
    assert r.returncode == 0, r.stderr
    r = run(tmp_path, code=USE_AOT.format(pkg=pkg, expect_compile=False),
            env_extra={"S2SAD_CACHE": "0"})
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["module"] == f"{pkg}.model_s2sad"
    assert abs(result["g00"] - result["fd"]) < 1e-6


def test_stale_module_is_not_used(tmp_path):
    pkg = make_package(tmp_path, DECORATED)
    r = run(tmp_path, "build", f"{pkg}.model:loss", "--args", "np.ones((3, 2)), np.ones((4, 3))")
    assert r.returncode == 0, r.stderr
    model = tmp_path / pkg / "model.py"
    model.write_text(model.read_text().replace("np.tanh(z) * 2.0", "np.tanh(z) * 3.0"))
    r = run(tmp_path, code=USE_AOT.format(pkg=pkg, expect_compile=True),
            env_extra={"S2SAD_CACHE": "0"})
    assert r.returncode == 0, r.stderr
    result = json.loads(r.stdout)
    assert result["module"] != f"{pkg}.model_s2sad"  # compiled afresh from the new source
    assert abs(result["g00"] - result["fd"]) < 1e-6


def test_specialised_module_serves_every_size_of_its_pattern(tmp_path):
    # built for w (3, 2), x (4, 3): one function for w (n, m), x (k, n), any n, m, k (issue
    # 34); not for a pattern with other relations (k == m) or another rank
    pkg = make_package(tmp_path, DECORATED)
    r = run(tmp_path, "build", f"{pkg}.model:loss", "--args", "np.ones((3, 2)), np.ones((4, 3))")
    assert r.returncode == 0, r.stderr
    code = textwrap.dedent(f"""
        import numpy as np
        import {pkg}.model as model
        rng = np.random.default_rng(0)
        for w_shape, x_shape in (((3, 2), (5, 3)), ((7, 4), (9, 7)), ((3, 2), (2, 3)),
                                 ((3,), (4, 3))):
            w, x = rng.normal(size=w_shape), rng.normal(size=x_shape)
            g = model.loss(w, x)
            e = np.zeros_like(w)
            e.flat[0] = 1e-6
            f = model.loss.func
            fd = (f(w + e, x) - f(w - e, x)) / 2e-6
            print(model.loss.compiled_function.__module__, abs(g.flat[0] - fd) < 1e-6)
    """)
    r = run(tmp_path, code=code)
    assert r.returncode == 0, r.stderr
    served = [line.split() for line in r.stdout.split("\n") if line]
    assert [ok for _, ok in served] == ["True"] * 4
    module = f"{pkg}.model_s2sad"
    assert [m == module for m, _ in served] == [True, True, False, False]


def test_jvp_module(tmp_path):
    pkg = make_package(tmp_path)
    r = run(tmp_path, "build", f"{pkg}.model:f", "--mode", "jvp", "--wrt", "x",
            "--args", "np.array([0.5, 1.5]), 2.0")
    assert r.returncode == 0, r.stderr
    code = textwrap.dedent(f"""
        import numpy as np
        from {pkg}.model_s2sad import f_jvp
        x = np.array([0.5, 1.5])
        out, out_dot = f_jvp(x, 2.0, np.ones(2))
        assert np.allclose(out, np.sin(x) * 2.0 + x ** 3)
        assert np.allclose(out_dot, np.cos(x) * 2.0 + 3 * x ** 2), out_dot
    """)
    r = run(tmp_path, code=code)
    assert r.returncode == 0, r.stderr
