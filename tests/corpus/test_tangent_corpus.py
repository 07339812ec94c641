"""Google Tangent's test corpus (tests/corpus/tangent_programs.py) through s2sad.

For every program, at random float64 points away from kinks and branch thresholds:
- reverse mode: the pullback equals J^T u from the finite-difference Jacobian, with
  cotangents of their arguments' kind and structure (floats, arrays, tuples, dicts);
  `grad` and `value_and_grad` of a scalar program equal the finite-difference gradient;
- forward mode: the JVP equals the central difference along a random tangent, and
  agrees with the VJP to rounding (<u, J v> == <J^T u, v>);
- second order, where Tangent differentiates twice (reverse over reverse for the
  scalar programs, Hessian-vector products for its two HVP programs): `hessian`,
  `hvp`, grad of grad, and the three HVP compositions against second differences of
  the function itself (never s2sad's own gradient); and beyond Tangent's own tests, the
  Hessian and reverse over reverse of every other program with a scalar result;
- a program s2sad refuses raises its S2SADError subclass, located on the right line of
  this corpus with the source line and a hint.

The oracle works on the leaves of the arguments (floats and arrays inside tuples and
dicts), so containers are checked with the same finite differences.
"""

from __future__ import annotations

import copy
import inspect
import os

import numpy as np
import pytest

import s2sad
import s2sad.errors

try:  # works both with and without tests/__init__.py
    from tests import oracle
    from tests.corpus import tangent_programs as tp
except ImportError:  # pragma: no cover
    import oracle
    from corpus import tangent_programs as tp

N_POINTS = 2
AGREE_RTOL = 1e-10
# second differences of a function (eps 1e-4 around first differences of 1e-5)
SECOND_RTOL, SECOND_ATOL = 1e-4, 1e-5

ACCEPTED = [e for e in tp.ENTRIES if not e.refused]
REFUSED = [e for e in tp.ENTRIES if e.refused]


def _modes(entries, mode):
    chosen = [e for e in entries if not (e.refused and mode in e.refused_in)]
    return pytest.mark.parametrize("e", chosen, ids=[e.name for e in chosen])


# --------------------------------------------------------------------------
# leaves of argument trees (floats, arrays, tuples, lists, dicts)
# --------------------------------------------------------------------------


def leaves(tree) -> list:
    if isinstance(tree, (tuple, list)):
        return [leaf for item in tree for leaf in leaves(item)]
    if isinstance(tree, dict):
        return [leaf for item in tree.values() for leaf in leaves(item)]
    return [tree]


def rebuild(like, flat):
    """`like`'s structure with its leaves taken in order from the iterator `flat`."""
    if isinstance(like, (tuple, list)):
        return type(like)(rebuild(item, flat) for item in like)
    if isinstance(like, dict):
        return {key: rebuild(item, flat) for key, item in like.items()}
    return next(flat)


def random_tree(rng, like):
    return rebuild(like, iter(oracle.random_like(rng, leaf) for leaf in leaves(like)))


def assert_same_structure(actual, like, what):
    if isinstance(like, (tuple, list, dict)):
        assert type(actual) is type(like), (
            f"{what}: {type(actual).__name__} for a {type(like).__name__}"
        )
        assert len(actual) == len(like), f"{what}: {len(actual)} items for {len(like)}"
        if isinstance(like, dict):
            assert list(actual) == list(like), f"{what}: keys {list(actual)} for {list(like)}"
            for key in like:
                assert_same_structure(actual[key], like[key], f"{what}[{key!r}]")
        else:
            for k, (a, b) in enumerate(zip(actual, like)):
                assert_same_structure(a, b, f"{what}[{k}]")
        return
    oracle.assert_like(actual, like, what)


