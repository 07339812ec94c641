"""Random programs over sequences of arrays (issue 36), and their check.

The main generator (generator.py) makes programs over floats and arrays of fixed shapes;
these make programs whose arguments are tuples and lists (of arrays of unequal shapes, or
of floats), which build lists of arrays by comprehensions and give them to NumPy functions
(np.fft.fft, np.max, np.square, np.stack, np.concatenate, ...), and whose output may be a
list of arrays of unequal shapes (np.split's parts). Deterministic from a seed.

Each program is checked in jvp, vjp and grad (scalar outputs) against central differences
(a five-point stencil where they disagree), with the dot-product test between the modes,
and its cotangents must have the structure of its arguments (a tuple stays a tuple, a list
a list, each item of its item's shape, a float item's a number).
"""

from __future__ import annotations

import random

import numpy as np

import s2sad

HEADER = "import numpy as np\n\n"

# an argument: (the text of its value's structure, a drawer)
ARG_KINDS = ("array", "tuple", "list", "floats")

# a list of arrays built by a comprehension over `x`, an array
_ITEMS = ["{x} * (i + 1.0)", "np.sin({x}) + 0.5 * i", "{x} ** 2 * (0.5 + i)",
          "np.cos({x} * (i + 1.0))"]
# what a list of arrays of one shape is given to (a number)
_CONSUMERS = [
    "np.sum(np.abs(np.fft.fft({c})))",
    "np.sum(np.abs(np.fft.ifft({c})) ** 2)",
    "np.max({c})",
    "np.sum(np.square({c}))",
    "np.linalg.norm({c})",
    "np.mean(np.sin({c}))",
    "np.sum(np.stack({c}, axis=1) ** 2)",
    "np.sum(np.array({c}) * 0.5)",
    "np.sum(np.concatenate({c}) ** 3)",
    "np.prod(np.cos({c}))",
    "np.sum(np.cumsum({c}, axis=0) * 0.25)",
]
# what a tuple or list of arrays of unequal shapes is given to (a number)
_UNEQUAL = [
    "np.sum(np.concatenate({t}) ** 2)",
    "np.sum(np.hstack({t}) * np.hstack({t}))",
    "np.sum({t}[0]) * np.sum({t}[1])",
    "np.sum(np.append({t}[1], {t}[0]) ** 3)",
]
# what a list of floats is given to (a number)
_FLOATS = [
    "np.sum(np.array({t}) ** 2)",
    "np.prod(np.cos({t}))",
    "{t}[0] * {t}[-1] + sum({t})",
    "np.sum(np.append({t}, 2.0) * np.arange(4.0))",
]


def generate(seed: int) -> tuple:
    """(source of a function `f`, its arguments) for `seed`."""
    rng = random.Random(seed)
    nprng = np.random.default_rng(seed)
    kind = rng.choice(ARG_KINDS)
    lines = []
    terms = []
    if kind == "array":
        params, args = "a", [nprng.uniform(-1.2, 1.2, 3)]
        x = "a"
    elif kind == "floats":
        params, args = "t", [[float(v) for v in nprng.uniform(-1.2, 1.2, 3)]]
        x = None
        terms.append(rng.choice(_FLOATS).format(t="t"))
    else:
        items = [nprng.uniform(-1.2, 1.2, 3), nprng.uniform(-1.2, 1.2, 2)]
        params, args = "t", [tuple(items) if kind == "tuple" else list(items)]
        x = rng.choice(["t[0]", "t[1]"])
        terms.append(rng.choice(_UNEQUAL).format(t="t"))
    if x is not None:
        for j in range(rng.randint(1, 2)):
            item = rng.choice(_ITEMS).format(x=x)
            lines.append(f"    comp{j} = [{item} for i in range({rng.randint(2, 4)})]")
            terms.append(rng.choice(_CONSUMERS).format(c=f"comp{j}"))
    total = " + ".join(terms)
    if x is not None and rng.random() < 0.3:
        # a list of arrays of unequal shapes as output
        lines.append(f"    s = {total}")
        ret = f"np.split({x} * s, [1])"
    else:
        ret = total
    src = f"def f({params}):\n" + "\n".join(lines + [f"    return {ret}"]) + "\n"
    return src, args


# -- the oracle ------------------------------------------------------------------------


