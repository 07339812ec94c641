"""What a kind is: the Kind of a value (Python scalar, array of a shape and dtype, tuple...),
how a kind is read off a concrete value, joined where control flow merges, stood in for by an
example value, and the dtype of an elementwise result (complex wins over float, float over int).

Split from kinds.py (the inference over a function), which re-exports these names.
"""

from __future__ import annotations

import math
import operator
import zlib
from dataclasses import dataclass, replace

import numpy as np

from s2sad.ir import prims
from s2sad.ir.dims import broadcast_shapes

_UNSET = object()


@dataclass(frozen=True)
class Kind:
    """`tag` is one of "scalar", "array", "tuple", "object", "unknown".

    scalar/array: `dtype` is a NumPy dtype kind letter ('f', 'i', 'b', 'c', 'u');
    array: `shape` is a tuple, or None when unknown; tuple: `items`;
    `value` is a compile-time-known value of a non-differentiable int/bool/tuple, or _UNSET.
    `family`: "" for NumPy and Python values; for an array of another library that follows
    NumPy's protocols (`__array_function__`), and for a value computed from one, the
    library's name ("dask", "cupy"): code specialised for it is functional (no in-place
    writes, no `out=`), and for a lazy family ("dask") needs no value while it runs.
    """

    tag: str
    dtype: str = ""
    shape: tuple | None = None
    items: tuple = ()
    value: object = _UNSET
    rank: int | None = None  # an array's number of dimensions when its shape is unknown
    # a tuple that stands for a dict argument ("dict", keys) or a namedtuple ("record", its
    # class): the dispatcher passes its values as a tuple, lowering reads them by key or field
    view: tuple | None = None
    family: str = ""  # the array library of a non-NumPy array ("dask"), see above
    # an argument's exact dtype ("f8", "f4": np.dtype.str without its byte order), which the
    # dispatcher keys on: lowering decides `X.dtype == np.float32` by it. "" where not known
    # (what kind rules compute). Not part of a kind's identity (== and hash ignore it: kinds
    # of values of one letter infer alike); the cache's key and lowering's views read it
    precision: str = ""

    def __eq__(self, other):
        # (the generated comparison, after an identity test: the kinds compared are most
        # often one object, shared through the memo of eval_kind)
        if self is other:
            return True
        if other.__class__ is not self.__class__:
            return NotImplemented
        return (self.tag, self.dtype, self.shape, self.items, self.value, self.rank,
                self.view, self.family) == (other.tag, other.dtype, other.shape, other.items,
                                            other.value, other.rank, other.view, other.family)

    def __hash__(self):
        # (the generated hash, computed once: a kind is a key of every memo of kind rules
        # and plans, hashed again at each lookup; not kept when the kind is pickled, as a
        # hash of strings is another in another process)
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.tag, self.dtype, self.shape, self.items, self.value, self.rank,
                      self.view, self.family))
            object.__setattr__(self, "_hash", h)
        return h

    def __getstate__(self):
        state = dict(self.__dict__)
        state.pop("_hash", None)
        return state

    @property
    def lazy(self) -> bool:
        """A value of a library that builds a graph and computes it later (Dask): reading
        its value while the code runs (`if`, `float`, `.item()`) would compute it there."""
        return self.family in LAZY_FAMILIES

    @property
    def ndim(self) -> int | None:
        if self.tag == "scalar":
            return 0
        if self.tag == "array":
            return len(self.shape) if self.shape is not None else self.rank
        return None

    @property
    def known(self) -> bool:
        return self.value is not _UNSET

    @property
    def is_float(self) -> bool:
        """Can this value carry a derivative?"""
        if self.tag in ("scalar", "array"):
            return self.dtype in ("f", "c")
        if self.tag in ("tuple", "list"):
            return any(i.is_float for i in self.items)
        return self.tag == "unknown"

    @property
    def is_scalar(self) -> bool:
        return self.tag == "scalar" or (self.tag == "array" and self.shape == ())

    @property
    def static_shape(self):
        """The shape when known (scalars: ()), else None."""
        if self.tag == "scalar":
            return ()
        if self.tag == "array":
            return self.shape
        return None

    def __repr__(self) -> str:
        if self.family:
            return f"{self.family} {replace(self, family='')!r}"
        if self.tag == "scalar":
            return f"scalar[{self.dtype}]" + (f"={self.value!r}" if self.known else "")
        if self.tag == "array":
            return f"array[{self.dtype}]{self.shape if self.shape is not None else '(?)'}"
        if self.tag == "tuple":
            return "(" + ", ".join(map(repr, self.items)) + ")"
        return self.tag


