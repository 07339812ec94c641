"""Checkpointed reversal of loops (`checkpoints=K`, s2sad/passes/checkpoint.py and the
binomial schedule of s2sad/ir/revolve.py).

The checkpointed gradient runs the same operations as the taped one, so it must equal it
exactly (np.array_equal), and both are checked against central finite differences (the
independent oracle). The schedule records the most snapshots it held at once: never more
than K.
"""

import math

import numpy as np
import pytest

import s2sad
from s2sad.ir import revolve
from tests.oracle import assert_close, numerical_grad
from tests.passes import loop_programs as lp


def branchy_array_loop(x, n):
    """A for loop over an array state with an `if` inside."""
    s = x
    for i in range(n):
        if np.sum(s) > 0.5:
            s = np.sin(s) * 1.1 + 0.05 * i
        else:
            s = s * s - 0.3
    return np.sum(s * s)


def while_until(x, y):
    """A while loop whose trip count depends on the data (two carried values)."""
    s = x
    t = 0.0
    while np.sum(s * s) < 40.0:
        s = s * 1.3 + np.sin(s) * y
        t = t + np.sum(np.cos(s))
    return t + np.sum(s)


def nested(x, n):
    """An outer loop (checkpointed) whose body runs an inner loop (taped per outer step)."""
    s = x
    for i in range(n):
        z = s
        for j in range(3):
            z = np.tanh(z) * 1.2 + s * 0.1
        if i % 3 == 0:
            z = z * 0.9
        s = z
    return np.sum(s * s)


def strided(x, w):
    """A loop over a strided, offset range, reading an outer array at the index."""
    s = x
    for i in range(2, 17, 3):
        s = np.tanh(s * w[i] + 0.1)
    return np.sum(s)


def two_loops(x):
    s = x
    for i in range(6):
        s = np.sin(s) + 0.1 * s
    t = s
    for i in range(5):
        t = t * np.cos(t)
    return np.sum(t) + np.sum(s)


X = np.array([0.3, -0.2, 0.5, 0.1])
CASES = {
    "branchy_array_loop": (branchy_array_loop, (X, 13), 0),
    "while_until": (while_until, (np.array([0.4, 0.7, 0.2]), 0.6), (0, 1)),
    "nested": (nested, (X, 8), 0),
    "strided": (strided, (X, np.linspace(0.5, 1.5, 17)), (0, 1)),
    "two_loops": (two_loops, (X,), 0),
    "long_scalar_loop": (lp.long_scalar_loop, (0.3, 40), 0),
    "array_recurrence": (lp.array_recurrence, (np.linspace(-1, 1, 5),
                                                np.eye(5) * 0.9 + 0.05, 9), (0, 1)),
    "while_countdown": (lp.while_countdown, (0.7, 25), 0),
    "branchy_loop": (lp.branchy_loop, (0.7, 11), 0),
}


def _trips(name):
    return {"branchy_array_loop": 13, "nested": 8, "strided": 5, "two_loops": 6,
            "long_scalar_loop": 40, "array_recurrence": 9, "while_countdown": 25,
            "branchy_loop": 11}.get(name, 6)


def _equal(a, b) -> bool:
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    return np.array_equal(a, b) and type(a) is type(b)


@pytest.fixture
def schedules():
    revolve.record = []
    yield revolve.record
    revolve.record = None


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("k", ["1", "2", "3", "trips", "more"])
def test_checkpointed_gradient_is_the_taped_one(name, k, schedules):
    f, args, wrt = CASES[name]
    K = {"trips": _trips(name), "more": _trips(name) + 7}.get(k) or int(k)
    taped = s2sad.grad(f, wrt=wrt)(*args)
    d = s2sad.grad(f, wrt=wrt, checkpoints=K)
    got = d(*args)
    assert _equal(got, taped), (got, taped)
    assert "checkpoints(" in d.source and "restore(" in d.source
    assert schedules, "no loop was checkpointed"
    for ck in schedules:
        assert 1 <= ck.max_live <= K
    expected = numerical_grad(f, args, wrt if isinstance(wrt, tuple) else (wrt,))
    assert_close(got if isinstance(wrt, tuple) else (got,), expected)


