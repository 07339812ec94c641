"""Writes into a dict or list the function built (`d["a"] = v`, `xs[1] = v`): every name
for the same object sees the write, as in Python; a container or a calling function that
holds it, or a name an `if` may have bound to it, and that would see the write in Python
but not in the derivative, is refused.

Found from Tangent's dict programs: `e = d; d["a"] = 2 * x; return e["a"] * x` gave the
derivative's primal and gradient of the unwritten dict (silently wrong), and its commented
out test_subscript_overwrite (`x = [1, a * a, 3]; x[1] = x[0] * x[1]`) was refused.
"""

import inspect

import numpy as np
import pytest

import s2sad
from s2sad.errors import NonDifferentiableError
from tests.oracle import assert_close, numerical_grad, numerical_jvp, rng_for


def dict_seen_through_alias(x):
    d = {"a": x, "b": 1.0}
    e = d
    d["a"] = 2.0 * x
    return e["a"] * x + e["b"]


def list_seen_through_alias(x):
    xs = [x, 1.0]
    ys = xs
    xs[1] = x * x
    return ys[1] + xs[0]


def list_item_overwritten(a):
    row = [1, a * a, 3]
    row[1] = row[0] * row[1]
    return row[1] + row[1]


def list_item_at_negative_index(x):
    row = [x, 1.0, 2.0]
    row[-1] = np.sin(x)
    return row[2] * row[0]


def dict_in_a_list(x):
    d = {"a": x}
    items = [d]
    d["a"] = 3.0 * x
    return items[0]["a"]


def alias_made_in_a_branch(x):
    d = {"a": x}
    if x > 0:
        e = d
    else:
        e = {"a": 1.0}
    d["a"] = 5.0 * x
    return e["a"]


def written_where_a_branch_chose_it(x):
    e = {"a": x}
    if x > 0:
        d = e
    else:
        d = {"a": 1.0}
    d["a"] = 5.0 * x
    return e["a"] * x


def unrelated_dict_from_a_branch(x):
    d = {"a": x}
    if x > 0:
        e = {"a": 2.0}
    else:
        e = {"a": 1.0}
    d["a"] = 5.0 * x
    return e["a"] * d["a"]


def extended_where_a_branch_named_it(x):
    xs = [x]
    if x > 0:
        ys = xs
    else:
        ys = [1.0]
    xs += [2.0 * x]
    return sum(ys)


def _write_and_read(d, x):
    d["a"] = 2.0 * x
    return d["a"]


def helper_writes_callers_dict(x):
    d = {"a": x}
    y = _write_and_read(d, x)
    return d["a"] * y


@pytest.mark.parametrize("f", [dict_seen_through_alias, list_seen_through_alias,
                               list_item_overwritten, list_item_at_negative_index,
                               unrelated_dict_from_a_branch],
                         ids=lambda f: f.__name__)
def test_a_write_is_seen_through_every_name(f):
    rng = rng_for(f.__name__)
    for x in rng.uniform(-2.0, 2.0, 3):
        x = float(x)
        expected = numerical_grad(f, (x,), (0,))[0]
        out, pullback = s2sad.vjp(f)(x)
        assert_close(out, f(x), 1e-14, 1e-14, what="primal")
        assert_close(pullback(1.0)[0], expected, what="vjp")
        assert_close(s2sad.grad(f)(x), expected, what="grad")
        out, out_dot = s2sad.jvp(f)(x, 0.5)
        assert_close(out_dot, numerical_jvp(f, (x,), (0,), [0.5]), what="jvp")


@pytest.mark.parametrize("f, marker, holder", [
    (dict_in_a_list, 'd["a"] = 3.0 * x', "`items` holds it"),
    (alias_made_in_a_branch, 'd["a"] = 5.0 * x', "`e` holds it, or may be it"),
    (written_where_a_branch_chose_it, 'd["a"] = 5.0 * x', "`e` holds it, or may be it"),
    (_write_and_read, 'd["a"] = 2.0 * x', "the code that called this function holds it"),
], ids=["container", "branch-alias", "branch-choice", "caller"])
def test_a_write_another_holder_would_miss_is_refused(f, marker, holder):
    top = helper_writes_callers_dict if f is _write_and_read else f
    with pytest.raises(NonDifferentiableError, match=holder) as info:
        s2sad.grad(top)(0.7)  # (x > 0: the branch that makes the alias)
    err = info.value
    lines, first = inspect.getsourcelines(f)
    offset = next(k for k, line in enumerate(lines) if marker in line)
    assert err.lineno == first + offset and marker in err.source_line and err.hint, str(err)


def test_extending_a_list_a_branch_may_have_named_is_refused():
    # `xs += [...]` on a list literal gives every name for it the new items; a name an `if`
    # bound to it in one branch is a merged value they did not reach (silently x, not 3 x)
    with pytest.raises(s2sad.UnsupportedSyntaxError, match="`ys` holds or may be") as info:
        s2sad.grad(extended_where_a_branch_named_it)(0.7)
    lines, first = inspect.getsourcelines(extended_where_a_branch_named_it)
    assert info.value.lineno == first + 6 and "xs +=" in info.value.source_line


def dict_updated_in_a_loop(x):
    params = {"w": x, "b": 1.0}
    for _ in range(3):
        params["w"] = params["w"] * x
    return params["w"]


def test_a_dict_changed_in_a_loop_is_refused_at_the_loop():
    # was "a dict written in the function can be indexed, iterated and passed to its
    # helpers, not returned or stored in an array": nothing here returns or stores it
    with pytest.raises(s2sad.UnsupportedSyntaxError, match="changes inside this loop") as info:
        s2sad.grad(dict_updated_in_a_loop)(0.7)
    lines, first = inspect.getsourcelines(dict_updated_in_a_loop)
    assert info.value.lineno == first + 2 and "for _ in range(3)" in info.value.source_line
    assert "build `params` after the loop" in info.value.hint
