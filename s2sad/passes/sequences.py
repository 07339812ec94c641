"""Tuples and lists known only once the function is specialised.

Lowering concatenates and repeats the tuples and lists it builds itself while compiling.
A tuple or list that arrives at run time (an argument, a helper's result) reaches the
IR as `operator.add(t, u)`, whose rules are the arithmetic ones: differentiated as a sum,
it would be silently wrong. Once the kinds are known, each such call becomes the items
read one by one and put in a new tuple or list, whose derivatives follow item by item.

A tuple or list of numbers (or of arrays of one shape) given to a NumPy function is read by
NumPy as an array; the rules compute with their operands (`2.0 * x` for np.square, `a == m`
for np.max), which a list is not: such an operand is converted with np.asarray first, whose
derivative goes back item by item.
"""

from __future__ import annotations

import operator
from dataclasses import replace

import numpy as np

from s2sad.errors import UnsupportedSyntaxError
from s2sad.ir import prims
from s2sad.ir.builder import Namer, replace_body
from s2sad.ir.kinds import UNKNOWN, atom_kind
from s2sad.ir.nodes import Block, Call, Const, ForRange, Function, If, Var, While, blocks_of

SEQUENCES = ("tuple", "list")


def expand_sequence_arithmetic(fn: Function, kinds: dict) -> Function:
    """`fn` with each `+` of two tuples (or lists) and each `*` of one by an int written
    item by item, and each tuple or list of numbers given to a NumPy function converted
    to an array; `fn` itself when there is none."""
    if not _any(fn.body, kinds):
        return fn
    return replace_body(fn, _block(fn.body, kinds, Namer.for_function(fn)))


# NumPy functions that read a sequence as it is (conversions, shape readers)
_AS_GIVEN = frozenset({np.asarray, np.array, np.asanyarray, np.ascontiguousarray, np.shape,
                       np.ndim, np.size})


# ... and those that read a sequence of arrays item by item (stacking it first would be
# another pass over the data, and their rules take the sequence as it is)
_SEQUENCE_READERS = frozenset({np.stack, np.concatenate, np.vstack, np.hstack, np.dstack,
                               np.column_stack, np.block, np.einsum, np.broadcast_arrays,
                               np.meshgrid, np.linalg.multi_dot, np.append})


def _numbers(k, arrays: bool = True) -> bool:
    """A tuple or list of float or complex numbers, or of float or complex arrays of one
    shape, which NumPy stacks (one of ints is left alone: an axis, a shape or an index)."""
    if k.tag not in SEQUENCES or not k.items:
        return False
    first = k.items[0]
    if first.tag == "scalar":
        return all(i.tag == "scalar" and i.dtype in ("f", "c") for i in k.items)
    return arrays and first.tag == "array" and first.shape is not None and \
        all(i.tag == "array" and i.dtype in ("f", "c") and i.shape == first.shape
            for i in k.items)


def _is_numpy_function(fn) -> bool:
    if isinstance(fn, np.ufunc):
        return True
    try:
        return fn not in _AS_GIVEN and \
            str(getattr(fn, "__module__", "") or "").startswith("numpy")
    except TypeError:  # unhashable
        return False


def _sequence_operands(s, kinds: dict) -> bool:
    """A call of a NumPy function with a tuple or list of numbers computed at run time
    (the operands' kinds are read first: every call of every compile is asked)."""
    if type(s) is not Call:
        return False
    for a in s.args:
        if type(a) is Var and kinds.get(a, UNKNOWN).tag in SEQUENCES:
            return _numbers_given_to_numpy(s, kinds)
    for _, a in s.kwargs:
        if type(a) is Var and kinds.get(a, UNKNOWN).tag in SEQUENCES:
            return _numbers_given_to_numpy(s, kinds)
    return False


def _numbers_given_to_numpy(s: Call, kinds: dict) -> bool:
    if not _is_numpy_function(s.fn):
        return False
    arrays = _reads_arrays_stacked(s.fn)
    return any(type(a) is Var and _numbers(atom_kind(a, kinds), arrays)
               for a in list(s.args) + [a for _, a in s.kwargs])


def _reads_arrays_stacked(fn) -> bool:
    """Does `fn` read a list of arrays as the array NumPy stacks of it?"""
    try:
        return fn not in _SEQUENCE_READERS
    except TypeError:  # unhashable
        return False


