"""Compiler intrinsics: the primitives that are not user-visible NumPy/math callables.

Tuple and list construction, attribute reads, the reverse-mode tape, and the
shape helpers that derivative rules call (`unbroadcast`, `zeros_like`).
"""

from __future__ import annotations

import sys

import numpy as np

from s2sad.ir.per_function import FunctionKeyed


class RecursiveCall:
    """A call of a user function that is already being lowered (recursion): not inlined.

    Its derivatives call the derivative of the function itself, dispatched on the kinds of
    the arguments at run time, so the derivative recurses the way the function does.
    """

    _instances = FunctionKeyed()  # goes with the function (it holds it, and its derivatives)
    make_derivative = None  # (func, mode, wrt) -> derivative object; set by s2sad.api
    # (call, argument kinds, keyword kinds) -> the kind of its result; set by s2sad.transform
    result_kind = None
    # (call, mode, positions differentiated, argument kinds, keywords) -> a SelfCall where
    # the derivative being generated serves the call itself, else None; set by s2sad.transform
    self_call = staticmethod(lambda call, mode, act, arg_kinds, kwargs: None)

    def __new__(cls, func):
        inst = cls._instances.get(func)
        if inst is None:
            inst = super().__new__(cls)
            inst.func = func
            inst.__name__ = func.__name__
            inst.derivatives = {}
            cls._instances[func] = inst
        return inst

    def __call__(self, *args, **kwargs):
        return self.func(*args, **kwargs)

    def derivative(self, mode: str, wrt: tuple):
        """The s2sad derivative (a Derivative object) this recursion calls."""
        key = (mode, wrt)
        d = self.derivatives.get(key)
        if d is None:
            d = self.derivatives[key] = RecursiveCall.make_derivative(self.func, mode, wrt)
        return d

    def __repr__(self) -> str:
        return f"RecursiveCall({self.__name__})"

    def __reduce__(self):
        return (RecursiveCall, (self.func,))


class CheckpointedCall(RecursiveCall):
    """A call of a helper marked `@s2sad.checkpoint`: not inlined. The forward sweep calls
    the helper itself and keeps only its arguments; the reverse sweep calls the helper's
    VJP on them (recomputing its forward pass) and applies the pullback at once, so none of
    the helper's intermediate values are stored (like `jax.checkpoint`)."""

    _instances: dict = {}

    def __repr__(self) -> str:
        return f"CheckpointedCall({self.__name__})"

    def __reduce__(self):
        return (CheckpointedCall, (self.func,))


class SelfCall:
    """A recursive call whose derivative is code of the module being generated: a function
    of it that calls itself (issue 35). Made only where the call's arguments have the kinds
    that code is compiled for (transform.self_recursion), so that the callee's code is the
    same specialisation, provably. Printed as the name of that function (`det_minors_vjp`);
    `mode` ("jvp", "vjp", or "value_and_grad": the form of a call returning one number for
    backend="numba", whose gradient the caller scales) and `wrt` (the positions
    differentiated) say which function."""

    def __init__(self, func, mode: str, wrt: tuple):
        self.func, self.mode, self.wrt = func, mode, tuple(wrt)
        self.__name__ = f"{getattr(func, '__name__', 'f')}_{mode}"

    def __eq__(self, other):
        return type(other) is SelfCall and (self.func, self.mode, self.wrt) == \
            (other.func, other.mode, other.wrt)

    def __hash__(self):
        return hash((SelfCall, self.mode, self.wrt))

    def __call__(self, *args, **kwargs):  # (never run: generated code calls its own function)
        raise RuntimeError(f"{self!r} is called by name in generated code only")

    def __repr__(self) -> str:
        return f"SelfCall({self.__name__}, wrt={self.wrt})"