class Flat:
    """The program as a function of the leaves of its arguments, for the oracle."""

    def __init__(self, e: tp.Entry, args: tuple):
        self.fn, self.args = e.fn, args
        self.flat_args = [copy.deepcopy(leaf) for leaf in leaves(args)]
        self.wrt = []  # leaf indices of the differentiated arguments
        start = 0
        for i, arg in enumerate(args):
            n = len(leaves(arg))
            if i in e.wrt_idx:
                self.wrt.extend(range(start, start + n))
            start += n

    def __call__(self, *flat):
        return self.fn(*copy.deepcopy(rebuild(self.args, iter(flat))))

    def vjp(self, u):
        return list(oracle.numerical_vjp(self, self.flat_args, self.wrt, u))

    def jvp(self, tangents):
        flat_t = [leaf for t in tangents for leaf in leaves(t)]
        return oracle.numerical_jvp(self, self.flat_args, self.wrt, flat_t)


def _points(e, salt):
    rng = oracle.rng_for(e.name, salt)
    return rng, [e.make_args(rng) for _ in range(N_POINTS)]


def _is_scalar(out) -> bool:
    return not isinstance(out, (tuple, list)) and np.ndim(out) == 0


# --------------------------------------------------------------------------
# first order
# --------------------------------------------------------------------------


@_modes(ACCEPTED + REFUSED, "rev")
def test_reverse_mode_matches_finite_differences(e):
    f_vjp = s2sad.vjp(e.fn, wrt=e.wrt)
    rng, points = _points(e, "rev")
    for args in points:
        where = f"{e.name} at {args!r}"
        expected_out = e.fn(*copy.deepcopy(args))
        out, pullback = f_vjp(*copy.deepcopy(args))
        oracle.assert_close(out, expected_out, 1e-12, 1e-14, what=f"out of {where}")
        u = random_tree(rng, expected_out)
        cots = pullback(u)
        assert isinstance(cots, tuple) and len(cots) == len(e.wrt_idx), where
        for i, cot in zip(e.wrt_idx, cots):
            assert_same_structure(cot, args[i], f"cotangent of argument {i} of {where}")
        got = [leaf for cot in cots for leaf in leaves(cot)]
        oracle.assert_close(got, Flat(e, args).vjp(u), what=f"pullback({u!r}) of {where}")

        if _is_scalar(expected_out):
            g = s2sad.grad(e.fn, wrt=e.wrt)(*copy.deepcopy(args))
            g = g if isinstance(e.wrt, tuple) else (g,)
            got = [leaf for cot in g for leaf in leaves(cot)]
            oracle.assert_close(got, Flat(e, args).vjp(1.0), what=f"grad of {where}")
            # Tangent's preserve_result: the value with the gradient, from one sweep
            value, g = s2sad.value_and_grad(e.fn, wrt=e.wrt)(*copy.deepcopy(args))
            oracle.assert_close(value, expected_out, 1e-12, 1e-14, what=f"value of {where}")
            g = g if isinstance(e.wrt, tuple) else (g,)
            got = [leaf for cot in g for leaf in leaves(cot)]
            oracle.assert_close(got, Flat(e, args).vjp(1.0), what=f"value_and_grad of {where}")


@_modes(ACCEPTED + REFUSED, "fwd")
def test_forward_mode_matches_finite_differences(e):
    f_jvp = s2sad.jvp(e.fn, wrt=e.wrt)
    rng, points = _points(e, "fwd")
    for args in points:
        where = f"{e.name} at {args!r}"
        tangents = [random_tree(rng, args[i]) for i in e.wrt_idx]
        out, out_dot = f_jvp(*copy.deepcopy(args), *tangents)
        oracle.assert_close(out, e.fn(*copy.deepcopy(args)), 1e-12, 1e-14, what=f"out of {where}")
        assert_same_structure(out_dot, out, f"tangent of the output of {where}")
        oracle.assert_close(out_dot, Flat(e, args).jvp(tangents), what=f"jvp of {where}")


