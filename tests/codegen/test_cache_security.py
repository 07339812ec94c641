"""The disk cache runs only code this user wrote (issue 14).

Each finding of the issue is a test here: a forged entry with a recomputed checksum, a code
object that differs from the source shown, entries and directories of other users or
writable by them, a directory swapped between check and read, `cache clear` racing
writers, and keys or ahead-of-time modules that miss a value the code was built from.
Derivatives are checked against analytic formulas or finite differences.
"""

import ctypes
import hashlib
import hmac
import importlib
import json
import marshal
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
import uuid
import warnings
from pathlib import Path

import numpy as np
import pytest

import s2sad
from s2sad import derivative, transform
from s2sad.store import cache, cache_entries
from tests.codegen.cache_setup import write_module
from s2sad.codegen.compile import code_filename
from s2sad.ir.kinds import UNKNOWN, kind_of_value

ROOT = Path(__file__).resolve().parents[2]
NOBODY = 65534  # another user, for the parts that need root to chown
IS_ROOT = os.name == "posix" and os.geteuid() == 0
posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX ownership and modes")







def entry_files(d: Path):
    return sorted(p for p in (d / f"v{cache_entries.ENTRY_FORMAT}").glob("*.entry")
                  if not p.name.startswith("."))


def grad_at(mod, x, y):
    return s2sad.grad(mod.f)(x, y)


def expected_grad(x, y):
    return 3.0 * np.cos(x) * y


def args():
    return np.linspace(0.1, 1.0, 4), np.arange(1.0, 5.0)


def fresh(monkeypatch):
    """Forget what this process compiled: the next derivative is looked up on disk."""
    monkeypatch.setattr(derivative, "_GLOBAL_CACHE", {})


def filled(tmp_path, monkeypatch, cache_dir):
    """A module whose grad has one entry in the cache: (module, entry path, payload)."""
    mod = write_module(tmp_path, monkeypatch, prefix='secmod')
    x, y = args()
    np.testing.assert_allclose(grad_at(mod, x, y), expected_grad(x, y))
    (path,) = entry_files(cache_dir)
    payload = path.read_bytes().partition(b"\n")[2]
    fresh(monkeypatch)
    return mod, path, payload


def evil_payload(payload: bytes, marker: Path, keep_source: bool = False) -> bytes:
    """The entry's payload with code that leaves `marker` when it runs. `keep_source`:
    only the code object changes, the source stays the harmless one."""
    key, name, imports, source, _ = cache_entries.parse_payload(payload)
    evil = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
    code = compile(evil + source, code_filename(source if keep_source else evil + source,
                                                name), "exec")
    return cache_entries.format_payload(key, name, imports,
                                        source if keep_source else evil + source,
                                        marshal.dumps(code))


def checksummed(payload: bytes) -> bytes:
    """An entry file with the header anyone can compute: a plain SHA-256."""
    digest = hashlib.sha256(payload).hexdigest()
    return f"s2sad-cache {cache_entries.ENTRY_FORMAT} {digest}\n".encode() + payload


def signed(root: Path, payload: bytes) -> bytes:
    """An entry file as valid as the format allows with the secret kept in `root` (made
    there if absent): what the owner of `root` can write."""
    if not hasattr(cache_entries, "authenticated"):  # a format without authentication
        return checksummed(payload)
    secret = root / "secret"
    if not secret.exists():
        secret.write_bytes(os.urandom(32))
        secret.chmod(0o600)
    mac = hmac.new(secret.read_bytes(), payload, hashlib.sha256).hexdigest()
    return f"s2sad-cache {cache_entries.ENTRY_FORMAT} {mac}\n".encode() + payload


def served_correctly(mod, marker):
    x, y = args()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        np.testing.assert_allclose(grad_at(mod, x, y), expected_grad(x, y))
    assert not marker.exists(), "planted code was executed"
    return [str(w.message) for w in caught if issubclass(w.category, cache.CacheWarning)]


# -- 1, 2: what runs is what this user's s2sad wrote, and what it shows ---------------