def callee_name(fn) -> str:
    """How messages and the IR printer name a callee (`np.sin`, `math.exp`, `.T`)."""
    if isinstance(fn, SelfCall):
        return fn.__name__
    if isinstance(fn, Attr):
        return f".{fn.name}"
    if isinstance(fn, np.ufunc):  # (NumPy before 2.2 gives ufuncs no __module__)
        if getattr(np, fn.__name__, None) is fn:
            return f"np.{fn.__name__}"
        special = sys.modules.get("scipy.special")
        if special is not None and getattr(special, fn.__name__, None) is fn:
            return f"scipy.special.{fn.__name__}"
        return fn.__name__
    mod = getattr(fn, "__module__", None) or ""
    if mod.startswith("scipy.special."):  # (scipy.special._logsumexp.logsumexp)
        return f"scipy.special.{fn.__name__}"
    if mod.startswith("scipy.linalg.") and getattr(sys.modules.get("scipy.linalg"),
                                                   fn.__name__, None) is fn:
        return f"scipy.linalg.{fn.__name__}"  # (scipy.linalg._basic.solve_triangular)
    dist = getattr(getattr(fn, "__self__", None), "name", None)
    if mod.startswith("scipy.stats.") and isinstance(dist, str):  # (rv_continuous.logpdf)
        return f"scipy.stats.{dist}.{fn.__name__}"
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    short = getattr(fn, "__name__", None)
    if mod.startswith("numpy.random") and short and getattr(np.random, short, None) is fn:
        return f"np.random.{short}"  # (the global generator's methods, on every NumPy)
    if mod == "numpy" or mod.startswith("numpy._"):
        return f"np.{name}"
    if mod.startswith("numpy."):  # a public submodule: np.linalg.norm, np.fft.fft
        return f"np.{mod[len('numpy.'):]}.{name}"
    if mod in ("math", "operator", "builtins"):
        return name if mod == "builtins" else f"{mod}.{name}"
    return name


def astype(x, dtype):
    """`x.astype(dtype)`: the array method as a primitive."""
    return x.astype(dtype)


def item(x):
    """`x.item()`: the array method as a primitive."""
    return x.item()


def is_derivative(obj) -> bool:
    """Is `obj` a derivative object (it names the function it differentiates through the
    `__s2sad_function__` protocol attribute)? Lower layers recognise the API's
    `Derivative` this way without importing it."""
    return getattr(type(obj), "__s2sad_function__", None) is not None


def identity(x):
    """`x` itself: what a pruned tape read is replaced by until the simplifier folds it."""
    return x


def once_differentiable(x):
    """`x` itself, printed as `x`; differentiating it again gives NaN. It marks a derivative
    computed exactly from masks of the zero pattern (np.cumprod's at zero factors), which
    differentiating again would take as constants: a finite, wrong second derivative
    there, where NaN says that none is computed."""
    return x


def apply_pullback(pullback, g):
    """`pullback(g)`: the reverse sweep of a recursive call."""
    return pullback(g)


def make_tuple(*items):
    return items


def int_range(*args):
    """`tuple(range(...))`: static integer data (indices, orders), never differentiated."""
    return tuple(range(*args))


def print_values(*values, sep=" ", end="\n"):
    """The user's `print(...)`: kept in the primal part of the derivative, run once."""
    print(*values, sep=sep, end=end)


def check_assertion(condition, *message):
    """The user's `assert condition, message`: kept, with no derivative."""
    assert condition, message[0] if message else None


def format_text(template, *values):
    """An f-string, as `template.format(*values)` (its fields numbered in order)."""
    return template.format(*values)


class Grown:
    """A list built by `append` in differentiated code: a view of the first `n` items of a
    backing list. Appending to the newest view appends to the backing list (no copy), and
    every older view keeps its length, so a view taped for the reverse sweep still shows
    the list as it was. Reads like a list (len, indexing, iteration, NumPy)."""

    __slots__ = ("items", "n")

    def __init__(self, items, n):
        self.items, self.n = items, n

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if isinstance(i, slice):
            return self.items[:self.n][i]
        i = i.__index__()
        if not -self.n <= i < self.n:
            raise IndexError("list index out of range")
        return self.items[i % self.n]

    def __iter__(self):
        return iter(self.items[:self.n])

    def __array__(self, dtype=None, copy=None):
        return np.array(self.items[:self.n], dtype=dtype)

    def __eq__(self, other):
        return list(self) == (list(other) if isinstance(other, Grown) else other)

    __hash__ = None

    def __repr__(self):
        return repr(self.items[:self.n])