@_modes([e for e in ACCEPTED + REFUSED if not e.refused], "fwd")
def test_jvp_and_vjp_agree(e):
    """The dot-product test: <u, J v> from the JVP equals <J^T u, v> from the VJP."""
    rng, points = _points(e, "dot")
    for args in points:
        tangents = [random_tree(rng, args[i]) for i in e.wrt_idx]
        out, out_dot = s2sad.jvp(e.fn, wrt=e.wrt)(*copy.deepcopy(args), *tangents)
        u = random_tree(rng, out)
        cots = s2sad.vjp(e.fn, wrt=e.wrt)(*copy.deepcopy(args))[1](u)
        lhs = oracle.vdot(leaves(u), leaves(out_dot))
        rhs = oracle.vdot(leaves(list(cots)), leaves(tangents))
        scale = float(np.sum(np.abs(oracle.flatten(leaves(u)) * oracle.flatten(leaves(out_dot)))))
        oracle.assert_dot_close(lhs, rhs, scale, AGREE_RTOL, 1e-300, what=f"{e.name} at {args!r}")


# --------------------------------------------------------------------------
# second order
# --------------------------------------------------------------------------


def second_differences(e, args, i):
    """d^2 f / d arg_i^2 as a (size, size) matrix: central differences of the
    finite-difference gradient (never s2sad's)."""

    def gradient(*a):
        return oracle.numerical_grad(e.fn, a, (i,), eps=1e-5)[0]

    return oracle.numerical_jacobian(gradient, args, (i,), eps=1e-4)[0]


SECOND = [e for e in ACCEPTED if e.second_order]


@pytest.mark.parametrize("e", SECOND, ids=[e.name for e in SECOND])
def test_hessian_and_hvp_match_second_differences(e):
    rng, points = _points(e, "second")
    for args in points:
        for i in e.wrt_idx:
            where = f"{e.name} wrt {i} at {args!r}"
            expected = second_differences(e, args, i)
            H = s2sad.hessian(e.fn, wrt=i)(*args)
            n = int(np.size(args[i]))
            assert np.shape(H) == np.shape(args[i]) * 2, f"hessian shape of {where}"
            oracle.assert_close(np.reshape(H, (n, n)), expected, SECOND_RTOL, SECOND_ATOL,
                                what=f"hessian of {where}")
            v = oracle.random_like(rng, args[i])
            hv = s2sad.hvp(e.fn, wrt=i)(*args, v)
            oracle.assert_like(hv, args[i], f"hvp of {where}")
            oracle.assert_close(np.ravel(hv), expected @ np.ravel(v), SECOND_RTOL, SECOND_ATOL,
                                what=f"hvp of {where}")
            if np.ndim(args[i]) == 0:  # Tangent's reverse over reverse
                gg = s2sad.grad(s2sad.grad(e.fn, wrt=i), wrt=i)(*args)
                oracle.assert_close(gg, float(expected[0, 0]), SECOND_RTOL, SECOND_ATOL,
                                    what=f"grad of grad of {where}")


def _scalar_output_entries():
    for e in ACCEPTED:
        if e.second_order:
            continue  # (checked above)
        args = e.make_args(oracle.rng_for(e.name, "probe"))
        if not _is_scalar(e.fn(*copy.deepcopy(args))):
            continue
        for i in e.wrt_idx:
            if isinstance(args[i], (float, np.ndarray)):
                yield pytest.param(e, i, id=f"{e.name}-{i}")