def test_entry_with_a_recomputed_checksum_is_not_executed(tmp_path, monkeypatch, cache_dir):
    mod, path, payload = filled(tmp_path, monkeypatch, cache_dir)
    marker = tmp_path / "executed"
    path.write_bytes(checksummed(evil_payload(payload, marker)))
    served_correctly(mod, marker)
    assert cache.read_entry(path) is not None  # replaced by a good one


def test_entry_planted_in_advance_under_a_predictable_key_is_not_executed(
        tmp_path, monkeypatch, cache_dir):
    mod, path, payload = filled(tmp_path, monkeypatch, cache_dir)
    # another, still empty cache: the key can be computed by anyone who has the code
    other = tmp_path / "fresh-cache"
    monkeypatch.setenv("S2SAD_CACHE_DIR", str(other))
    planted = other / path.parent.name / path.name
    planted.parent.mkdir(parents=True, mode=0o700)
    other.chmod(0o700)
    marker = tmp_path / "executed"
    planted.write_bytes(checksummed(evil_payload(payload, marker)))
    planted.chmod(0o600)
    served_correctly(mod, marker)


def test_code_object_differing_from_the_source_is_not_executed(tmp_path, monkeypatch,
                                                               cache_dir):
    mod, path, payload = filled(tmp_path, monkeypatch, cache_dir)
    marker = tmp_path / "executed"
    path.write_bytes(checksummed(evil_payload(payload, marker, keep_source=True)))
    served_correctly(mod, marker)


def _functions(code):
    out = {}
    for k in code.co_consts:
        if hasattr(k, "co_code"):
            out[k.co_name] = k
            out.update({f"{k.co_name}.{n}": c for n, c in _functions(k).items()})
    return out


def test_served_code_is_the_shown_source(tmp_path, monkeypatch, cache_dir):
    mod, _, _ = filled(tmp_path, monkeypatch, cache_dir)

    def refuse(*a, **k):
        raise AssertionError("the compiler ran")

    monkeypatch.setattr(transform, "derivative_ir", refuse)
    d = s2sad.grad(mod.f)
    x, y = args()
    np.testing.assert_allclose(d(x, y), expected_grad(x, y))
    runs = d.compiled_function.__code__
    shown = _functions(compile(d.source, "<shown>", "exec"))[runs.co_name]
    assert (shown.co_code, shown.co_names, shown.co_varnames) == \
        (runs.co_code, runs.co_names, runs.co_varnames)


# -- 3: only this user's files, in directories only this user can write -----------------


@posix_only
def test_entry_in_a_writable_directory_is_not_executed(tmp_path, monkeypatch, cache_dir):
    mod, path, payload = filled(tmp_path, monkeypatch, cache_dir)
    marker = tmp_path / "executed"
    path.parent.chmod(0o777)
    path.write_bytes(signed(cache_dir, evil_payload(payload, marker)))
    if IS_ROOT:
        os.chown(path, NOBODY, NOBODY)  # planted by another user
    messages = served_correctly(mod, marker)
    assert any("writable by group or others" in m for m in messages), messages


@posix_only
@pytest.mark.skipif(not IS_ROOT, reason="giving a file to another user needs root")
def test_entry_owned_by_another_user_is_not_executed(tmp_path, monkeypatch, cache_dir):
    mod, path, payload = filled(tmp_path, monkeypatch, cache_dir)
    marker = tmp_path / "executed"
    path.write_bytes(signed(cache_dir, evil_payload(payload, marker)))
    path.chmod(0o600)
    os.chown(path, NOBODY, NOBODY)
    messages = served_correctly(mod, marker)
    assert any("owned by another user" in m for m in messages), messages


@posix_only
def test_group_writable_entry_is_not_executed(tmp_path, monkeypatch, cache_dir):
    mod, path, payload = filled(tmp_path, monkeypatch, cache_dir)
    marker = tmp_path / "executed"
    path.write_bytes(signed(cache_dir, evil_payload(payload, marker)))
    path.chmod(0o666)
    messages = served_correctly(mod, marker)
    assert any("writable by group or others" in m for m in messages), messages