def list_append(xs, v):
    """`xs.append(v)` as a value: the list with `v` at the end (see Grown)."""
    if isinstance(xs, Grown):
        if len(xs.items) == xs.n:
            xs.items.append(v)
            return Grown(xs.items, xs.n + 1)
        items = xs.items[:xs.n] + [v]
    else:  # a list the function built (or the zero tangent of an empty one)
        items = list(xs) + [v]
    return Grown(items, len(items))


def as_list(xs):
    """A grown list handed back to the caller: a plain list."""
    return list(xs)


def make_list(*items):
    return list(items)


class Attr:
    """The primitive `x.<name>` (one object per attribute name)."""

    _instances: dict = {}
    make_derivative = None  # (func, mode, wrt) -> derivative object; set by s2sad.api

    def __new__(cls, name: str):
        inst = cls._instances.get(name)
        if inst is None:
            inst = super().__new__(cls)
            inst.name = name
            cls._instances[name] = inst
        return inst

    def __call__(self, x):
        return getattr(x, self.name)

    def __repr__(self) -> str:
        return f"Attr({self.name!r})"

    def __reduce__(self):
        return (Attr, (self.name,))


def new_tape():
    return []


def tape_push(tape, value):
    tape.append(value)


def tape_pop(tape):
    return tape.pop()


def tape_reader(tape):
    """Read a tape last-in first-out without consuming it, so a pullback can run twice."""
    return reversed(tape)


def tape_next(reader):
    return next(reader)


def sweep_boundary():
    """Marks where the forward sweep ends and the reverse sweep begins (never printed)."""




def batch_loop(fn, flags, *args, **kwargs):
    """Apply `fn` once per direction of the batched arguments (`flags` marks them): a
    vectorised Jacobian's fallback for a primitive without a batched form."""
    n = next(_batch_size(a) for a, f in zip(args, flags) if f)
    outs = [fn(*[_direction(a, i) if f else a for a, f in zip(args, flags)], **kwargs)
            for i in range(n)]
    if outs and type(outs[0]) in (list, tuple):  # (np.split's parts): each part batched
        return type(outs[0])(np.stack(parts, axis=-1) for parts in zip(*outs))
    return np.stack(outs, axis=-1)


def batch_jvp(jvp, flags, *args, **kwargs):
    """A JVP's (value, tangent) pair for each direction of the batched tangents (`flags`
    marks them), as one pair: the value, the same in every direction, and the tangents
    stacked on a trailing axis (a recursive call in a vectorised Jacobian: its value may
    decide an `if`, which an array of the value once per direction cannot)."""
    n = next(_batch_size(a) for a, f in zip(args, flags) if f)
    pairs = [jvp(*[_direction(a, i) if f else a for a, f in zip(args, flags)], **kwargs)
             for i in range(n)]
    tangents = [p[1] for p in pairs]
    if type(tangents[0]) in (list, tuple):  # a function of several results
        return pairs[0][0], type(tangents[0])(np.stack(parts, axis=-1)
                                              for parts in zip(*tangents))
    return pairs[0][0], np.stack(tangents, axis=-1)


def _batch_size(a) -> int:
    if type(a) in (list, tuple):  # a batched sequence: its items are (see make_list)
        return next(_batch_size(x) for x in a if type(x) in (list, tuple) or np.ndim(x))
    return int(np.shape(a)[-1])


def _direction(a, i):
    """Direction `i` of a batched value: of each item of a batched list or tuple (a Python
    number among them, which is the same in every direction, as it is)."""
    if type(a) in (list, tuple):
        return type(a)(_direction(x, i) for x in a)
    return a[..., i] if np.ndim(a) else a


def unbroadcast(g, x):
    """Sum `g` down to the shape of `x` (the cotangent of a broadcast operand)."""
    shape = np.shape(x)
    if np.shape(g) == shape:
        return g
    return sum_to_shape(g, shape)