LAZY_FAMILIES = frozenset({"dask"})
UNKNOWN = Kind("unknown")
# the result of a recursive call while its kind is being found (transform.recursive_result_
# kind): no value yet, the bottom of `join` (like a value a branch does not compute), and
# what an operation on it gives
PENDING = Kind("unknown", value=prims.NOT_COMPUTED)
OBJECT = Kind("object")
FLOAT = Kind("scalar", "f")
INT = Kind("scalar", "i")
BOOL = Kind("scalar", "b")


def float_kind(k: Kind) -> Kind:
    """The kind of a derivative (tangent or cotangent) of a value of kind `k`: the same
    shape, a float for an int or bool, no compile-time value."""
    if k.tag in ("scalar", "array") and k.dtype not in ("f", "c"):
        return Kind(k.tag, "f", k.shape, rank=k.rank, family=k.family)
    if k.known:
        return Kind(k.tag, k.dtype, k.shape, k.items, rank=k.rank)
    return k


# the scalar kinds made so far, by (dtype, type of the value, value): made once each (rules
# and constants ask for the same few), a shared kind then compares by identity
_SCALARS: dict = {}


def scalar(dtype: str, value=_UNSET) -> Kind:
    t = type(value)
    if value is _UNSET or t is bool or t is int or (t is float and value and not math.isnan(value)):
        # (not a float zero: 0.0 and -0.0 are equal but not one value; not NaN)
        key = (dtype, t, value)
        k = _SCALARS.get(key)
        if k is None:
            if len(_SCALARS) > 4096:
                _SCALARS.clear()
            k = _SCALARS[key] = canonical(Kind("scalar", dtype, (), value=value))
        return k
    return Kind("scalar", dtype, (), value=value)


def array_of_rank(dtype: str, ndim) -> Kind:
    """An array whose shape is unknown but whose number of dimensions is known."""
    if ndim == 0:
        return scalar(dtype)
    return Kind("array", dtype, None, rank=ndim)


def array(dtype: str, shape) -> Kind:
    return canonical(Kind("array", dtype, tuple(shape) if shape is not None else None))


# one object for each plain kind seen (see `canonical`)
_CANONICAL: dict = {}


def canonical(k: Kind) -> Kind:
    """The one object standing for kinds equal to `k`, when `k` is a plain array or scalar
    kind (no value, NumPy, int dimensions: equal kinds then print alike), else `k`. Kinds
    are compared often (does a shape change?): one object compares by identity."""
    if k.tag in ("scalar", "array") and k.value is _UNSET and not k.family and \
            not k.precision and (k.shape is None or all(type(n) is int for n in k.shape)):
        c = _CANONICAL.get(k)
        if c is None:
            if len(_CANONICAL) > 4096:
                _CANONICAL.clear()
            c = _CANONICAL[k] = k
        return c
    return k