def test_snapshot_count_never_exceeds_k_on_a_long_loop(schedules):
    f, args = lp.long_scalar_loop, (0.3, 1000)
    for K in (1, 2, 5, 32):
        del schedules[:]
        g = s2sad.grad(f, checkpoints=K)(*args)
        assert g == s2sad.grad(f)(*args)
        (ck,) = schedules
        assert ck.max_live == min(K, 1000)
        # the binomial schedule: the first sweep kept K snapshots, fewer than the trips
        assert ck.stores <= 1000


def test_pullback_called_twice(schedules):
    f, args = while_until, (np.array([0.4, 0.7, 0.2]), 0.6)
    out0, pb0 = s2sad.vjp(f)(*args)
    out, pb = s2sad.vjp(f, checkpoints=2)(*args)
    assert out == out0
    first, second, taped = pb(1.0), pb(1.0), pb0(1.0)
    assert _equal(first, taped) and _equal(second, taped)
    assert _equal(pb(2.5), pb0(2.5))
    assert all(ck.max_live <= 2 for ck in schedules)


def test_value_and_grad_and_decorator():
    f, args, _ = CASES["branchy_array_loop"]
    v, g = s2sad.value_and_grad(f, checkpoints=3)(*args)
    v0, g0 = s2sad.value_and_grad(f)(*args)
    assert v == v0 and np.array_equal(g, g0)

    @s2sad.grad(checkpoints=4)
    def h(x):
        for i in range(10):
            x = math.cos(x) + 0.1 * x
        return x

    assert h(0.3) == s2sad.grad(h.func)(0.3)
    assert h.checkpoints == 4


def test_loop_no_cotangent_reaches_stays_primal():
    def f(x, n):
        c = 0.0
        for i in range(n):
            c = c + 1.0
        return x * c

    d = s2sad.grad(f, checkpoints=2)
    assert d(2.0, 5) == 5.0
    assert "restore(" not in d.source


def test_schedule_is_binomial():
    """20,000 steps with 32 snapshots: every step is recomputed a handful of times (the
    repetition number), not the O(n) of one snapshot, and never more than K held."""
    n, K = 20_000, 32
    ck = revolve.checkpoints(K, 0, n, 1, 0)
    work = 0
    for i in range(n):
        revolve.snapshot(ck, i, i)
        work += 1
    for i in reversed(range(n)):
        j, state = revolve.restore(ck, i)
        assert state == j
        for k in range(j, i):
            revolve.snapshot(ck, k, k)
        work += i - j + 1
    assert ck.max_live <= K
    assert work <= (revolve.repetitions(n, K - 1) + 2) * n


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_bad_checkpoints_refused(bad):
    with pytest.raises(ValueError, match="checkpoints"):
        s2sad.grad(lambda x: x, checkpoints=bad)


def loop_in_branch(x, n):
    if n > 3:
        s = x
        for i in range(n):
            s = np.sin(s) + 0.5 * s
        r = np.sum(s)
    else:
        r = np.sum(x)
    return r


def grown_list(x, n):
    ys = []
    s = x
    for i in range(n):
        s = np.cos(s) * 0.9 + 0.1
        ys.append(s)
    return np.sum(np.stack(ys) ** 2)


@pytest.mark.parametrize("f, args", [(loop_in_branch, (X, 6)), (loop_in_branch, (X, 2)),
                                     (grown_list, (X, 7))], ids=["branch", "untaken", "list"])