def cast_like(g, x):
    """The cotangent `g` in the precision of `x`, a NumPy float or complex value (a float64
    array's cotangent through a cast to float32 is float64, as in JAX); `g` unchanged where
    `x` has no such dtype, `g` is already in it or is of another kind (real, complex)."""
    dtype = getattr(x, "dtype", None)
    if dtype is None or dtype.kind not in "fc" or getattr(g, "dtype", None) == dtype:
        return g
    if isinstance(g, np.ndarray):  # a precision, never a kind (real_like takes real parts)
        return g.astype(dtype) if g.dtype.kind == dtype.kind else g
    if isinstance(g, (float, np.floating)) and dtype.kind == "f" or \
            isinstance(g, (complex, np.complexfloating)) and dtype.kind == "c":
        return dtype.type(g)
    return g


def sum_to_shape(g, shape):
    """Sum the broadcast axes of `g` so that the result has `shape`."""
    g = np.asarray(g)
    extra = g.ndim - len(shape)
    if extra:
        g = g.sum(axis=tuple(range(extra)))
    axes = tuple(i for i, n in enumerate(shape) if n == 1 and g.shape[i] != 1)
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g if shape else g[()]


def broadcast_like(t, x):
    """Broadcast the tangent `t` to the shape of `x` (a tangent must have its primal's shape)."""
    shape = np.shape(x)
    if np.shape(t) == shape:
        return t
    return np.broadcast_to(t, shape)


def add_cotangents(a, b):
    """a + b for two cotangents of one value, item by item for a tuple or list (where +
    would concatenate): the sum where the value's kind was not known when the code was
    made (a recursive call's results, in a vectorised Jacobian)."""
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return type(a)(add_cotangents(x, y) for x, y in zip(a, b))
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def index_add(acc, index, g):
    """`acc` with `g` added at `index` (repeated indices accumulate), as a new array; for
    a tuple or list (a container's cotangent, where the kinds were not known when the
    code was made), the container with item `index` increased."""
    if isinstance(acc, (tuple, list)) and isinstance(index, int):
        return type(acc)(a + g if j == index % len(acc) else a for j, a in enumerate(acc))
    out = np.array(acc, dtype=np.result_type(acc, g, np.float64), copy=True)
    np.add.at(out, index, g)
    return out


def index_add_inplace(acc, index, g):
    """`acc[index] += g` on an array the derivative code owns (basic indices only)."""
    acc[index] += g
    return acc


def index_add_at(acc, index, g):
    """`np.add.at(acc, index, g)` on an array the derivative code owns (any indices)."""
    np.add.at(acc, index, g)
    return acc


def index_update(acc, index, v):
    """`acc` with `acc[index] = v`, as a new array (the value semantics of `a[i] = v`)."""
    out = np.array(acc, copy=True)
    out[index] = v
    return out


def filled_diagonal(a, val):
    """`a` with np.fill_diagonal(a, val) done to a copy (the value semantics of the write,
    as `index_update` is of `a[i] = v`). Printed as the user wrote it: `a_1 = a.copy()`,
    `np.fill_diagonal(a_1, val)`."""
    out = np.array(a, copy=True)
    np.fill_diagonal(out, val)
    return out


def index_update_inplace(acc, index, v):
    """`acc[index] = v` on an array the generated code owns."""
    acc[index] = v
    return acc


def add_inplace(acc, g):
    """`acc += g` on an array the generated code owns (the sum has acc's shape)."""
    acc += g
    return acc


def mul_inplace(acc, g):
    """`acc *= g` on an array the generated code owns (the product has acc's shape)."""
    acc *= g
    return acc


