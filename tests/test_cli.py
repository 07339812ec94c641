"""The `s2sad` command: show, build (--check), cache, demo; exit codes and messages."""

import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest

from s2sad.cli import main

ROOT = Path(__file__).resolve().parents[1]

MODULE = """
import numpy as np


def f(x, y):
    return np.sum(np.sin(x) * y)


def uses_try(x):
    try:
        return x * 2.0
    except ValueError:
        return x
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    name = f"climod_{uuid.uuid4().hex[:8]}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def test_show_prints_the_generated_source(project, capsys):
    assert main(["show", f"{project}:f", "--mode", "grad"]) == 0
    out = capsys.readouterr().out
    assert "def f_grad(x, y):" in out
    assert "\x1b[" not in out  # not a terminal: plain text


def test_show_specialises_on_example_arguments(project, capsys):
    assert main(["show", f"{project}:f", "--mode", "vjp", "--wrt", "x",
                 "--args", "np.ones(3), 2.0"]) == 0
    out = capsys.readouterr().out
    assert "def f_vjp(x, y):" in out
    assert "float array (3,)" in out


def test_show_ir(project, capsys):
    assert main(["show", f"{project}:f", "--ir"]) == 0
    assert "func " in capsys.readouterr().out
    assert main(["show", f"{project}:f", "--ir", "--stage", "lowered"]) == 0
    assert "np.sin" in capsys.readouterr().out


def test_compile_error_exits_1_with_a_caret(project, capsys):
    assert main(["show", f"{project}:uses_try", "--mode", "grad"]) == 1
    err = capsys.readouterr().err
    assert "`try` is not supported" in err or "try" in err
    lines = err.splitlines()
    caret = next(i for i, line in enumerate(lines) if line.strip() == "^")
    assert "return x * 2.0" in lines[caret - 1]  # (a `return` inside a `try`)


@pytest.mark.parametrize("argv", [
    [],
    ["show"],
    ["show", "no_colon"],
    ["show", "no_such_module_xyz:f"],
    ["show", "{project}:missing"],
    ["show", "{project}:f", "--mode", "sideways"],
    ["show", "{project}:f", "--args", "np.ones("],
    ["show", "{project}:f", "--args", "1.0"],
    ["cache", "explode"],
    ["frobnicate"],
])
def test_usage_errors_exit_2(project, capsys, argv):
    assert main([a.format(project=project) for a in argv]) == 2
    captured = capsys.readouterr()
    assert captured.err.strip()
    assert captured.out == ""


def test_cache_info_and_clear(project, capsys, tmp_path, monkeypatch):
    # (a directory of its own: the suite's is shared by pytest-xdist's workers)
    monkeypatch.setenv("S2SAD_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["show", f"{project}:f", "--mode", "grad"]) == 0
    assert main(["cache", "info"]) == 0
    out = capsys.readouterr().out
    assert os.environ["S2SAD_CACHE_DIR"] in out and "entries:" in out
    assert main(["cache", "clear"]) == 0
    assert "removed" in capsys.readouterr().out


def test_demo_shows_the_seeds_examples_with_their_numbers(capsys):
    import math

    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    c2, c6 = math.cos(2.0), math.cos(6.0)
    # (i) the JVPs along e0, e1 are the Jacobian's columns [1, 3, cos 2] and [1, 2, 0]
    assert f"JVP along e0: [1, x1, cos x0] = [1, 3, cos 2] = [1, 3, {c2:.6g}]" in out
    assert "JVP along e1: [1, x0, 0] = [1, 2, 0] = [1, 2, 0]" in out
    # (ii) g at (2, 3): JVP along (1, 0) is (4, 3 cos 6); VJP with (1, 1) is
    # (4 + 3 cos 6, 1 + 2 cos 6)
    assert f"= (4, 3 cos 6) = [4, {3 * c6:.6g}]" in out
    assert f"= (4 + 3 cos 6, 1 + 2 cos 6) = [{4 + 3 * c6:.6g}, {1 + 2 * c6:.6g}]" in out
    assert "column" in out and "rows" in out  # why a JVP gives a column, a VJP a row
    for name in ("def f_jvp(x, x_dot):", "def g_jvp(x1, x2, x1_dot, x2_dot):",
                 "def g_vjp(x1, x2):", "def loss_grad(w, x, y):"):
        assert name in out
    assert "# line 8: return np.array([x[0] + x[1], x[0] * x[1], np.sin(x[0])])" in out
    # both modes step by step too, each printed listing running as printed
    assert out.count("step by step (explain=True)") >= 2
    assert "# back through t3 = x1 * x2; d(a·b) = da·b + a·db" in out
    assert "t4_dot = t3_dot * cos_t3" in out


def run(tmp_path, *args):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    return subprocess.run([sys.executable, "-m", "s2sad", *args], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=180, check=False)


def test_build_and_check_from_pyproject(tmp_path):
    pkg = f"buildpkg_{uuid.uuid4().hex[:8]}"
    (tmp_path / pkg).mkdir()
    (tmp_path / pkg / "__init__.py").write_text("")
    (tmp_path / pkg / "model.py").write_text(textwrap.dedent(MODULE))
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent(f"""
        [project]
        name = "demo"

        [tool.s2sad]
        derivatives = [
            {{target = "{pkg}.model:f", mode = "grad", wrt = ["x"], args = "np.zeros(3), 1.0"}},
            {{target = "{pkg}.model:f", mode = "vjp", out = "{pkg}/_f_vjp.py"}},
        ]
    """))
    r = run(tmp_path, "build", "--check")
    assert r.returncode == 1 and "missing" in r.stderr
    r = run(tmp_path, "build")
    assert r.returncode == 0, r.stderr
    assert (tmp_path / pkg / "model_s2sad.py").exists()
    assert (tmp_path / pkg / "_f_vjp.py").exists()
    r = run(tmp_path, "build", "--check")
    assert r.returncode == 0, r.stderr
    model = tmp_path / pkg / "model.py"
    model.write_text(model.read_text().replace("np.sin(x) * y", "np.cos(x) * y"))
    r = run(tmp_path, "build", "--check")
    assert r.returncode == 1
    assert "stale" in r.stderr and "model_s2sad.py" in r.stderr
    r = run(tmp_path, "build")
    assert r.returncode == 0, r.stderr
    assert run(tmp_path, "build", "--check").returncode == 0


def test_bad_configuration_is_a_usage_error(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.s2sad]\nderivatives = [{tagret = "x:f"}]\n')
    r = run(tmp_path, "build")
    assert r.returncode == 2
    assert "unknown keys" in r.stderr


def test_python_dash_m_reports_compile_errors(tmp_path):
    (tmp_path / "trymod.py").write_text(textwrap.dedent(MODULE))
    r = run(tmp_path, "show", "trymod:uses_try", "--mode", "grad")
    assert r.returncode == 1
    assert "^" in r.stderr and r.stdout == ""


def test_version(capsys):
    from s2sad import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"s2sad {__version__}"


def test_show_takes_a_file_path(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "src"
    folder.mkdir()
    (folder / "course_model.py").write_text(textwrap.dedent(MODULE))
    monkeypatch.chdir(tmp_path)
    assert main(["show", "src/course_model.py:f", "--mode", "grad"]) == 0
    out = capsys.readouterr().out
    assert "def f_grad(x, y):" in out and "# line 6: return np.sum(np.sin(x) * y)" in out
    assert main(["show", str(folder / "course_model.py") + ":f", "--mode", "vjp"]) == 0
    assert "def f_vjp(x, y):" in capsys.readouterr().out
    assert main(["show", "src/missing.py:f"]) == 2
    assert "no such file" in capsys.readouterr().err


def test_show_says_when_it_prints_generic_code(project, capsys):
    assert main(["show", f"{project}:f", "--mode", "vjp"]) == 0
    out = capsys.readouterr().out
    assert "the generic code" in out and "--args" in out
    assert "# generic: for arguments of any kind" in out
    assert "from s2sad.runtime import unbroadcast" in out  # what it calls is imported
    assert main(["show", f"{project}:f", "--mode", "vjp", "--args", "np.ones(3), 2.0"]) == 0
    out = capsys.readouterr().out
    assert "generic" not in out and "specialised for x: float array (3,)" in out
