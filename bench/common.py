"""Shared plumbing for the benchmark scripts: import paths, loading s2sad,
error cells, result comparison, command-line options, optional peers."""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
import types

import numpy as np

BENCH = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(BENCH)
for _p in (BENCH, REPO):  # benchmark the working tree's s2sad
    if _p not in sys.path:
        sys.path.insert(0, _p)

CELL_WIDTH = 48  # longest error text put in a table cell; the full text goes in the notes


def load_s2sad():
    """(module, None) or (None, exception)."""
    try:
        import s2sad
        return s2sad, None
    except Exception as exc:  # the compiler may be half-written
        return None, exc


def error_text(exc):
    msg = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {msg}" if msg else type(exc).__name__


def na(exc):
    text = error_text(exc)
    if len(text) > CELL_WIDTH:
        text = text[: CELL_WIDTH - 3] + "..."
    return f"n/a ({text})"


def max_rel_err(got, want):
    """Largest relative difference between two results (scalars, arrays or tuples)."""
    if isinstance(want, (tuple, list)):
        if not isinstance(got, (tuple, list)) or len(got) != len(want):
            return math.inf
        return max((max_rel_err(g, w) for g, w in zip(got, want)), default=0.0)
    g = np.asarray(got, dtype=float)
    w = np.asarray(want, dtype=float)
    if g.shape != w.shape:
        return math.inf
    scale = max(float(np.max(np.abs(w))) if w.size else 0.0, 1e-300)
    return float(np.max(np.abs(g - w))) / scale if w.size else 0.0


def check_cell(got, want, tol=1e-8):
    err = max_rel_err(got, want)
    return "ok" if err <= tol else f"WRONG (rel err {err:.1e})"


def timed_first_call(fn, args):
    """Call once (this is where lazy compilation happens); return (result, seconds)."""
    t0 = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - t0


def parse_args(description):
    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--quick", action="store_true",
                    help="fewer, shorter repeats (a smoke run; figures are noisier)")
    ap.add_argument("--repeat", type=int, default=None, help="timed batches per function")
    ap.add_argument("--no-peers", action="store_true",
                    help="skip autograd / jax columns even when they are importable")
    ap.add_argument("--only", default=None,
                    help="comma-separated workload keys to run, e.g. 'a,d,e'")
    opts = ap.parse_args()
    opts.target = 0.01 if opts.quick else 0.05
    if opts.repeat is None:
        opts.repeat = 3 if opts.quick else 7
    opts.only = set(opts.only.split(",")) if opts.only else None
    return opts


def print_notes(notes):
    if notes:
        print()
        print("notes:")
        for key, text in notes:
            print(f"  ({key}) {text}")


# --------------------------------------------------------------------------
# optional peers: autograd and jax, used only when importable


def _rebind(f, npmod):
    """The same function with `np` and `math` both bound to `npmod`."""
    env = dict(f.__globals__)
    env["np"] = npmod
    env["math"] = npmod
    return types.FunctionType(f.__code__, env, f.__name__, f.__defaults__, f.__closure__)


def _autograd_grad(f, wrt):
    import autograd
    import autograd.numpy as anp

    g = _rebind(f, anp)
    if not isinstance(wrt, tuple):
        return autograd.grad(g, wrt)
    # autograd.grad takes one argnum: differentiate a packed tuple instead
    def packed(params, *args):
        full = list(args)
        for i, p in zip(wrt, params):
            full[i] = p
        return g(*full)

    dpacked = autograd.grad(packed, 0)

    def df(*args):
        return tuple(dpacked(tuple(args[i] for i in wrt), *args))

    return df


def _jax_grad(f, wrt):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    df = jax.grad(_rebind(f, jnp), argnums=wrt)

    def blocked(*args):  # wait for the asynchronous result
        return jax.block_until_ready(df(*args))

    return blocked


def available_peers(opts):
    """{name: make_grad(f, wrt)} for each importable peer."""
    peers = {}
    if opts.no_peers:
        return peers
    try:
        import autograd  # noqa: F401
        peers["autograd"] = _autograd_grad
    except Exception:
        pass
    try:
        import jax  # noqa: F401
        peers["jax (eager)"] = _jax_grad
    except Exception:
        pass
    return peers


def jax_jit_grad(f, wrt):
    """jax.jit of jax.grad, blocking on its result; None without JAX."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)
    df = jax.jit(jax.grad(_rebind(f, jnp), argnums=wrt))
    return lambda *args: jax.block_until_ready(df(*args))