@pytest.mark.parametrize("e, i", list(_scalar_output_entries()))
def test_second_order_beyond_tangents_own(e, i):
    """Tangent leaves reverse over reverse of its vector programs commented out; here every
    other program with a scalar result gets its Hessian (forward over reverse) and H v by
    reverse over reverse, against second differences."""
    rng, points = _points(e, "second-beyond")
    args = points[0]
    expected = second_differences(e, args, i)
    n = int(np.size(args[i]))
    H = s2sad.hessian(e.fn, wrt=i)(*copy.deepcopy(args))
    oracle.assert_close(np.reshape(H, (n, n)), expected, SECOND_RTOL, SECOND_ATOL,
                        what=f"hessian of {e.name} wrt {i}")
    v = oracle.random_like(rng, args[i])
    # with wrt=i the grad is a function of all the arguments: ints among them stay out
    floats = tuple(k for k, a in enumerate(args) if isinstance(a, (float, np.ndarray)))
    _, pullback = s2sad.vjp(s2sad.grad(e.fn, wrt=i), wrt=floats)(*copy.deepcopy(args))
    hv = pullback(v)[floats.index(i)]
    oracle.assert_close(np.ravel(hv), expected @ np.ravel(v), SECOND_RTOL, SECOND_ATOL,
                        what=f"reverse over reverse of {e.name} wrt {i}")


# Tangent's HVP test composes its two modes three ways; so do we.
straight_line_jvp = s2sad.jvp(tp.straight_line)
through_a_call_jvp = s2sad.jvp(tp.through_a_call)


def straight_line_along(x, v):
    _, slope = straight_line_jvp(x, v)
    return slope


def through_a_call_along(x, v):
    _, slope = through_a_call_jvp(x, v)
    return slope


HVP_PROGRAMS = [(tp.straight_line, straight_line_along), (tp.through_a_call, through_a_call_along)]


@pytest.mark.parametrize("f, along", HVP_PROGRAMS, ids=[f.__name__ for f, _ in HVP_PROGRAMS])
def test_hvp_three_compositions(f, along):
    e = next(e for e in tp.ENTRIES if e.fn is f)
    rng, points = _points(e, "hvp")
    for (x,) in points:
        v = oracle.uniform(rng, -1.0, 1.0, x.shape)
        expected = second_differences(e, (x,), 0) @ v
        forward_over_reverse = s2sad.hvp(f)(x, v)
        reverse_over_reverse = s2sad.vjp(s2sad.grad(f))(x)[1](v)[0]  # H symmetric
        reverse_over_forward = s2sad.grad(along)(x, v)
        for name, got in [
            ("forward over reverse", forward_over_reverse),
            ("reverse over reverse", reverse_over_reverse),
            ("reverse over forward", reverse_over_forward),
        ]:
            oracle.assert_close(got, expected, SECOND_RTOL, SECOND_ATOL,
                                what=f"{name} of {f.__name__}")


# --------------------------------------------------------------------------
# refusals
# --------------------------------------------------------------------------


def _refusal_cases():
    for e in REFUSED:
        for mode in e.refused_in:
            yield pytest.param(e, mode, id=f"{e.name}-{mode}")


@pytest.mark.parametrize("e, mode", list(_refusal_cases()))
def test_refused_with_location_and_hint(e, mode):
    args = e.make_args(oracle.rng_for(e.name, "refused"))
    expected_cls = getattr(s2sad.errors, e.refused)
    with pytest.raises(s2sad.S2SADError) as info:
        if mode == "rev":
            s2sad.vjp(e.fn, wrt=e.wrt)(*args)
        else:
            tangents = [random_tree(np.random.default_rng(0), args[i]) for i in e.wrt_idx]
            s2sad.jvp(e.fn, wrt=e.wrt)(*args, *tangents)
    err = info.value
    assert isinstance(err, expected_cls), f"{type(err).__name__}: {err}"
    lines, first = inspect.getsourcelines(e.fn)
    offset = next(k for k, line in enumerate(lines) if e.marker in line)
    assert err.filename is not None and os.path.samefile(err.filename, tp.__file__), err.filename
    assert err.lineno == first + offset, f"line {err.lineno}, expected {first + offset}\n{err}"
    assert err.col_offset == lines[offset].index(e.marker), str(err)
    assert e.marker in err.source_line and err.hint, str(err)
    assert f"{err.lineno}:" in str(err) and "^" in str(err)