@posix_only
def test_symbolic_link_entry_is_not_followed(tmp_path, monkeypatch, cache_dir):
    mod, path, payload = filled(tmp_path, monkeypatch, cache_dir)
    marker = tmp_path / "executed"
    elsewhere = tmp_path / "planted.entry"
    elsewhere.write_bytes(signed(cache_dir, evil_payload(payload, marker)))
    elsewhere.chmod(0o600)
    path.unlink()
    path.symlink_to(elsewhere)
    messages = served_correctly(mod, marker)
    assert any("symbolic link" in m for m in messages), messages


@posix_only
def test_symbolic_link_cache_directory_is_refused(tmp_path, monkeypatch, cache_dir):
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    cache_dir.symlink_to(real)
    mod = write_module(tmp_path, monkeypatch, prefix='secmod')
    marker = tmp_path / "executed"
    messages = served_correctly(mod, marker)
    assert any("symbolic link" in m for m in messages), messages
    assert list(real.iterdir()) == []


@posix_only
def test_secret_readable_by_others_turns_the_cache_off(tmp_path, monkeypatch, cache_dir):
    mod, _, _ = filled(tmp_path, monkeypatch, cache_dir)
    secret = cache_dir / "secret"
    assert secret.stat().st_mode & 0o777 == 0o600
    secret.chmod(0o644)
    messages = served_correctly(mod, tmp_path / "executed")
    assert any("secret" in m and "group or others" in m for m in messages), messages


def test_unsafe_path_warns_once(tmp_path, monkeypatch, cache_dir):
    if os.name != "posix":
        pytest.skip("POSIX permissions")
    cache_dir.mkdir()
    cache_dir.chmod(0o777)
    mod = write_module(tmp_path, monkeypatch, prefix='secmod')
    first = served_correctly(mod, tmp_path / "executed")
    fresh(monkeypatch)
    again = served_correctly(mod, tmp_path / "executed")
    assert len(first) == 1 and again == []


# -- 4: a directory swapped between check and read -----------------------------------