def kind_of_value(v, keep_value: bool = True, facts: bool = False) -> Kind:
    """The kind of a concrete runtime value (used for arguments and constants); `facts`:
    an argument's bool or str value is kept even without `keep_value` (see is_fact)."""
    if v is None or v is Ellipsis:
        return Kind("object", value=v)  # its type is its value: known even for an argument
    if isinstance(v, bool):
        # an argument's flag is a fact compiled code may rely on (`if grad:` decided while
        # compiling); the dispatcher keys on its value (derivative._arg_key)
        return scalar("b", v if keep_value or facts else _UNSET)
    if isinstance(v, int):
        return scalar("i", v if keep_value else _UNSET)
    if isinstance(v, float):
        # a constant's value is kept: shapes may depend on it (np.arange(1.0, 6))
        return scalar("f", v if keep_value and math.isfinite(v) else _UNSET)
    if isinstance(v, complex):
        return scalar("c")
    if isinstance(v, np.ndarray):
        if facts:  # (an argument's: its exact dtype, a fact of the compile)
            return Kind("array", _dtype_letter(v.dtype), v.shape, precision=precision_of(v))
        return array(_dtype_letter(v.dtype), v.shape)
    if isinstance(v, np.generic):
        letter = _dtype_letter(v.dtype)
        if letter in ("i", "b", "u") and keep_value:
            return scalar(letter, v.item())
        return scalar(letter)
    if isinstance(v, np.dtype) and not keep_value:
        # a dtype known where the code runs (x.dtype, np.result_type(x, y)): its letter,
        # which a cast to it (x.astype(d), np.asarray(x, dtype=d)) gives its result
        return Kind("object", dtype=_dtype_letter(v))
    if isinstance(v, tuple):
        items = tuple(kind_of_value(x, keep_value) for x in v)
        if type(v) is not tuple and is_record(v):
            return Kind("tuple", items=items, view=("record", type(v)))
        return Kind("tuple", items=items, value=v if keep_value and _hashable(v) else _UNSET)
    if type(v) is dict and all(type(k) in (str, int) for k in v):
        return Kind("tuple", items=tuple(kind_of_value(x, keep_value) for x in v.values()),
                    view=("dict", tuple(v)))
    if isinstance(v, prims.ZeroValue):
        return v.kind
    if isinstance(v, list):
        return Kind("list", items=tuple(kind_of_value(x, keep_value) for x in v))
    family = array_family(v)
    if family:
        shape = tuple(v.shape)
        if not all(isinstance(n, int) for n in shape):  # Dask: nan for an unknown chunk size
            return Kind("array", _dtype_letter(v.dtype), None, rank=len(shape), family=family)
        return Kind("array", _dtype_letter(v.dtype), shape, family=family)
    if isinstance(v, str) and facts:  # an option string is a fact, as a flag is
        return Kind("object", value=v)
    return Kind("object", value=v if keep_value else _UNSET)


def precision_of(v) -> str:
    """The exact dtype of a NumPy array, as Kind.precision holds it ("f8")."""
    return v.dtype.str[1:] if v.dtype.kind in "biufc" else ""


def is_record(v) -> bool:
    """A namedtuple (a tuple subclass with `_fields`)."""
    return isinstance(getattr(type(v), "_fields", None), tuple)


def structure_view(k: Kind, top: bool = True):
    """What lowering needs to know of an argument's structure: None for a plain value or
    container, else (view, item views) with view ("dict", keys), ("record", class) or
    ("seq", is_list) for a tuple or list holding dicts or namedtuples; ("fact", value) for
    a flag, an option string or None, whose value lowering decides branches on."""
    if top and is_fact(k):
        return ("fact", k.value)
    if top and k.tag == "array" and k.ndim is not None and not k.family:
        # `if x.ndim == 1:`, `if X.dtype == np.float32:` decided while compiling
        return ("rank", k.ndim, k.dtype, k.precision)
    if k.tag not in ("tuple", "list"):
        return None
    items = tuple(structure_view(i, False) for i in k.items)
    if k.view is not None:
        return (k.view, items)
    if any(i is not None for i in items):
        return (("seq", k.tag == "list"), items)
    return None