def _leaves(tree) -> list:
    if isinstance(tree, (tuple, list)):
        return [x for t in tree for x in _leaves(t)]
    return [np.asarray(tree, dtype=np.float64)]


def _with_leaves(like, leaves):
    it = iter(leaves)

    def build(t):
        if isinstance(t, (tuple, list)):
            return type(t)(build(x) for x in t)
        v = next(it)
        return v if isinstance(t, np.ndarray) else float(v)
    return build(like)


def _flat(tree) -> np.ndarray:
    return np.concatenate([x.ravel() for x in _leaves(tree)])


def _fd_jvp(f, args, v, h, five_point):
    def at(s):
        return _flat(f(*[_with_leaves(a, [x + s * d for x, d in zip(_leaves(a), _leaves(t))])
                         for a, t in zip(args, v)]))
    if five_point:
        return (-at(2 * h) + 8 * at(h) - 8 * at(-h) + at(-2 * h)) / (12 * h)
    return (at(h) - at(-h)) / (2 * h)


def _close(a, b) -> bool:
    return bool(np.allclose(a, b, rtol=2e-5, atol=2e-6))


def _agrees(f, args, v, got_flat) -> bool:
    return _close(got_flat, _fd_jvp(f, args, v, 1e-6, False)) or \
        _close(got_flat, _fd_jvp(f, args, v, 1e-3, True))


def _same_structure(got, like) -> str:
    if isinstance(like, (tuple, list)):
        if type(got) is not type(like) or len(got) != len(like):
            return f"a {type(like).__name__} of {len(like)} expected, got {got!r}"
        for g, x in zip(got, like):
            problem = _same_structure(g, x)
            if problem:
                return problem
        return ""
    if isinstance(like, np.ndarray):
        if not isinstance(got, np.ndarray) or got.shape != like.shape:
            return f"an array of shape {like.shape} expected, got {got!r}"
        return ""
    if isinstance(got, np.ndarray) or np.ndim(got) != 0:
        return f"a number expected, got {got!r}"
    return ""


def check(f, args, seed: int) -> str:
    """'' when every mode agrees with the oracle, else what failed."""
    rng = np.random.default_rng(seed + 1)
    out = f(*args)
    v = [_with_leaves(a, [rng.uniform(-1, 1, x.shape) for x in _leaves(a)]) for a in args]
    u = _with_leaves(out, [rng.uniform(-1, 1, x.shape) for x in _leaves(out)])
    # jvp
    _, tangent = s2sad.jvp(f)(*args, *v)
    if not _agrees(f, args, v, _flat(tangent)):
        return f"jvp: {tangent!r}"
    # vjp: the structure of the arguments, J^T u item by item, the dot-product test
    _, pullback = s2sad.vjp(f)(*args)
    bars = pullback(u)
    for bar, a in zip(bars, args):
        problem = _same_structure(bar, a)
        if problem:
            return f"vjp: {problem}"
    for k, a in enumerate(args):
        leaves = _leaves(a)
        for j, leaf in enumerate(leaves):
            for idx in np.ndindex(leaf.shape):
                e = [np.zeros_like(x) for x in leaves]
                e[j][idx] = 1.0
                w = [_with_leaves(b, [np.zeros_like(x) for x in _leaves(b)]) for b in args]
                w[k] = _with_leaves(a, e)
                got = _leaves(bars[k])[j][idx]
                column = np.array([got])
                fd = np.array([np.dot(_flat(u), _fd_jvp(f, args, w, 1e-6, False))])
                fd5 = np.array([np.dot(_flat(u), _fd_jvp(f, args, w, 1e-3, True))])
                if not (_close(column, fd) or _close(column, fd5)):
                    return f"vjp: item {j} of argument {k} at {idx}: {got} != {fd[0]}"
    lhs = float(np.dot(_flat(u), _flat(tangent)))
    rhs = sum(float(np.dot(_flat(b), _flat(t))) for b, t in zip(bars, v))
    if not np.isclose(lhs, rhs, rtol=1e-8, atol=1e-9):
        return f"dot-product test: {lhs} != {rhs}"
    if not isinstance(out, list) and np.ndim(out) == 0:
        g = s2sad.grad(f)(*args)
        problem = _same_structure(g, args[0])
        if problem or not np.allclose(_flat(g), _flat(bars[0]) / float(u), rtol=1e-9,
                                      atol=1e-10):
            return f"grad: {problem or g!r}"
    return ""