def start_swapper(a: Path, b: Path, stop: Path, seconds: float, uid):
    """Fork a process (as user `uid` when given) that swaps the directories `a` and `b`
    until `stop` exists: (pid, the read end of a pipe giving its count of swaps)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: no Python-level cleanup, only the loop
        code = 1
        try:
            os.close(r)
            if uid is not None:
                os.setgid(uid)
                os.setuid(uid)
            libc = ctypes.CDLL(None, use_errno=True)
            end, n = time.time() + seconds, 0
            while time.time() < end and not os.path.exists(stop):
                # RENAME_EXCHANGE: the two names trade places in one step
                if libc.renameat2(-100, bytes(a), -100, bytes(b), 2) != 0:
                    os.write(w, os.strerror(ctypes.get_errno()).encode())
                    os._exit(2)
                n += 1
            os.write(w, str(n).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    return pid, r


def _has_rename_exchange(tmp: Path) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        a, b = tmp / "xa", tmp / "xb"
        a.mkdir()
        b.mkdir()
        return libc.renameat2(-100, str(a).encode(), -100, str(b).encode(), 2) == 0
    except (OSError, AttributeError):
        return False


@posix_only
def test_directory_swapped_between_check_and_read_is_never_executed(monkeypatch):
    # the parent may be written by another user (root runs the test: user nobody swaps)
    base = Path(tempfile.mkdtemp(prefix="s2sad-swap-"))
    try:
        base.chmod(0o755)
        if not _has_rename_exchange(base):
            pytest.skip("needs renameat2(RENAME_EXCHANGE) (Linux)")
        shared = base / "shared"
        shared.mkdir()
        shared.chmod(0o777)
        real = shared / "cache"
        monkeypatch.setenv("S2SAD_CACHE_DIR", str(real))
        monkeypatch.delenv("S2SAD_CACHE", raising=False)
        fresh(monkeypatch)
        cache._WARNED.clear()
        mod = write_module(base, monkeypatch)
        x, y = args()
        np.testing.assert_allclose(grad_at(mod, x, y), expected_grad(x, y))
        (path,) = entry_files(real)
        payload = path.read_bytes().partition(b"\n")[2]
        marker = base / "executed"
        # the other user's tree: the same entry name, valid by its own secret
        evil = shared / "evil"
        (evil / path.parent.name).mkdir(parents=True)
        planted = evil / path.parent.name / path.name
        planted.write_bytes(signed(evil, evil_payload(payload, marker)))
        for p in (evil, evil / path.parent.name):
            p.chmod(0o777)
        if IS_ROOT:
            for p in (evil, evil / path.parent.name, planted, *evil.glob("secret")):
                os.chown(p, NOBODY, NOBODY)
        # (the entry of a first call: for its own sizes, until a second size shows that its
        # code serves every size; with the arguments' exact dtypes, as the dispatcher's)
        kinds = [kind_of_value(a, keep_value=False, facts=True) for a in (x, y)]
        stop = base / "stop"
        pid, pipe = start_swapper(real, evil, stop, 10.0, NOBODY if IS_ROOT else None)
        hits = 0
        try:
            end = time.time() + 2.0
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                while time.time() < end:
                    slot = cache.slot(mod.f, "grad", (0,), False, kinds, {})
                    if slot.hit is not None:
                        hits += 1
                        np.testing.assert_allclose(slot.hit.function(x, y), expected_grad(x, y))
                    assert not marker.exists(), "code from the swapped-in directory ran"
        finally:
            stop.touch()
            _, status = os.waitpid(pid, 0)
            with os.fdopen(pipe) as f:
                out = f.read()
        assert os.waitstatus_to_exitcode(status) == 0, out
        assert int(out) > 100, "the swapper hardly ran"
        assert hits > 0  # the real entry was served while it was in place
        assert not marker.exists()
    finally:
        shutil.rmtree(base, ignore_errors=True)


# -- 5: clear removes what is ours and finished; writers and clear at once -------------


def test_clear_keeps_young_temporary_files(tmp_path, monkeypatch, cache_dir):
    mod = write_module(tmp_path, monkeypatch, prefix='secmod')
    grad_at(mod, *args())
    entries = cache_dir / f"v{cache_entries.ENTRY_FORMAT}"
    young = entries / ".tmp-in-flight.entry"
    old = entries / ".tmp-abandoned.entry"
    for p in (young, old):
        p.write_bytes(b"partial")
    long_ago = time.time() - 3600
    os.utime(old, (long_ago, long_ago))
    assert cache.clear() == 1
    assert entry_files(cache_dir) == []
    assert young.exists()  # a writer may still rename it into place
    assert not old.exists()


WRITER = """
import json, sys, warnings
import numpy as np
warnings.simplefilter("always")
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    import s2sad, conc_model
    from s2sad import derivative
    wrong = 0
    for r in range(int(sys.argv[1])):
        for n in (2, 3, 5):
            derivative._GLOBAL_CACHE.clear()  # look it up on disk again (or write it)
            x = np.linspace(0.2, 1.0, n + r % 3)
            y = np.linspace(1.0, 2.0, n + r % 3)
            g = s2sad.grad(conc_model.f)(x, y)
            wrong += not np.allclose(g, np.cos(x) * y * 2.0 + 1.0)
print(json.dumps({"wrong": wrong, "warnings": [str(w.message) for w in caught]}))
"""

CLEARER = """
import json, os, sys, warnings
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    from s2sad.store import cache
    n = 0
    while not os.path.exists(sys.argv[1]):
        cache.clear()
        n += 1
print(json.dumps({"clears": n, "warnings": [str(w.message) for w in caught]}))
"""

CONC_MODEL = """
import numpy as np

def f(x, y):
    return np.sum(np.sin(x) * y * 2.0 + x)