def test_loop_in_a_branch_and_a_grown_list(f, args, schedules):
    got = s2sad.grad(f, checkpoints=2)(*args)
    assert np.array_equal(got, s2sad.grad(f)(*args))
    assert all(ck.max_live <= 2 for ck in schedules)
    assert_close((got,), numerical_grad(f, args, (0,)))


def test_a_loop_acting_on_state_keeps_its_tape(capsys, schedules):
    """A loop that prints would print twice if recomputed: it keeps its tape (and so do
    the loops of a derivative differentiated again, which push onto tapes)."""
    def f(x, n):
        for i in range(n):
            x = math.sin(x) + 0.2
            print("step", i)
        return x

    assert s2sad.grad(f, checkpoints=2)(0.3, 3) == s2sad.grad(f)(0.3, 3)
    assert capsys.readouterr().out.count("step 0") == 2  # once per derivative call
    assert not schedules

    def g(x):
        for i in range(5):
            x = math.sin(x) * 1.1
        return x

    assert s2sad.grad(s2sad.grad(g), checkpoints=2)(0.3) == s2sad.grad(s2sad.grad(g))(0.3)


# -- @s2sad.checkpoint on a helper ------------------------------------------------------


def _layer(h, w):
    a = np.tanh(h * w)
    return a * a + np.sin(h)


layer = s2sad.checkpoint(lambda h, w: _layer(h, w))


def net(h, w, n):
    for i in range(n):
        h = layer(h, w) * 0.5
    return np.sum(h)


def net_inlined(h, w, n):
    for i in range(n):
        h = _layer(h, w) * 0.5
    return np.sum(h)


def test_checkpointed_helper_is_recomputed_not_taped():
    args = (np.linspace(0.0, 1.0, 4), 0.7, 5)
    d = s2sad.grad(net, wrt=(0, 1))
    got = d(*args)
    want = s2sad.grad(net_inlined, wrt=(0, 1))(*args)
    assert all(np.array_equal(a, b) for a, b in zip(got, want))
    assert_close(got, numerical_grad(net, args, (0, 1)))
    source = d.source
    assert "np.tanh" not in source  # the helper's body is not inlined, nothing of it taped
    assert "_vjp(" in source  # its VJP runs in the reverse sweep
    # with loop checkpointing too, and in forward mode
    assert all(np.array_equal(a, b) for a, b in
               zip(s2sad.grad(net, wrt=(0, 1), checkpoints=2)(*args), want))
    t = np.ones(4)
    assert np.array_equal(s2sad.jvp(net, wrt=0)(*args, t)[1],
                          s2sad.jvp(net_inlined, wrt=0)(*args, t)[1])
    assert layer(1.0, 2.0) == _layer(1.0, 2.0)  # the helper itself is unchanged


def test_checkpoint_needs_a_function():
    with pytest.raises(TypeError, match="checkpoint"):
        s2sad.checkpoint(np.sin)


def test_second_order_through_a_checkpointed_helper_is_refused():
    """The helper's VJP is called at run time, opaque to a second transformation: refused
    at compile time with an S2SADError naming the call, never a wrong number."""
    args = (np.linspace(0.0, 1.0, 4), 0.7, 3)
    with pytest.raises(s2sad.S2SADError, match="rule"):
        s2sad.grad(s2sad.grad(net, wrt=1), wrt=1)(*args)
    with pytest.raises(s2sad.S2SADError, match="rule"):
        s2sad.hvp(net, wrt=1)(*args, 1.0)


def test_a_loop_drawing_random_numbers_keeps_its_tape(schedules):
    """Recomputing a draw would draw again: such a loop is not checkpointed."""
    def f(x, n):
        for i in range(n):
            x = np.sin(x) + 0.01 * np.random.normal(size=3)
        return np.sum(x)

    np.random.seed(0)
    got = s2sad.grad(f, checkpoints=2)(np.ones(3), 5)
    np.random.seed(0)
    assert np.array_equal(got, s2sad.grad(f)(np.ones(3), 5))
    assert not schedules
