"""The disk cache: keys, atomic authenticated entries, invalidation, unsafe directories."""

import importlib
import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import numpy as np
import pytest

import s2sad
from s2sad import derivative, transform
from s2sad.store import cache, cache_entries
from tests.codegen.cache_setup import MODULE, write_module

ROOT = Path(__file__).resolve().parents[2]







def entries(d: Path):
    return sorted((d / f"v{cache_entries.ENTRY_FORMAT}").glob("*.entry"))


def no_compiler(monkeypatch):
    """Make any lowering fail: what runs after this is served from the cache."""

    def refuse(*a, **k):
        raise AssertionError("the compiler ran")

    monkeypatch.setattr(transform, "derivative_ir", refuse)


def grad_at(mod, x, y):
    return s2sad.grad(mod.f)(x, y)


def expected_grad(x, y):
    return 3.0 * np.cos(x) * y


def test_entry_is_written_and_served_without_compiling(tmp_path, monkeypatch, cache_dir):
    mod = write_module(tmp_path, monkeypatch)
    x, y = np.linspace(0.1, 1.0, 4), np.arange(4.0)
    np.testing.assert_allclose(grad_at(mod, x, y), expected_grad(x, y))
    assert len(entries(cache_dir)) == 1
    assert cache.read_entry(entries(cache_dir)[0]) is not None
    monkeypatch.setattr(derivative, "_GLOBAL_CACHE", {})
    no_compiler(monkeypatch)
    d = s2sad.grad(mod.f)
    np.testing.assert_allclose(d(x, y), expected_grad(x, y))
    assert "def f_grad" in d.source


def test_cache_dir_is_private(tmp_path, monkeypatch, cache_dir):
    mod = write_module(tmp_path, monkeypatch)
    grad_at(mod, np.ones(2), np.ones(2))
    if os.name == "posix":
        assert cache_dir.stat().st_mode & 0o077 == 0
        assert entries(cache_dir)[0].stat().st_mode & 0o077 == 0