"""


def run_writers_and_clear(tmp_path, cache_dir, processes: int, rounds: int):
    (tmp_path / "conc_model.py").write_text(textwrap.dedent(CONC_MODEL))
    env = dict(os.environ, S2SAD_CACHE_DIR=str(cache_dir),
               PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]))
    env.pop("S2SAD_CACHE", None)
    stop = tmp_path / "stop-clearing"

    def start(*argv):
        return subprocess.Popen([sys.executable, "-c", *argv], env=env, cwd=tmp_path,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    clearer = start(CLEARER, str(stop))
    writers = [start(WRITER, str(rounds)) for _ in range(processes)]
    results = []
    try:
        for p in writers:
            out, err = p.communicate(timeout=300)
            assert p.returncode == 0, err
            assert err == "", err
            results.append(json.loads(out))
    finally:
        stop.touch()
        out, err = clearer.communicate(timeout=60)
    assert clearer.returncode == 0, err
    cleared = json.loads(out)
    assert cleared["warnings"] == [] and err == ""
    assert cleared["clears"] > 0
    assert [r["wrong"] for r in results] == [0] * processes
    assert [w for r in results for w in r["warnings"]] == []
    found = list((cache_dir / f"v{cache_entries.ENTRY_FORMAT}").iterdir())
    assert all(cache.read_entry(p) is not None for p in found if not p.name.startswith("."))
    assert [p.name for p in found if p.name.startswith(".")] == []  # no stray temporaries


def test_concurrent_writers_and_clear(tmp_path, cache_dir):
    run_writers_and_clear(tmp_path, cache_dir, processes=8, rounds=2)


@pytest.mark.slow
def test_concurrent_writers_and_clear_long(tmp_path, cache_dir):
    run_writers_and_clear(tmp_path, cache_dir, processes=8, rounds=100)


def test_cli_clear_refuses_an_unsafe_directory(tmp_path, monkeypatch, cache_dir, capsys):
    if os.name != "posix":
        pytest.skip("POSIX permissions")
    from s2sad.cli import main

    cache_dir.mkdir()
    victim = cache_dir / f"v{cache_entries.ENTRY_FORMAT}"
    victim.mkdir()
    (victim / "someone.entry").write_text("not ours to judge")
    cache_dir.chmod(0o777)
    assert main(["cache", "clear"]) == 1
    assert "group or others" in capsys.readouterr().err
    assert (victim / "someone.entry").exists()


# -- 6: keys and ahead-of-time modules cover the values the code was built from --------

RULE_FACTORY = """
import numpy as np
import s2sad

CONFIG = {"k": 3.0}


def scale(x):
    return CONFIG["k"] * x


def configure(k):
    # a rule built from a configuration value: its closure holds k
    CONFIG["k"] = k

    @s2sad.defjvp(scale)
    def scale_jvp(x, x_dot):
        return k * x_dot

    @s2sad.defvjp(scale)
    def scale_vjp(g, x):
        return k * g


configure(3.0)


def f(x):
    return np.sum(scale(x) * x)
"""


def test_rule_closure_value_is_part_of_the_key(tmp_path, monkeypatch, cache_dir):
    mod = write_module(tmp_path, monkeypatch, RULE_FACTORY, prefix="rulefactory")
    x = np.linspace(0.5, 2.0, 3)
    np.testing.assert_allclose(s2sad.grad(mod.f)(x), 2 * 3.0 * x)  # d/dx k x^2
    assert len(entry_files(cache_dir)) == 1  # the case is cached: it is the disk's answer
    mod.configure(2.0)  # the next process reads K=2: same files, another closure value
    fresh(monkeypatch)
    np.testing.assert_allclose(s2sad.grad(mod.f)(x), 2 * 2.0 * x)
    assert len(entry_files(cache_dir)) == 2


KEYED = """
import numpy as np

COEFFS = [2.0, 3.0]


def f(x, *, p=2.0):
    return np.sum(COEFFS[0] * x ** 2 + COEFFS[1] * x) * p
"""


def test_key_covers_containers_and_keyword_defaults(tmp_path, monkeypatch, cache_dir):
    mod = write_module(tmp_path, monkeypatch, KEYED, prefix="keyed")
    kinds = [UNKNOWN]

    def key():
        return cache.cache_key(mod.f, "grad", (0,), False, kinds, {})

    first = key()
    assert first is not None and first == key()
    mod.COEFFS[0] = 5.0
    assert key() not in (None, first)
    mod.f.__kwdefaults__["p"] = 4.0
    assert len({first, key()}) == 2
    x = np.linspace(0.1, 1.0, 3)
    np.testing.assert_allclose(s2sad.grad(mod.f)(x), (2 * 5.0 * x + 3.0) * 4.0)


def test_key_covers_a_helpers_code_object(tmp_path, monkeypatch, cache_dir):
    mod = write_module(tmp_path, monkeypatch, prefix='secmod')
    key = cache.cache_key(mod.f, "grad", (0,), False, [UNKNOWN, UNKNOWN], {})
    # the same source text and lines, other code
    code = mod.helper.__code__
    mod.helper.__code__ = code.replace(
        co_consts=tuple(4.0 if c == 3.0 else c for c in code.co_consts))
    assert cache.cache_key(mod.f, "grad", (0,), False, [UNKNOWN, UNKNOWN], {}) != key


AOT_MODEL = """
import numpy as np