def _is_sequence_arithmetic(s, kinds: dict) -> bool:
    """A `+` or `*` with a tuple or list operand that is not NumPy arithmetic (with an
    array or a float, NumPy reads the tuple as an array: left alone)."""
    if type(s) is not Call or not (s.fn is operator.add or s.fn is operator.mul) or \
            len(s.args) != 2 or s.kwargs:
        return False
    a, b = s.args
    ka = kinds.get(a, UNKNOWN) if type(a) is Var else atom_kind(a, kinds)
    kb = kinds.get(b, UNKNOWN) if type(b) is Var else atom_kind(b, kinds)
    if ka.tag not in SEQUENCES and kb.tag not in SEQUENCES:
        return False
    other = kb if ka.tag in SEQUENCES else ka
    if other.tag in SEQUENCES or other.tag == "unknown":
        return True
    return other.tag == "scalar" and other.dtype in "iub" and s.fn is operator.mul


def _any(b: Block, kinds: dict) -> bool:
    get = kinds.get
    for s in b.stmts:
        if type(s) is Call:
            # (asked of every call of every compile: the operands' kinds read directly, and
            # a call with no operand of a sequence kind is no NumPy call given numbers)
            fn = s.fn
            if (fn is operator.add or fn is operator.mul) and _is_sequence_arithmetic(s, kinds):
                return True
            for a in s.args:
                if type(a) is Var and get(a, UNKNOWN).tag in SEQUENCES:
                    if _numbers_given_to_numpy(s, kinds):
                        return True
                    break
            else:
                if s.kwargs and _sequence_operands(s, kinds):
                    return True
            continue
        if any(_any(inner, kinds) for inner in blocks_of(s)):
            return True
    return False


def _block(b: Block, kinds: dict, namer: Namer) -> Block:
    out: list = []
    for s in b.stmts:
        if _is_sequence_arithmetic(s, kinds):
            _expand(s, kinds, namer, out)
            continue
        if _sequence_operands(s, kinds):
            s = _as_arrays(s, kinds, namer, out)
        if type(s) is If:
            s = replace(s, then=_block(s.then, kinds, namer), orelse=_block(s.orelse, kinds, namer))
        elif type(s) is ForRange:
            s = replace(s, body=_block(s.body, kinds, namer))
        elif type(s) is While:
            s = replace(s, cond=_block(s.cond, kinds, namer), body=_block(s.body, kinds, namer))
        out.append(s)
    return Block(tuple(out), b.results)


def _expand(s: Call, kinds: dict, namer: Namer, out: list) -> None:
    a, b = s.args
    ka, kb = atom_kind(a, kinds), atom_kind(b, kinds)
    if ka.tag == "unknown" or kb.tag == "unknown":
        raise UnsupportedSyntaxError(
            "this `+` or `*` has a tuple or list operand and one whose kind is not known: "
            "concatenation and arithmetic differ", s.loc,
            "call the derivative with its arguments (code made for them knows), or convert "
            "with np.asarray / tuple(...) first")
    if s.fn is operator.add:
        if ka.tag != kb.tag:
            raise UnsupportedSyntaxError(
                f"cannot concatenate a {ka.tag} and a {kb.tag}", s.loc,
                "convert one with list(...) or tuple(...)")
        is_list = ka.tag == "list"
        items = _items(a, len(ka.items), namer, s, out) + _items(b, len(kb.items), namer, s, out)
    else:
        seq, n, ks = (a, b, ka) if ka.tag in SEQUENCES else (b, a, kb)
        count = atom_kind(n, kinds)
        if not (count.known and isinstance(count.value, int)) or isinstance(count.value, bool):
            raise UnsupportedSyntaxError(
                f"a {ks.tag} repeated a number of times known only at run time", s.loc,
                "repeat it by a constant int")
        is_list = ks.tag == "list"
        items = _items(seq, len(ks.items), namer, s, out) * max(count.value, 0)
    out.append(Call(s.target, prims.make_list if is_list else prims.make_tuple, tuple(items),
                    (), s.loc))


def _as_arrays(s: Call, kinds: dict, namer: Namer, out: list) -> Call:
    """`s` with each tuple or list of numbers it reads converted by np.asarray first."""
    done: dict = {}
    arrays = _reads_arrays_stacked(s.fn)

    def array(a):
        if type(a) is not Var or not _numbers(atom_kind(a, kinds), arrays):
            return a
        if a not in done:
            done[a] = namer.fresh(f"{a.name}_array")
            out.append(Call(done[a], np.asarray, (a,), (), s.loc))
        return done[a]

    return replace(s, args=tuple(array(a) for a in s.args),
                   kwargs=tuple((n, array(a)) for n, a in s.kwargs))


def _items(seq, n: int, namer: Namer, s: Call, out: list) -> list:
    """The atoms of `seq`'s n items (constants of a constant tuple)."""
    if type(seq) is Const:
        return [Const(v) for v in seq.value]
    items = []
    for i in range(n):
        item = namer.fresh(f"{seq.name}_{i}")
        out.append(Call(item, operator.getitem, (seq, Const(i)), (), s.loc))
        items.append(item)
    return items