def test_processes_compiling_at_once_all_succeed(tmp_path, cache_dir):
    (tmp_path / "shared_model.py").write_text(textwrap.dedent(MODULE))
    script = textwrap.dedent("""
        import numpy as np, s2sad, shared_model
        x = np.linspace(0.1, 1.0, 5); y = np.arange(5.0)
        g = s2sad.grad(shared_model.f)(x, y)
        assert np.allclose(g, 3.0 * np.cos(x) * y), g
        v = s2sad.vjp(shared_model.f)(x, y)[1](1.0)
        assert np.allclose(v[1], 3.0 * np.sin(x))
        print("ok")
    """)
    env = dict(os.environ, S2SAD_CACHE_DIR=str(cache_dir),
               PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    procs = [subprocess.Popen([sys.executable, "-c", script], env=env, cwd=tmp_path,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
        assert out.strip() == "ok"
    found = entries(cache_dir)
    assert len(found) == 2  # grad and vjp, each written whole by whichever process won
    assert all(cache.read_entry(p) is not None for p in found)
    leftovers = [p for p in (cache_dir / f"v{cache_entries.ENTRY_FORMAT}").iterdir()
                 if p.name.startswith(".tmp")]
    assert leftovers == []


@pytest.mark.parametrize("damage", ["truncate", "garble"])
def test_corrupt_entry_is_regenerated_not_executed(tmp_path, monkeypatch, cache_dir, damage):
    mod = write_module(tmp_path, monkeypatch)
    x, y = np.linspace(0.1, 1.0, 3), np.ones(3)
    grad_at(mod, x, y)
    (path,) = entries(cache_dir)
    data = path.read_bytes()
    marker = tmp_path / "executed"
    if damage == "truncate":
        path.write_bytes(data[: len(data) // 2])
    else:  # same header (and hash), code that would leave a mark if it ever ran
        evil = f"import pathlib; pathlib.Path({str(marker)!r}).write_text('ran')\n"
        path.write_bytes(data.replace(b"def f_grad", evil.encode() + b"def f_grad", 1))
    assert cache.read_entry(path) is None
    monkeypatch.setattr(derivative, "_GLOBAL_CACHE", {})
    np.testing.assert_allclose(grad_at(mod, x, y), expected_grad(x, y))
    assert not marker.exists()
    assert cache.read_entry(path) is not None  # rewritten whole


def test_editing_the_function_gives_a_new_entry(tmp_path, monkeypatch, cache_dir):
    mod = write_module(tmp_path, monkeypatch)
    x, y = np.linspace(0.1, 1.0, 3), np.ones(3)
    d1 = s2sad.grad(mod.f)
    d1(x, y)
    old = d1.source
    path = Path(mod.__file__)
    path.write_text(path.read_text().replace("np.sum(helper(x) * y)", "np.sum(helper(x) * y * y)"))
    importlib.invalidate_caches()
    mod = importlib.reload(mod)
    d2 = s2sad.grad(mod.f)
    np.testing.assert_allclose(d2(x, y), expected_grad(x, y) * y)
    assert d2.source != old
    assert len(entries(cache_dir)) == 2


def test_editing_a_helper_gives_a_new_entry(tmp_path, monkeypatch, cache_dir):
    mod = write_module(tmp_path, monkeypatch)
    x, y = np.linspace(0.1, 1.0, 3), np.ones(3)
    d1 = s2sad.grad(mod.f)
    d1(x, y)
    path = Path(mod.__file__)
    path.write_text(path.read_text().replace("np.sin(x) * 3.0", "np.cos(x) * 3.0"))
    mod = importlib.reload(mod)
    d2 = s2sad.grad(mod.f)
    np.testing.assert_allclose(d2(x, y), -3.0 * np.sin(x) * y)
    assert d2.source != d1.source


def test_editing_a_rule_changes_the_fingerprint(tmp_path, monkeypatch):
    from s2sad_rules import TABLE

    rules = tmp_path / f"myrules_{uuid.uuid4().hex[:8]}.py"
    rules.write_text(textwrap.dedent("""
        import s2sad

        def scale(x):
            return 2.0 * x

        @s2sad.defjvp(scale)
        def scale_jvp(x, x_dot):
            return 2.0 * x_dot
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    mod = importlib.import_module(rules.stem)
    before = TABLE.fingerprint()
    assert TABLE.fingerprint() == before  # stable while nothing changes
    rules.write_text(rules.read_text().replace("return 2.0 * x_dot", "return x_dot * 2.0"))
    importlib.reload(mod)
    assert TABLE.fingerprint() != before


def test_key_covers_options_and_plain_constants(tmp_path, monkeypatch, cache_dir):
    from s2sad.ir.kinds import UNKNOWN, kind_of_value

    mod = write_module(tmp_path, monkeypatch)
    k = [UNKNOWN, UNKNOWN]
    key = cache.cache_key(mod.f, "grad", (0,), False, k, {})
    assert key == cache.cache_key(mod.f, "grad", (0,), False, k, {})
    assert key != cache.cache_key(mod.f, "vjp", (0,), False, k, {})
    assert key != cache.cache_key(mod.f, "grad", (1,), False, k, {})
    arrays = [kind_of_value(np.ones(3), keep_value=False)] * 2
    assert key != cache.cache_key(mod.f, "grad", (0,), False, arrays, {})
    mod2 = write_module(tmp_path, monkeypatch, "SCALE = 2.0\ndef f(x):\n    return x * SCALE\n")
    key2 = cache.cache_key(mod2.f, "grad", (0,), False, [UNKNOWN], {})
    mod2.SCALE = 3.0
    assert cache.cache_key(mod2.f, "grad", (0,), False, [UNKNOWN], {}) != key2


def test_namespace_entry_without_import_path_is_not_cached(tmp_path, monkeypatch, cache_dir):
    def twice(x):
        return 2.0 * x

    @s2sad.defjvp(twice)
    def twice_jvp(x, x_dot):
        return 2.0 * x_dot

    @s2sad.defvjp(twice)
    def twice_vjp(g, x):
        return 2.0 * g

    def f(x):
        return np.sum(twice(x))

    out, pullback = s2sad.vjp(f)(np.ones(3))  # the forward sweep calls the local `twice`
    assert out == 6.0
    np.testing.assert_allclose(pullback(1.0)[0], 2.0 * np.ones(3))
    assert entries(cache_dir) == []


def test_unsafe_directory_is_refused(tmp_path, monkeypatch, cache_dir):
    if os.name != "posix":
        pytest.skip("POSIX permissions")
    cache_dir.mkdir()
    cache_dir.chmod(0o777)
    mod = write_module(tmp_path, monkeypatch)
    x, y = np.linspace(0.1, 1.0, 3), np.ones(3)
    cache._WARNED.clear()
    with pytest.warns(cache.CacheWarning, match="writable by group or others"):
        np.testing.assert_allclose(grad_at(mod, x, y), expected_grad(x, y))
    assert not (cache_dir / f"v{cache_entries.ENTRY_FORMAT}").exists()
    assert cache.info()["problem"]


def test_cache_can_be_turned_off(tmp_path, monkeypatch, cache_dir):
    monkeypatch.setenv("S2SAD_CACHE", "0")
    mod = write_module(tmp_path, monkeypatch)
    grad_at(mod, np.ones(2), np.ones(2))
    assert not cache_dir.exists()


def test_default_location_follows_xdg(monkeypatch, tmp_path):
    if sys.platform in ("win32", "darwin"):
        pytest.skip("XDG is the Linux convention")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.default_cache_dir() == tmp_path / "s2sad"


def test_clear_removes_entries(tmp_path, monkeypatch, cache_dir):
    mod = write_module(tmp_path, monkeypatch)
    grad_at(mod, np.ones(2), np.ones(2))
    assert cache.info()["entries"] == 1
    assert cache.clear() == 1
    assert entries(cache_dir) == []
