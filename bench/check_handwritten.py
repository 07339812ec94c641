"""Check every hand-written derivative in bench/workloads.py against central
finite differences in float64.

    python bench/check_handwritten.py

For a JVP `(out, out_dot)` the check compares `out` with the primal and
`out_dot` with (f(x + h v) - f(x - h v)) / 2h along the given tangent.

For a gradient, each `wrt` argument is checked:
* a scalar argument: one central difference;
* an array argument: directional derivatives along a few random directions
  (<grad, v> against (f(x + h v) - f(x - h v)) / 2h), plus a few single
  coordinates, all of them when the array has at most 200 elements
  (Richardson-extrapolated central differences with a larger step, since
  one coordinate of a 1e6-element sum moves it very little).
The error of a directional check is measured relative to sum(|grad| * |v|),
the size the inner product could have without cancellation.

The size-generic vectorised workloads (d, f) are checked again on 50-element
arrays, every coordinate.

Exits with status 1 if any check fails.  A script, not a pytest test.
"""

from __future__ import annotations

import dataclasses
import math
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import workloads as W  # noqa: E402

RTOL_DIRECTIONAL = 1e-6
RTOL_COORD = 1e-5


def _fd(f, args, i, v, h):
    """Central difference of f along v in argument i."""
    plus = list(args)
    minus = list(args)
    plus[i] = args[i] + h * v
    minus[i] = args[i] - h * v
    return (f(*plus) - f(*minus)) / (2.0 * h)


def _fd_richardson(f, args, i, v, h):
    """Central difference with one Richardson step (error O(h**4)).

    Used for single coordinates of large arrays, where the rounding of the
    full-size sum swamps a small step: a larger step stays accurate.
    """
    return (4.0 * _fd(f, args, i, v, h / 2.0) - _fd(f, args, i, v, h)) / 3.0


def _step(x):
    scale = max(1.0, float(np.max(np.abs(x)))) if np.ndim(x) else max(1.0, abs(x))
    return 1e-6 * scale


def check_jvp(w, rng):
    primals, tangents = w.make_args(rng)
    out, out_dot = w.hand(*primals, *tangents)
    ref = w.primal(*primals)
    errs = []
    value_err = abs(out - ref) / max(1.0, abs(ref))
    errs.append(("value", value_err, 1e-12))

    def along(t):
        return w.primal(*[p + t * d for p, d in zip(primals, tangents)])

    h = 1e-6
    fd = (along(h) - along(-h)) / (2.0 * h)
    scale = max(abs(fd), abs(out_dot), 1e-8)
    errs.append(("tangent", abs(out_dot - fd) / scale, RTOL_DIRECTIONAL))
    # one input at a time: the tangent with all other inputs' tangents zero
    for k in range(len(primals)):
        only = [d if j == k else 0.0 * d for j, d in enumerate(tangents)]
        _, dot_k = w.hand(*primals, *only)
        fd_k = _fd(w.primal, primals, k, tangents[k], h)
        scale = max(abs(fd_k), abs(dot_k), 1e-8)
        errs.append((f"tangent arg{k}", abs(dot_k - fd_k) / scale, RTOL_DIRECTIONAL))
    return errs


def check_grad(w, rng):
    args = w.make_args(rng)
    wrt = w.wrt if isinstance(w.wrt, tuple) else (w.wrt,)
    grads = W.as_tuple(w.hand(*args), w.wrt)
    assert len(grads) == len(wrt), f"{w.key}: expected {len(wrt)} gradients, got {len(grads)}"
    errs = []
    for i, g in zip(wrt, grads):
        x = args[i]
        h = _step(x)
        if np.ndim(x) == 0:
            fd = _fd(w.primal, args, i, 1.0, h)
            errs.append((f"arg{i}", abs(g - fd) / max(abs(fd), abs(g), 1e-8), RTOL_DIRECTIONAL))
            continue
        g = np.asarray(g)
        assert g.shape == np.shape(x), f"{w.key}: grad shape {g.shape} != arg shape {np.shape(x)}"
        for kind in ("normal", "uniform"):
            shape = np.shape(x)
            v = rng.standard_normal(shape) if kind == "normal" else rng.uniform(0, 1, shape)
            fd = _fd(w.primal, args, i, v, h)
            an = float(np.sum(g * v))
            scale = max(float(np.sum(np.abs(g) * np.abs(v))), 1e-12)
            errs.append((f"arg{i} dir[{kind}]", abs(an - fd) / scale, RTOL_DIRECTIONAL))
        size = int(np.size(x))
        coords = range(size) if size <= 200 else rng.choice(size, size=3, replace=False)
        for flat in coords:
            idx = np.unravel_index(flat, np.shape(x))
            v = np.zeros(np.shape(x))
            v[idx] = 1.0
            fd = _fd_richardson(w.primal, args, i, v, 1e3 * h)
            an = float(g[idx])
            scale = max(abs(an), abs(fd), 1e-3 * float(np.max(np.abs(g))), 1e-12)
            errs.append((f"arg{i}{list(map(int, idx))}", abs(an - fd) / scale, RTOL_COORD))
    return errs


def split_as_grad(w):
    """The workload with its hand-written split form as the gradient: pullback(1.0). Its
    value is checked against the primal, and its pullback for linearity in the seed."""
    def hand(*args):
        value, pullback = w.hand_vjp(*args)
        ref = w.primal(*args)
        assert abs(value - ref) <= 1e-12 * max(1.0, abs(ref)), f"{w.key}: split-form value"
        one, scaled = W.as_tuple(pullback(1.0), w.wrt), W.as_tuple(pullback(-2.5), w.wrt)
        for a, b in zip(one, scaled):
            a = -2.5 * np.asarray(a)
            assert np.max(np.abs(a - b), initial=0.0) <= 1e-12 * np.max(np.abs(a), initial=1.0), \
                f"{w.key}: pullback not linear in its seed"
        return pullback(1.0)

    return dataclasses.replace(w, name=w.name + " (split form)", hand=hand)


def main():
    rng = np.random.default_rng(0)
    failed = 0
    cases = [(w, check_jvp) for w in W.JVP_WORKLOADS]
    cases += [(w, check_grad) for w in W.GRAD_WORKLOADS + [W.OVERHEAD_WORKLOAD]]
    cases += [(split_as_grad(w), check_grad) for w in W.GRAD_WORKLOADS if w.hand_vjp]
    # the size-generic vectorised gradients again on small arrays, where every
    # coordinate is checked (at 1e6 elements only a few are)
    small = {"d": lambda r: (r.standard_normal(50),),
             "f": lambda r: (r.uniform(-1.5, 1.5, 50),)}
    for w in W.GRAD_WORKLOADS:
        if w.key in small:
            w_small = dataclasses.replace(w, name=w.name + " (n=50)", make_args=small[w.key])
            cases.append((w_small, check_grad))
    for w, check in cases:
        errs = check(w, rng)
        worst = max(errs, key=lambda e: e[1] / e[2])
        ok = all(e[1] <= e[2] and not math.isnan(e[1]) for e in errs)
        failed += not ok
        status = "ok  " if ok else "FAIL"
        print(f"{status} ({w.key}) {w.name:28s} {len(errs):2d} checks, "
              f"worst rel err {worst[1]:.1e} ({worst[0]}, tol {worst[2]:.0e})")
        if not ok:
            for label, err, tol in errs:
                if not err <= tol:
                    print(f"       {label}: rel err {err:.3e} > {tol:.0e}")
    print("all hand-written derivatives agree with finite differences"
          if not failed else f"{failed} workload(s) FAILED")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