def basic_region(shape, index):
    """Where the basic index `index` (ints, slices, None, Ellipsis) selects in an array of
    `shape`: per axis (first position, count, step > 0, flipped, kept: not an int), and
    the positions of the new axes (None) in the selection's shape."""
    items = index if isinstance(index, tuple) else (index,)
    n_axes = sum(1 for i in items if i is not None and i is not Ellipsis)
    region, new_axes, axis, at = [], [], 0, 0
    for i in items:
        if i is Ellipsis:
            for _ in range(len(shape) - n_axes):
                region.append((0, shape[axis], 1, False, True))
                axis, at = axis + 1, at + 1
        elif i is None:
            new_axes.append(at)
            at += 1
        elif isinstance(i, slice):
            positions = range(*i.indices(shape[axis]))
            if positions.step > 0 or not positions:
                region.append((positions.start if positions else 0, len(positions),
                               abs(positions.step), False, True))
            else:  # the same positions, upwards; the values flipped
                region.append((positions[-1], len(positions), -positions.step, True, True))
            axis, at = axis + 1, at + 1
        else:
            region.append((i % shape[axis], 1, 1, False, False))
            axis += 1
    while axis < len(shape):
        region.append((0, shape[axis], 1, False, True))
        axis += 1
    return region, new_axes


def index_add_functional(acc, index, g):
    """`acc` with `g` added at the basic index `index`, as a new array, written as whole-array
    operations (np.pad, np.stack, +) that Dask and other NumPy-protocol libraries run as
    they are (no write into an array); a container's cotangent as in index_add."""
    if isinstance(acc, (tuple, list)) and isinstance(index, int):
        return type(acc)(a + g if j == index % len(acc) else a for j, a in enumerate(acc))
    shape = np.shape(acc)
    region, new_axes = basic_region(shape, index)
    selected = [count for _, count, _, _, kept in region if kept]
    for at in new_axes:
        selected.insert(at, 1)
    g = np.broadcast_to(g, tuple(selected))
    if 0 in selected:  # an empty selection: nothing added (Dask cannot pad an empty array)
        return acc + np.sum(g)
    g = np.reshape(g, tuple(count for _, count, _, _, _ in region))
    flips = tuple(a for a, r in enumerate(region) if r[3])
    if flips:
        g = np.flip(g, flips)
    widths = []
    for a, (first, count, step, _, _) in enumerate(region):
        if step > 1 and count > 1:  # step - 1 zeros after each entry, the last ones cut
            spread = np.stack([g] + [np.zeros_like(g)] * (step - 1), axis=a + 1)
            moved = list(np.shape(g))
            moved[a] = count * step
            g = np.take(np.reshape(spread, tuple(moved)), np.arange((count - 1) * step + 1), a)
        span = (count - 1) * step + 1 if count else 0
        widths.append((first, shape[a] - first - span))
    return acc + np.pad(g, widths)


def index_update_functional(acc, index, v):
    """`acc` with `acc[index] = v` (a basic index), as a new array, written as whole-array
    operations (np.pad, np.where): Dask and other NumPy-protocol libraries run them as
    they are."""
    shape = np.shape(acc)
    mask = index_add_functional(np.zeros_like(acc, dtype=bool, shape=shape), index, True)
    values = index_add_functional(np.zeros_like(acc, shape=shape), index, v)
    return np.where(mask, values, acc)


def take_slot(g, index):
    """The entries of `g` that `a[index] = v` wrote, as a copy (for v's cotangent).

    Where an integer-array index (an array or a list of ints, alone or in a tuple) repeats
    a position, NumPy keeps the last write: only that occurrence receives the cotangent.
    """
    out = np.array(g[index], copy=True) if isinstance(g, np.ndarray) else g
    if isinstance(out, np.ndarray) and out.ndim and _may_repeat(index):
        keep = _last_writes(g.shape, index)
        if not keep.all():
            out[~keep] = 0.0
    return out[()] if isinstance(out, np.ndarray) and out.ndim == 0 else out


def _may_repeat(index) -> bool:
    """Whether `index` holds an integer array (or a list, which NumPy reads as one): the
    only kind of index that can name a position twice."""
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(p, list) or (isinstance(p, np.ndarray) and p.dtype.kind in "iu")
               for p in parts)


def _last_writes(shape: tuple, index) -> np.ndarray:
    """A mask over the leading axes of `g[index]`: True where that entry is the last to
    name its position of an array of `shape` (NumPy's order of assignment, C order)."""
    if isinstance(index, (list, np.ndarray)):
        flat = np.asarray(index)
        if flat.ndim == 1 and flat.dtype.kind in "iu":  # the common case: rows of axis 0
            return _last_occurrences(flat % shape[0])
    positions = np.arange(int(np.prod(shape))).reshape(shape)[index]
    return _last_occurrences(positions.ravel()).reshape(positions.shape)