COEFFS = [2.0, 3.0]


def f(x):
    return np.sum(COEFFS[0] * x ** 2 + COEFFS[1] * x)
"""

AOT_USE = """
import json, warnings
import numpy as np
import s2sad
import {pkg}.model as model
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    d = s2sad.grad(model.f)
    x = np.array([0.5, 1.5])
    g = d(x)
h = 1e-6
fd = [(model.f(x + h * e) - model.f(x - h * e)) / (2 * h) for e in np.eye(2)]
print(json.dumps({{"err": float(np.max(np.abs(g - fd))),
                  "module": d.compiled_function.__module__,
                  "warnings": [(w.category.__name__, str(w.message)) for w in caught]}}))
"""


def aot_run(tmp_path, *argv, code=None):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), str(ROOT)]),
               S2SAD_CACHE="0")
    cmd = [sys.executable, "-c", code] if code else [sys.executable, "-m", "s2sad", *argv]
    r = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True,
                       timeout=180, check=False)
    assert r.returncode == 0, r.stderr
    return r


def test_aot_module_built_before_a_global_changed_is_not_used(tmp_path):
    pkg = f"aotsec_{uuid.uuid4().hex[:8]}"
    (tmp_path / pkg).mkdir()
    (tmp_path / pkg / "__init__.py").write_text("")
    model = tmp_path / pkg / "model.py"
    model.write_text(textwrap.dedent(AOT_MODEL))
    aot_run(tmp_path, "build", f"{pkg}.model:f", "--args", "np.ones(2)")
    fresh_use = json.loads(aot_run(tmp_path, code=AOT_USE.format(pkg=pkg)).stdout)
    assert fresh_use["module"] == f"{pkg}.model_s2sad" and fresh_use["warnings"] == []
    assert fresh_use["err"] < 1e-6
    # the function's text is unchanged; a value it reads is not
    model.write_text(model.read_text().replace("[2.0, 3.0]", "[5.0, 3.0]"))
    stale = json.loads(aot_run(tmp_path, code=AOT_USE.format(pkg=pkg)).stdout)
    assert stale["module"] != f"{pkg}.model_s2sad"
    assert stale["err"] < 1e-6
    assert [c for c, _ in stale["warnings"]] == ["StaleModuleWarning"]
    assert "s2sad build" in stale["warnings"][0][1]


def test_aot_entry_records_versions_and_rules(tmp_path, monkeypatch):
    from s2sad.store import aot
    from s2sad.transform import VERSION

    mod = write_module(tmp_path, monkeypatch, AOT_MODEL, prefix="aotfacts")
    text = aot.write_module([aot.DerivativeSpec(f"{mod.__name__}:f", mod.f)])
    (tmp_path / f"{mod.__name__}_s2sad.py").write_text(text)
    (entry,) = importlib.import_module(f"{mod.__name__}_s2sad").S2SAD_DERIVATIVES
    assert entry["s2sad"] == VERSION and entry["numpy"] == np.__version__.split(".")[0]
    assert "numpy.sum" in entry["primitives"]
    assert aot.stale_reason(entry, mod.f) is None
    assert "s2sad 0.0.1" in aot.stale_reason(dict(entry, s2sad="0.0.1"), mod.f)
    assert "NumPy" in aot.stale_reason(dict(entry, numpy="0"), mod.f)
    assert "rules" in aot.stale_reason(dict(entry, rules_hash="0" * 64), mod.f)
    assert "rules" in aot.stale_reason(dict(entry, primitives=("nowhere.nothing",)), mod.f)