def is_fact(k: Kind) -> bool:
    """A bool, str or None argument, whose value its kind holds: a fact of the compile."""
    v = k.value
    return v is None and k.tag == "object" or type(v) in (bool, str) and (
        k.tag == "object" or (k.tag == "scalar" and k.dtype == "b")) or (
        type(v) is int and k.tag == "scalar" and k.dtype == "i")  # (an int option's)


def array_family(v) -> str:
    """The library of `v` ("dask", "cupy") if it is an array of a library that follows
    NumPy's protocols (`__array_function__`, a shape and a numeric dtype) and is not a
    NumPy array; "" otherwise."""
    t = type(v)
    if t is np.ndarray or isinstance(v, (np.ndarray, np.generic)) or \
            getattr(t, "__array_function__", None) is None:
        return ""
    dtype = getattr(v, "dtype", None)
    if not hasattr(v, "shape") or getattr(dtype, "kind", "") not in ("f", "c", "i", "u", "b"):
        return ""
    return (t.__module__ or "").partition(".")[0] or t.__name__


def _hashable(v) -> bool:
    try:
        hash(v)
        return True
    except TypeError:
        return False


def _dtype_letter(dt) -> str:
    k = np.dtype(dt).kind
    return {"f": "f", "c": "c", "i": "i", "u": "i", "b": "b"}.get(k, "o")


def join(a: Kind, b: Kind) -> Kind:
    """The least kind covering both (used where control flow merges). A value one branch
    does not compute (prims.NOT_COMPUTED) takes the other's kind."""
    if a == b or b.value is prims.NOT_COMPUTED:
        return a
    if a.value is prims.NOT_COMPUTED:
        return b
    return of_family(_join(a, b), a.family or b.family)


def of_family(k: Kind, family: str) -> Kind:
    """`k`, of the array library `family` if it is an array or a scalar (a value computed
    from a Dask array is a Dask array: a 0-d one for a scalar)."""
    if not family or k.family == family or k.tag not in ("scalar", "array") or k.known:
        return k
    return replace(k, family=family)


def _join(a: Kind, b: Kind) -> Kind:
    order = "bifc"
    if a.tag == b.tag == "scalar":
        da = a.dtype if a.dtype in order else "f"
        db = b.dtype if b.dtype in order else "f"
        return scalar(order[max(order.index(da), order.index(db))])
    if a.tag == b.tag == "array" and (a.dtype == b.dtype or (
            a.dtype and b.dtype and a.dtype in order and b.dtype in order)):
        # (a value real on entry and complex after an iteration is complex)
        dt = order[max(order.index(a.dtype), order.index(b.dtype))] if a.dtype else a.dtype
        if a.shape == b.shape and a.shape is not None:
            return Kind("array", dt, a.shape)
        return array_of_rank(dt, a.ndim) if a.ndim == b.ndim else array(dt, None)
    if a.tag == b.tag and a.tag in ("tuple", "list") and len(a.items) == len(b.items):
        return Kind(a.tag, items=tuple(join(x, y) for x, y in zip(a.items, b.items)))
    if a.tag == b.tag == "object":
        return OBJECT
    if {a.tag, b.tag} <= {"scalar", "array"}:
        dt = a.dtype if a.dtype == b.dtype else "c" if "c" in (a.dtype, b.dtype) else "f"
        if a.is_scalar and b.is_scalar:
            return array(dt, ())
        return UNKNOWN
    return UNKNOWN


# -- example values: concrete stand-ins used to evaluate a primitive's result kind --------

_EXAMPLES: dict = {}


def _draw(k: Kind, complex_part: bool) -> np.ndarray:
    """The stand-in entries for an array of kind `k`: drawn from a stream seeded by its
    dtype and shape alone, so that a kind has the same stand-in in every process whatever
    was compiled before (a result kind can depend on the values: the spectrum of
    np.linalg.eig, whether np.linalg.cholesky succeeds; and the generated source must not
    depend on the session's history: `s2sad build --check` compares bytes)."""
    seed = zlib.crc32(repr((k.dtype, k.shape)).encode())
    values = np.random.default_rng(seed).uniform(0.2, 0.8, k.shape)
    return values + 0.5j if complex_part else values