def _last_occurrences(flat: np.ndarray) -> np.ndarray:
    _, last = np.unique(flat[::-1], return_index=True)
    keep = np.zeros(len(flat), dtype=bool)
    keep[len(flat) - 1 - last] = True
    return keep


def prod_others(a, axis=None, keepdims=False, total=None):
    """For each factor of `np.prod(a, axis)` (whose value is `total`), the product of the
    others in its product: `total / a` where no factor is zero, else products of the
    factors before and after it (where one factor is zero, only it has a nonzero slope)."""
    a = np.asarray(a)
    if np.all(a):
        if axis is not None and not keepdims:
            total = np.expand_dims(total, axis)
        return total / a
    axes = tuple(range(a.ndim)) if axis is None else \
        tuple(int(i) % a.ndim for i in np.atleast_1d(axis))
    rest = [i for i in range(a.ndim) if i not in axes]
    moved = np.transpose(a, rest + list(axes))
    groups = moved.reshape(moved.shape[:len(rest)] + (-1,))
    ones = np.ones(groups.shape[:-1] + (1,), dtype=groups.dtype)
    before = np.cumprod(np.concatenate([ones, groups[..., :-1]], axis=-1), axis=-1)
    after = np.cumprod(np.concatenate([ones, groups[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    others = (before * after).reshape(moved.shape)
    return np.transpose(others, np.argsort(rest + list(axes)))


def cofactor(a):
    """The cofactor matrix of (a stack of) square matrices `a`, det(a) inv(a)^T: the
    derivative of np.linalg.det, also where `a` is singular (then from the SVD a = u s vh:
    det(u) det(vh) conj(u) diag(product of the other singular values) conj(vh), which is
    zero where two singular values are)."""
    try:
        return np.linalg.det(a)[..., None, None] * np.swapaxes(np.linalg.inv(a), -1, -2)
    except np.linalg.LinAlgError:  # an exactly singular matrix in the stack
        pass
    u, s, vh = np.linalg.svd(a)
    unit = np.linalg.det(u) * np.linalg.det(vh)
    others = prod_others(s, -1, False, np.prod(s, axis=-1))
    return unit[..., None, None] * ((np.conj(u) * others[..., None, :]) @ np.conj(vh))


def derivative_dtype(dtype):
    """The dtype of a derivative of values of `dtype`: the same float or complex precision
    (float32 stays float32, as NumPy computes it); float64 for ints and bools."""
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


def zeros_like(x):
    """A zero cotangent/tangent for `x`: 0.0 for a scalar, a float array otherwise (a list
    or tuple of numbers is the array NumPy makes of it; a grown list's is an array with one
    row per item, so that its cotangents add item by item)."""
    if isinstance(x, np.ndarray):
        return np.zeros(x.shape, dtype=derivative_dtype(x.dtype))
    if isinstance(x, Grown):
        first = np.asarray(x.items[0]) if x.n else np.zeros(())
        return np.zeros((x.n,) + first.shape, dtype=derivative_dtype(first.dtype))
    if isinstance(x, (list, tuple)):
        if all(isinstance(i, (int, float, np.number)) for i in x):  # an operand: [3.0, 5.0]
            a = np.asarray(x)
            return np.zeros(a.shape, dtype=derivative_dtype(a.dtype))
        return type(x)(zeros_like(i) for i in x)  # a list of arrays (np.split's result)
    if isinstance(x, np.generic) and x.dtype.kind in "fc":
        return x.dtype.type(0)
    return 0.0


def ones_like_output(x):
    if isinstance(x, np.ndarray):
        return np.ones(x.shape, dtype=derivative_dtype(x.dtype))
    return 1.0


def fresh_copy(x):
    """`x` itself when it is immutable, else a copy: a derivative never hands back an array
    that the caller passed in or that the generated code keeps."""
    return x.copy() if isinstance(x, np.ndarray) else x


class _NotComputed:
    """The value a branch yields for what only the other branch computes (a residual the
    reverse sweep reads only after that other branch): `None` in the generated code; where
    the branches merge, the kind of the other branch's value (see kind_values.join), since
    it is read only where it was computed. A user's own None stays None: `x is None` tests
    on it are decided from its kind."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "None"

    def __reduce__(self):
        return "NOT_COMPUTED"


NOT_COMPUTED = _NotComputed()


class ZeroValue:
    """Marker held in a Const: a symbolic zero tangent/cotangent of a given kind."""

    __slots__ = ("kind", "like")

    def __init__(self, kind, like=None):
        self.kind = kind
        self.like = like  # a variable of the same shape, for when the kind's shape is unknown

    def __repr__(self) -> str:
        return "ZERO"

    def __eq__(self, other):
        return isinstance(other, ZeroValue) and other.kind == self.kind

    def __hash__(self):
        return hash(("ZERO", self.kind))


RUNTIME_HELPERS = (unbroadcast, sum_to_shape, broadcast_like, zeros_like, fresh_copy)

from s2sad.ir import revolve  # noqa: E402  (checkpointing's run-time helpers)

# statements that act on state: never removed, reordered, shared or folded away
# np.random's draws advance the generator: each runs once, in order, as the user wrote it
RANDOM_DRAWS = frozenset({np.random.rand, np.random.randn, np.random.random,
                          np.random.random_sample, np.random.standard_normal,
                          np.random.uniform, np.random.normal, np.random.randint,
                          np.random.seed})

class Opaque:
    """A call of a function the compiler cannot read (a library function without a rule, a
    helper using what lowering refuses) whose arguments may carry no derivative: it is
    called as it is, at run time, once, in the primal part of the derivative. If a
    differentiated value reaches it, `errors` (why it could not be read) are raised there.
    """

    def __init__(self, func, errors, path=None, effect_only=False):
        self.func = func
        self.errors = list(errors)
        self.path = path  # (module, name) to import it from, where it has no __module__
        self.__name__ = getattr(func, "__name__", type(func).__name__)
        # a statement run for its effect (a call whose result is unused, `self.n += 1`,
        # `raise`): it runs as written on the primal values, and as its result carries
        # nothing on, a differentiated value may reach it (see passes/activity.py)
        self.effect_only = effect_only
        self.spelling = None  # how the user's code names it (`log.append`), where known
        # it may write into an array it is given: refused wherever a differentiated value
        # reaches it, even where its result is not used (see passes/activity.py)
        self.writes = False

    def __call__(self, *args, **kwargs):
        return self.func(*args, **kwargs)

    # each Opaque call is itself, and a member of EFFECTFUL through OPAQUE_CALLS
    def __eq__(self, other) -> bool:
        return self is other or other is OPAQUE_CALLS

    def __hash__(self) -> int:
        return hash(OPAQUE_CALLS)

    def refusal(self, loc):
        """The error to raise where a differentiated value reaches the call at `loc`."""
        first = self.errors[0]
        first.errors = list(self.errors)
        if first.loc is None:
            first.loc = loc
        return first

    def __repr__(self) -> str:
        return f"Opaque({self.__name__})"


class MethodCall:
    """`obj.name(...)` of a run-time object the compiler does not know (a NumPy Generator,
    a user's object passed in): called through an Opaque call."""

    def __init__(self, name: str):
        self.name = name
        self.__name__ = name

    def __call__(self, obj, *args, **kwargs):
        return getattr(obj, self.name)(*args, **kwargs)

    def __eq__(self, other) -> bool:
        return type(other) is MethodCall and other.name == self.name

    def __hash__(self) -> int:
        return hash(("MethodCall", self.name))

    def __repr__(self) -> str:
        return f"MethodCall({self.name})"


class SetAttr:
    """`obj.name = value` of an object the function was given (`self.nfev = n`): run as
    written, through an Opaque call made for its effect."""

    def __init__(self, name: str):
        self.name = name
        self.__name__ = "setattr"

    def __call__(self, obj, value):
        setattr(obj, self.name, value)

    def __eq__(self, other) -> bool:
        return type(other) is SetAttr and other.name == self.name

    def __hash__(self) -> int:
        return hash(("SetAttr", self.name))

    def __repr__(self) -> str:
        return f"SetAttr({self.name})"


def raise_exception(exc=None):
    """`raise exc` (`raise` alone: the exception being handled), as the user wrote it."""
    if exc is None:
        raise RuntimeError("No active exception to reraise")
    raise exc


class ContextCall:
    """`with cm:` around lowered statements: `cm.__enter__()` (`exit` False) or
    `cm.__exit__(None, None, None)` (`exit` True), each an Opaque call made for its effect."""

    def __init__(self, exit: bool):
        self.exit = exit
        self.__name__ = "__exit__" if exit else "__enter__"

    def __call__(self, cm):
        return cm.__exit__(None, None, None) if self.exit else cm.__enter__()

    def __eq__(self, other) -> bool:
        return type(other) is ContextCall and other.exit == self.exit

    def __hash__(self) -> int:
        return hash(("ContextCall", self.exit))

    def __repr__(self) -> str:
        return f"ContextCall({self.__name__})"


class WrittenCopy:
    """A function that writes into its first argument (np.fill_diagonal(a, v), a.fill(v),
    np.copyto(a, b)), on a copy of it: the new version of an array the function created."""

    def __init__(self, writer, spelling: str):
        self.writer = writer
        self.spelling = spelling
        self.__name__ = spelling.rpartition(".")[2]

    def __call__(self, a, *args, **kwargs):
        a = a.copy()
        self.writer(a, *args, **kwargs)
        return a

    def __eq__(self, other) -> bool:
        return type(other) is WrittenCopy and other.writer == self.writer

    def __hash__(self) -> int:
        return hash(("WrittenCopy", self.spelling))

    def __repr__(self) -> str:
        return f"WrittenCopy({self.spelling})"


class OutWriter:
    """f(*args, out=a) as a writer into `a` (see WrittenCopy, which passes `a` first)."""

    def __init__(self, fn):
        self.fn = fn
        self.__name__ = getattr(fn, "__name__", "out")

    def __call__(self, a, *args, **kwargs):
        kwargs.pop("out", None)
        return self.fn(*args, out=a, **kwargs)

    def __eq__(self, other) -> bool:
        return type(other) is OutWriter and other.fn == self.fn

    def __hash__(self) -> int:
        return hash(("OutWriter", self.fn))


class _OpaqueCalls:
    """The one member of EFFECTFUL that every Opaque call equals (see Opaque.__eq__), so
    that `fn in EFFECTFUL` stays a set lookup in C."""

    def __repr__(self) -> str:
        return "<every Opaque call>"


OPAQUE_CALLS = _OpaqueCalls()

def check_scalar_output(value):
    """A gradient's output is one real number: checked where the code runs where its kind
    did not say (a value a call the compiler could not read returned)."""
    if np.size(value) != 1 or np.iscomplexobj(value):
        raise ValueError(
            f"grad needs a function with one real output, but it returned "
            f"{'a complex value' if np.iscomplexobj(value) else 'an array'} of shape "
            f"{np.shape(value)}: use s2sad.vjp for a vector-Jacobian product, or "
            "s2sad.jacrev for the whole Jacobian")


def derivative_reaches(*values):
    """Does a derivative reach these values? Decided while compiling (passes/tries.py): a
    library function with a `try` is inlined, its `try` body differentiated, where it does,
    and called as it is where it does not. (Called where the code runs only in code that
    differentiates nothing: then it does not.)"""
    return False


EFFECTFUL = frozenset({revolve.checkpoints, revolve.snapshot, revolve.restore,
                       tape_push, tape_pop, tape_next, sweep_boundary, index_add_inplace,
                       index_add_at, index_update_inplace, add_inplace, mul_inplace,
                       print_values, check_assertion, check_scalar_output,
                       OPAQUE_CALLS}) | RANDOM_DRAWS