_DTYPE_STAND_INS = {"f": np.dtype(np.float64), "c": np.dtype(np.complex128),
                    "i": np.dtype(np.int64), "b": np.dtype(np.bool_)}


# the most entries of an array stand-in (a larger array's kind comes from the shape rules,
# or loses its shape)
EXAMPLE_CAP = 1_000_000


def can_stand_in(k: Kind) -> bool:
    """Whether `example(k)` makes a stand-in (rather than raise _NoExample), told without
    making one."""
    if k.known:
        return True
    if k.tag == "scalar":
        return k.dtype in ("f", "c")
    if k.tag == "array":
        return k.shape is not None and (math.prod(map(int, k.shape)) <= EXAMPLE_CAP or
                                        k.family in LAZY_FAMILIES)
    if k.tag in ("tuple", "list"):
        return all(can_stand_in(i) for i in k.items)
    return k.tag == "object" and k.dtype in _DTYPE_STAND_INS  # (a dtype of run time)


def example(k: Kind, tag_ok=True, other=False):
    """A concrete value of kind `k`, or raise _NoExample. `other`: a second, different
    stand-in for a float whose value is unknown (to tell whether a shape depends on it)."""
    if k.known:
        return k.value
    if k.tag == "scalar":
        if k.dtype == "f":
            return 2.7182818285 if other else 0.6180339887
        if k.dtype == "c":
            return 0.5 + 0.25j
        raise _NoExample  # an int or bool whose value matters may change shapes
    if k.tag == "array" and k.shape is not None:
        size = int(np.prod(k.shape)) if k.shape else 1
        if size > EXAMPLE_CAP:
            if k.family in LAZY_FAMILIES:
                return _lazy_example(k)
            raise _NoExample
        if other and k.dtype == "i":
            return np.ones(k.shape, dtype=np.int64)  # counts, sizes: another stand-in
        cached = _EXAMPLES.get(k)
        if cached is None:
            if k.dtype in ("f", "c"):
                cached = _draw(k, complex_part=k.dtype == "c")
            elif k.dtype == "b":
                cached = np.ones(k.shape, dtype=bool)
            else:
                cached = np.zeros(k.shape, dtype=np.int64)
            cached.setflags(write=False)
            if len(_EXAMPLES) > 256:
                _EXAMPLES.clear()
            _EXAMPLES[k] = cached
        return cached
    if k.tag == "object" and k.dtype in _DTYPE_STAND_INS:
        return _DTYPE_STAND_INS[k.dtype]
    if k.tag == "tuple":
        return tuple(example(i, other=other) for i in k.items)
    if k.tag == "list":
        return [example(i, other=other) for i in k.items]
    raise _NoExample


def _lazy_example(k: Kind):
    """A Dask stand-in for a large Dask array: a graph, never computed, whose operations
    give the shapes of their results without allocating the data (which may not fit)."""
    cached = _EXAMPLES.get(k)
    if cached is None:
        import dask.array as da  # (only a Dask argument makes a kind of this family)

        letter = {"f": "f8", "c": "c16", "b": "?"}.get(k.dtype, "i8")
        fill = {"f": 0.6180339887, "c": 0.5 + 0.25j, "b": True}.get(k.dtype, 0)
        cached = da.full(k.shape, fill, dtype=letter)
        _EXAMPLES[k] = cached
    return cached


class _NoExample(Exception):
    pass


ELEMENTWISE_BINARY = {
    operator.add, operator.sub, operator.mul, operator.truediv, operator.pow,
    operator.floordiv, operator.mod, operator.lt, operator.le, operator.gt, operator.ge,
    operator.eq, operator.ne, operator.and_, operator.or_, operator.xor,
}


def _elementwise_result(fn, kinds) -> Kind | None:
    """Result kind of an elementwise primitive from its operand kinds, or None if unknown."""
    shapes = [k.static_shape for k in kinds]
    if any(s is None for s in shapes):
        if all(k.tag in ("scalar", "array") for k in kinds):
            dt = _result_dtype(fn, kinds)
            ranks = [k.ndim for k in kinds]
            if dt and all(r is not None for r in ranks):
                shape = _broadcast_known(shapes, ranks)
                return array(dt, shape) if shape is not None else \
                    array_of_rank(dt, max(ranks))
            return array(dt, None) if dt else UNKNOWN
        return None
    dt = _result_dtype(fn, kinds)
    if dt is None:
        return None
    if all(k.tag == "scalar" for k in kinds):
        return scalar(dt)
    try:
        shape = broadcast_shapes(*shapes)
    except ValueError:
        return None
    return array(dt, shape)


# the ufunc an operator calls on arrays
_OPERATOR_UFUNCS = {
    operator.add: np.add, operator.sub: np.subtract, operator.mul: np.multiply,
    operator.truediv: np.true_divide, operator.floordiv: np.floor_divide,
    operator.mod: np.remainder, operator.pow: np.power, operator.and_: np.bitwise_and,
    operator.or_: np.bitwise_or, operator.xor: np.bitwise_xor, operator.neg: np.negative,
    operator.invert: np.invert, operator.abs: np.absolute,
}
# a stand-in dtype per dtype letter (the letter is what a kind keeps)
_LETTER_DTYPES = {"b": np.dtype(bool), "i": np.dtype(np.int64), "u": np.dtype(np.uint64),
                  "f": np.dtype(np.float64), "c": np.dtype(np.complex128)}
_WEAK_SCALARS = {"i": int, "f": float, "c": complex}


def _broadcast_known(shapes, ranks) -> tuple | None:
    """The broadcast shape of operands of these ranks where some shapes are unknown, when
    each axis has a known length other than 1 (which an unknown one must match, or the
    operation fails): `p + p[mask]` of a (2, 4) array has shape (2, 4); else None."""
    n = max(ranks)
    out = []
    for axis in range(-n, 0):
        known = {s[axis] for s, r in zip(shapes, ranks) if s is not None and r >= -axis}
        unknown = any(s is None and r >= -axis for s, r in zip(shapes, ranks))
        long = known - {1}
        if len(long) > 1:
            return None  # (the operation fails: NumPy says so when it runs)
        if long:
            out.append(long.pop())
        elif unknown:
            return None
        else:
            out.append(1)
    return tuple(out)


def _result_dtype(fn, kinds) -> str | None:
    if fn in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne):
        return "b"
    dts = [k.dtype for k in kinds]
    if any(d not in "bifcu" or d == "" for d in dts):
        return None
    ufunc = fn if isinstance(fn, np.ufunc) else _OPERATOR_UFUNCS.get(fn)
    arrays = any(k.tag == "array" for k in kinds)
    if ufunc is not None and (arrays or ufunc is fn) and ufunc.nin == len(kinds):
        # NumPy's own promotion (bool * bool is bool for arrays, np.sin of ints is a float,
        # bool - bool an error); a Python number among arrays is weak (NEP 50)
        operands = tuple(_WEAK_SCALARS.get(k.dtype, _LETTER_DTYPES[k.dtype])
                         if k.tag == "scalar" and arrays else _LETTER_DTYPES[k.dtype]
                         for k in kinds)
        try:
            out = ufunc.resolve_dtypes(operands + (None,) * ufunc.nout)[-1]
        except Exception:
            return None
        return out.kind if out.kind in "bifcu" else None
    if "u" in dts:
        return None
    if fn is operator.truediv:
        return "c" if "c" in dts else "f"
    order = "bifc"
    top = order[max(order.index(d) for d in dts)]
    if fn in (operator.add, operator.sub, operator.mul, operator.pow, operator.floordiv,
              operator.mod) and top == "b":
        return "i"
    return top
