"""Derivative: the callable every transformation returns (s2sad.api makes them).

It compiles lazily, specialises the generated code on the kinds of its arguments (Python
scalar, array shape and dtype, list length) and caches each specialisation in memory, with
a generated dispatcher as its fast path. A specialisation is served only while everything
it was compiled from still holds (its guards: see s2sad.frontend.guards and
docs/guards.md), and a derivative binds its arguments exactly as the function does
(s2sad.calls: what it refuses, the precision of its results, the pullback's seed).
"""

from __future__ import annotations

import functools
import html
import inspect
import os
import linecache
import threading
import types
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal, ParamSpec, TypeVar

import numpy as np

from s2sad.calls import (
    check_tangents,
    checked_vjp,
    flattened,
    in_precision,
    is_structured,
    refuse_argument,
    structured_call,
    structured_result,
)
from s2sad.calls import sample as sample_of
from s2sad.errors import RecursionLimitError, S2SADError, WrtError
from s2sad.frontend.guards import Guards, collect
from s2sad.frontend.library_shims import unwrapped
from s2sad.ir.kinds import UNKNOWN, array_family, kind_of_value, scalar
from s2sad.ir.per_function import FunctionKeyed
from s2sad.ir.prims import RecursiveCall, is_derivative
from s2sad.passes.forward import tangent_suffix
from s2sad.store.compiled import compiled, store, stored, stored_for_every_size
from s2sad.store.sizes import (
    check_not_shared,
    generate_observed,
    holds_sizes,
    kinds_at,
    pinned,
    probe_values,
    same_code,
    size_values,
    size_pattern,
    sizes_fit,
    updated_arguments,
)
from s2sad.transform import (
    BACKENDS,
    resolve_wrt,
    with_backend,
    with_checkpoints,
    with_explain,
)
from s2sad_rules import TABLE

P = ParamSpec("P")  # the parameters of the differentiated function
R = TypeVar("R")  # what the differentiated function returns
Out = TypeVar("Out", covariant=True)  # what a derivative returns
# `wrt`: a positional parameter's index or name, a tuple (or list) of them, or None for all
WrtSpec = int | str | tuple[int | str, ...] | list[int | str] | None
Pullback = Callable[[Any], tuple[Any, ...]]  # out_bar -> one cotangent per wrt argument
Backend = Literal["numpy", "numba"]  # what runs the generated code (issue 19)

if TYPE_CHECKING:
    from typing import Generic as _Generic
else:
    class _Generic:
        """`typing.Generic` for the type checker only. At run time a subscript (`Derivative[P,
        Any]` in an evaluated annotation) gives a `types.GenericAlias`, and a subclass costs no
        generic bookkeeping: each Derivative makes its own class (typing.Generic's
        __init_subclass__ made that 1.5 us slower, measured)."""

        __slots__ = ()
        __class_getitem__ = classmethod(types.GenericAlias)

_ndarray = np.ndarray
# The caches keyed by a function keep no function alive (ir/per_function.py).
_GLOBAL_CACHE: Any = FunctionKeyed()  # (func, code, mode, wrt, wrt_tuple, arg key) -> compiled
_DISPATCH_CODE: dict[str, Any] = {}  # dispatcher source -> compiled code (constants in env)
_LAST_BY_FUNC: Any = FunctionKeyed()  # (func, code, mode, wrt, wrt_tuple) -> last specialisation
_LIVE: weakref.WeakSet[Derivative[Any, Any]] = weakref.WeakSet()  # reset when rules change
# Compiling is serialised: CPython's `ast` module is not safe to use from several threads
# at once, and two threads asking for one specialisation should compile it once.
_COMPILE_LOCK = threading.RLock()
_DEFAULT = type("_DefaultMarker", (), {"__repr__": lambda self: "<default>"})()
_PREFIX = "_s2_"  # names of the dispatcher's own constants


def _arg_key(a: Any) -> Any:
    """What the generated code is specialised on, for one argument."""
    t = type(a)
    if t is _ndarray:
        return (a.shape, a.dtype.char)
    if t is tuple or t is list or isinstance(a, tuple):  # (a namedtuple: its class too)
        return (t, tuple(map(_arg_key, a)))
    if t is dict:
        return (t, tuple(a), tuple(map(_arg_key, a.values())))
    if array_family(a):  # a Dask or CuPy array: its own specialisation, on shape and dtype
        return (t, a.shape, a.dtype.char)
    if t is bool or t is str:  # a flag or an option string: its value decides branches
        return (t, a)
    return t


def _questions(hit: Any) -> Any:
    """The comparisons of sizes a compile made, without their answers."""
    guards = hit.size_guards
    return None if guards is None else tuple(g[:3] for g in guards)


def _pattern_of(key: tuple[Any, ...]) -> tuple[Any, ...] | None:
    """The pattern of sizes a key holds (store/sizes.py), or None for a key of sizes."""
    pattern = tuple(k[1] if type(k) is tuple and k[:1] == ("sizes",) else None for k in key)
    return pattern if any(p is not None for p in pattern) else None


_SIZED_ONLY: Any = FunctionKeyed()
EVERY_SIZE = [os.environ.get("S2SAD_EVERY_SIZE", "1") != "0"]  # specialisations for every size that cannot be made


def _is_instance(a: Any) -> bool:
    """An instance of a user's class (the `self` of a method passed unbound)?"""
    t = type(a)
    if t in _VALUE_TYPES or isinstance(a, (np.ndarray, np.generic, tuple, list, dict)) or \
            hasattr(t, "__array_function__") or hasattr(t, "__array__"):
        return False  # (a Dask or CuPy array is data)
    return not isinstance(a, (type, types.ModuleType, types.FunctionType, types.MethodType,
                              types.BuiltinFunctionType, functools.partial)) and \
        t.__module__ not in ("builtins", "numpy")


_VALUE_TYPES = frozenset({int, float, complex, bool, str, bytes, type(None)})


def _rules_changed() -> None:
    """A rule was registered: no derivative compiled before may be served again."""
    _GLOBAL_CACHE.clear()
    _LAST_BY_FUNC.clear()
    _SIZED_ONLY.clear()
    for d in list(_LIVE):
        d._invalidate()


TABLE.add_listener(_rules_changed)
RecursiveCall.make_derivative = staticmethod(  # type: ignore[assignment]
    lambda func, mode, wrt: Derivative(func, mode, wrt))


_SIGNATURES: Any = FunctionKeyed()  # function -> (code, defaults, kwdefaults, signature)


def _signature(func: Callable[..., Any]) -> inspect.Signature:
    """inspect.signature(func), kept while the function's code and defaults are the same
    (a derivative's: its own call signature, made again when its function's changed)."""
    if isinstance(func, Derivative):
        return func._current_signature()
    facts = (getattr(func, "__code__", None), getattr(func, "__defaults__", None),
             getattr(func, "__kwdefaults__", None))
    try:
        hit = _SIGNATURES.get(func)
    except TypeError:
        return inspect.signature(func)
    if hit is not None and all(a is b for a, b in zip(hit[:3], facts)) and \
            (facts[2] is None or hit[4] == facts[2]):
        sig: inspect.Signature = hit[3]
        return sig
    sig = inspect.signature(func)
    _SIGNATURES[func] = facts + (sig, dict(facts[2]) if facts[2] is not None else None)
    return sig


_RESOLVED: Any = FunctionKeyed()  # (function, mode, wrt) -> its signature and what it resolves to


_PRIMITIVE_WRAPPERS: Any = FunctionKeyed()  # primitive -> a function calling it


def _defaults_holder(func: Any) -> Any:
    """The object whose `__defaults__` and `__kwdefaults__` give `func`'s defaults: the
    function itself, or the innermost function of a derivative of a derivative (hessian);
    None where there is none (a callable object, a functools.partial)."""
    while isinstance(func, Derivative):
        func = func.func
    return func if isinstance(func, (types.FunctionType, types.MethodType)) else None


def _primitive_function(fn: Callable[..., Any], options: tuple[Any, ...] = (),
                        n_args: int | None = None) -> Callable[..., Any] | None:
    """A Python function calling the primitive `fn` (np.sin, math.exp, ...), so that its
    derivative is compiled from the rule like any call of it; None if `fn` has no rule.

    It takes `fn`'s parameters without defaults; `options` are named parameters with
    defaults that a call gives (`ord` of np.linalg.norm), passed on by keyword and never
    differentiated: a name is a keyword-only parameter of the wrapper, a pair (name, the
    source of a literal) is written into its call. `n_args`: the number of positional
    parameters of a primitive whose signature Python cannot tell (math.hypot)."""
    try:
        # (a ufunc without rules too: its wrapper takes its `nin` inputs, never `out`, and
        # the compile says which rule is missing)
        if not TABLE.is_primitive(fn) and not isinstance(fn, np.ufunc):
            return None
        key = fn if not options and n_args is None else (fn, options, n_args)
        hit: Callable[..., Any] | None = _PRIMITIVE_WRAPPERS.get(key) if key is fn else \
            _PRIMITIVE_VARIANTS.get(key)
    except TypeError:
        return None
    if hit is not None:
        return hit
    name = getattr(fn, "__name__", None) or "primitive"
    if not name.isidentifier():
        name = "primitive"
    if isinstance(fn, np.ufunc):
        params = ["x"] if fn.nin == 1 else [f"x{i + 1}" for i in range(fn.nin)]
    elif n_args is not None:
        params = [f"x{i + 1}" for i in range(n_args)] if n_args > 1 else ["x"]
    else:
        try:
            sig = _primitive_signature(fn)
        except (TypeError, ValueError):
            return None
        params = [p.name for p in sig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                  and p.default is p.empty]
        if not params or not all(p.isidentifier() for p in params):
            return None
    module = getattr(fn, "__module__", None) or type(fn).__module__
    # an option is a keyword-only parameter, or (name, its literal) written into the call,
    # so that the rule sees it as known while compiling (ord=1 of np.linalg.norm)
    passed = [o for o in options if isinstance(o, str)]
    given = ", ".join(f"{o[0]}={o[1]}" if isinstance(o, tuple) else o for o in options)
    filename = f"<s2sad: {module}.{name}{'(' + given + ')' if options else ''}>"
    args = ", ".join(params + [f"{o[0]}={o[1]}" if isinstance(o, tuple) else f"{o}={o}"
                               for o in options])
    header = ", ".join(params + (["*"] + passed if passed else []))
    source = f"def {name}({header}):\n    return _s2sad_primitive({args})\n"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope: dict[str, Any] = {"_s2sad_primitive": fn, "__name__": f"s2sad.primitive.{name}"}
    exec(compile(source, filename, "exec"), scope)
    wrapper: Callable[..., Any] = scope[name]
    wrapper.__qualname__ = f"{module}.{name}"
    if key is fn:
        _PRIMITIVE_WRAPPERS[fn] = wrapper
    else:
        _PRIMITIVE_VARIANTS[key] = wrapper
    return wrapper


# (primitive, options, n_args) -> its wrapper taking those options (see _primitive_function)
_PRIMITIVE_VARIANTS: dict[Any, Callable[..., Any]] = {}


@functools.lru_cache(maxsize=512)
def _options_of(fn: Callable[..., Any]) -> tuple[str, ...] | None:
    """The parameters with defaults that a call of primitive `fn` may name or pass after
    its required ones (() where it has none); None where Python cannot tell its signature
    (a builtin taking *args: its wrapper is made per number of arguments). Asked on every
    call giving options: read once per primitive."""
    try:
        sig = _primitive_signature(fn)
    except (TypeError, ValueError):
        return None
    return tuple(p.name for p in sig.parameters.values()
                 if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and
                 p.default is not p.empty)


class Derivative(_Generic[P, Out]):
    """A derivative of a Python function, compiled on first use.

    Every transformation (`grad`, `vjp`, ...) returns one. Call it like the function: the
    same parameters, defaults and keywords (the derivatives made by `jvp` and `hvp` also
    take one tangent or vector per differentiated argument, after the arguments). A call
    returns what its transformation says: a gradient, `(out, out_dot)`, `(out, pullback)`,
    a Jacobian. For a type checker it is a `Derivative[P, Out]`, whose calls take the
    parameters `P` (the function's own, keeping their names; `...` for `jvp` and `hvp`)
    and return `Out`.

    `source` is the generated Python source of the most recent specialisation (a generic one
    before the first call), `source_for(*args)` the source specialised for some arguments
    and `compiled_function` the generated function itself.

    Examples:
        >>> import s2sad
        >>> def cube(x):
        ...     return x * x * x
        >>> d = s2sad.grad(cube)
        >>> d
        <s2sad grad of cube>
        >>> d(2.0)  # 3 * 2.0 ** 2
        12.0
        >>> d.__signature__  # the function's own parameters
        <Signature (x)>
        >>> "def cube_grad(x):" in d.source_for(2.0)  # the generated Python
        True
    """

    func: Callable[..., Any]  # the function differentiated
    mode: str  # "grad", "vjp", "jvp", ...: the transformation
    __name__: str
    __signature__: inspect.Signature
    __wrapped__: Callable[..., Any]

    if TYPE_CHECKING:  # at run time each derivative's class gets the generated dispatcher
        def __call__(self, *args: P.args, **kwargs: P.kwargs) -> Out: ...

    def __init__(self, func: Callable[P, Any], mode: str, wrt: WrtSpec = None,
                 checkpoints: int | None = None, explain: bool = False, *,
                 backend: Backend = "numpy") -> None:
        if not callable(func):
            raise TypeError(f"s2sad.{mode} needs a function, got {func!r}")
        if checkpoints is not None and (isinstance(checkpoints, bool) or
                                        not isinstance(checkpoints, int) or checkpoints < 1):
            raise ValueError(f"s2sad.{mode}: checkpoints must be a positive int (the most "
                             f"snapshots a loop keeps), not {checkpoints!r}")
        if backend not in BACKENDS:
            raise ValueError(f"s2sad.{mode}: backend must be one of {BACKENDS}, "
                             f"not {backend!r}")
        self.checkpoints = checkpoints
        self.backend = backend
        # the mode compiled: its own with the checkpointing option, explain=True (the
        # step-by-step derivative) and the backend, each keyed apart in every cache
        self.explain = bool(explain)
        self._cmode = with_backend(with_explain(with_checkpoints(mode, checkpoints),
                                                self.explain), backend)
        # (an object with a __call__: the bound method; a library's argument-checking
        # decorator, scikit-learn's @validate_params: the function it wraps)
        target = unwrapped(_as_function(func))
        wrapper = _primitive_function(target)
        # a primitive's own options (np.linalg.norm's ord) or arguments it takes by *args
        # (math.hypot): a call giving them is served by a derivative of a wrapper taking them
        self.func = wrapper if wrapper is not None else target
        self.mode = mode
        self._wrt_spec: WrtSpec = wrt
        self._primitive: Any = None
        self._variants: dict[Any, Any] = {}
        # the transformations between that wrapper and this derivative (hessian: a jacfwd
        # of a grad): (mode, wrt, checkpoints, explain, backend), innermost first
        self._chain: list[tuple[Any, ...]] = []
        if (wrapper is not None or not isinstance(func, types.FunctionType)) and \
                not isinstance(func, np.ufunc) and _primitive_options(func):
            self._primitive = func
        elif isinstance(func, Derivative) and func._primitive is not None:
            self._primitive = func._primitive
            self._chain = func._chain + [(func.mode, func._wrt_spec, func.checkpoints,
                                          func.explain, func.backend)]
        self._wrt: Any = None  # the indices of the wrt parameters, once resolved
        self._cache: dict[Any, Any] = {}
        # one specialisation serves every size of its arrays where it can (ir/dims.py)
        self._every_size = EVERY_SIZE[0]
        self._last: Any = None
        self._n_params: int = None  # type: ignore[assignment]  # set by _resolve
        self._fast_paths: list[Any] = []
        self._dispatch_defaults = None  # the function's __defaults__ the dispatcher keeps
        self._slow_calls = 0
        self._arity = -1  # the number of parameters when all are positional
        self._bound: dict[int, Any] = {}  # id(obj) -> (ref, derivative of func bound to obj)
        # a call routed by the arguments it gives (see _routed_call): the derivative per
        # set of differentiated arguments, and the routes the dispatcher knows
        self._given: dict[Any, Derivative[Any, Any]] = {}
        self._routes: dict[int, tuple[Derivative[Any, Any], int]] = {}
        self._flexible = False
        # each Derivative gets its own class, whose __call__ is the generated dispatcher
        self.__class__ = type(type(self).__name__, (type(self),), {})
        type(self).__call__ = _generic_call  # type: ignore[method-assign]
        functools.update_wrapper(self, func, updated=())
        del self.__wrapped__  # the signature is the derivative's own, set when resolved
        self.__name__ = f"{getattr(func, '__name__', 'f')}_{mode}"
        self._resolve_quietly()
        _LIVE.add(self)

    @property
    def __s2sad_function__(self) -> Callable[..., Any]:
        """The function this derivative differentiates (read by the guards)."""
        return self.func

    # -- compilation ---------------------------------------------------

    def _resolve(self) -> tuple[int, ...]:
        if self._wrt is None:
            sig = _signature(self.func)
            key: Any
            hit: Any
            try:
                key = (self.func, self.mode, self._wrt_spec)
                hit = _RESOLVED.get(key)
            except TypeError:  # an unhashable wrt (a list)
                key = hit = None
            if hit is None or hit[0] is not sig:
                hit = (sig,) + self._resolved_from(sig)
                if key is not None:
                    _RESOLVED[key] = hit
            (self._resolved_sig, self._wrt, self._wrt_tuple, self.__signature__,
             self._positional, self._kwonly, self._arity) = hit
            self._n_params = len(self._positional)
            self._flexible = self._routed(sig)
        wrt: tuple[int, ...] = self._wrt
        return wrt

    _plain_call = False  # (a routed variant: called with every primal and tangent)
    _last_variant: Any = None  # (routed: the variant that served the last bound call)
    _router: Any = None  # (a routed variant: a weak reference to the derivative routing)

    def _dispatcher_changed(self) -> None:
        """This variant's dispatcher changed: the router calling it directly follows."""
        router = self._router() if self._router is not None else None
        if router is not None and router._routes and \
                type(router).__dict__.get("__call__") is not _generic_call:
            with _COMPILE_LOCK:
                router._install_router()

    def _routed(self, sig: inspect.Signature) -> bool:
        """Is a call bound by the arguments it gives (_routed_call)? Where the function has
        defaulted positional parameters and wrt=None (the differentiated arguments are
        those the call gives), and for every JVP and HVP of such a function (its tangents
        follow the arguments given). Not for a function taking *args or **kwargs."""
        params = list(sig.parameters.values())
        if self._plain_call or self._primitive is not None or any(
                p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
            return False
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY,
                                                      p.POSITIONAL_OR_KEYWORD)]
        self._n_required = sum(p.default is p.empty for p in positional)
        # a transformation of such a derivative (not a JVP's) follows its routing: the
        # jacfwd of grad(f, wrt=None) differentiates what the gradient does
        inner = isinstance(self.func, Derivative) and self.func._flexible and \
            self.func.mode not in ("jvp", "hvp")
        return self._n_required < len(positional) and (
            self._wrt_spec is None or self.mode in ("jvp", "hvp") or inner)

    def _current_signature(self) -> inspect.Signature:
        """The derivative's call signature, resolved again where its function's changed
        (new defaults): read by a derivative of this derivative binding a call."""
        self._resolve()
        if _signature(self.func) is not self._resolved_sig:
            self._wrt = None
            self._resolve()
        return self.__signature__

    def _resolved_from(self, sig: inspect.Signature) -> tuple[Any, ...]:
        """(wrt, wrt_tuple, call signature, positional names, keyword-only names, arity)."""
        wrt, wrt_tuple = resolve_wrt(self.func, self._wrt_spec, sig)
        self._wrt = wrt  # the call signature names one tangent per differentiated argument
        call_sig = self._call_signature(sig)
        params = list(sig.parameters.values())
        positional = [p.name for p in params
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        # `def fun(x, *args)` (scipy.optimize's convention): the extra arguments are one
        # more parameter of the generated code, a tuple, never differentiated
        positional += [p.name for p in params if p.kind is p.VAR_POSITIONAL]
        kwonly = [p.name for p in params if p.kind is p.KEYWORD_ONLY]
        plain = all(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                    for p in call_sig.parameters.values())
        arity = len(call_sig.parameters) if plain else -1
        return wrt, wrt_tuple, call_sig, positional, kwonly, arity

    def _valid(self, hit: Any) -> bool:
        """May `hit` still be served? (Refreshes its guards' identities when values held.)"""
        if getattr(hit, "table_version", None) != TABLE.version:
            return False
        guards = getattr(hit, "guards", None)
        if guards is None:
            return False
        if not guards.holds():
            return False
        hit.guards = guards.refreshed()
        return True

    def _key(self, primal: list[Any], kw: dict[str, Any],
             sizes: bool = False) -> tuple[Any, Any]:
        """(the specialisation's key for these arguments, the int options among them).
        An array's sizes are in it as their pattern (store.sizes.size_pattern) where code
        for every size can be made, else (and with `sizes`) as numbers."""
        key = tuple(map(_arg_key, primal))
        pattern = size_pattern(primal, tuple(self._positional), not self._recursive()) \
            if self._every_size and not sizes and not (
            kw and any(type(v) is np.ndarray or holds_sizes(v) for v in kw.values())) \
            else None
        if pattern is not None:
            sized = key
            key = tuple(k if p is None else ("sizes", p, k[1] if type(k) is tuple else k)
                        for k, p in zip(key, pattern))
            try:
                if _SIZED_ONLY.get((self.func, self._cmode, key)):
                    key = sized
            except TypeError:
                key = sized
        facts = self._option_facts(primal, kw)
        if facts:  # (an int option: its value is part of the key)
            key = tuple((int, "=", primal[i]) if i in facts else k for i, k in enumerate(key))
        if kw:
            key += tuple(sorted((k, (int, "=", v) if k in facts else _arg_key(v))
                                for k, v in kw.items()))
        return key, facts

    def _recursive(self) -> bool:
        """Does the function call itself by name (its int arguments are then no size
        symbols: see store.sizes.size_pattern)?"""
        code = getattr(self.func, "__code__", None)
        name = getattr(self.func, "__name__", None)
        return code is not None and (name in code.co_names or name in code.co_freevars)

    def _sized_key(self, primal: list[Any], kw: dict[str, Any]) -> tuple[Any, ...]:
        """The key of these arguments with their sizes as numbers."""
        key: tuple[Any, ...] = self._key(primal, kw, sizes=True)[0]
        return key

    def _option_facts(self, primal: list[Any], kw: dict[str, Any]) -> tuple[Any, ...]:
        """The positions (and keyword-only names) of int options, the parameters whose
        default is an int (`axis=-1`, `ddof=0`): their values are facts of the compile, as
        flags are, so that a reduction's axis or an index built from it is known while
        compiling (each value its own specialisation). An int parameter without an int
        default is a value (a size, a count); a differentiated position is never a fact."""
        sig = getattr(self, "_resolved_sig", None)
        if sig is None or isinstance(self.func, Derivative):
            return ()
        facts: list[Any] = []
        for i, p in enumerate(sig.parameters.values()):
            if p.kind is p.KEYWORD_ONLY:
                if type(p.default) is int and type(kw.get(p.name)) is int and \
                        p.name in self._kwonly:
                    facts.append(p.name)
                continue
            if i >= len(primal) or p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
                continue
            if type(p.default) is int and type(primal[i]) is int and i not in self._wrt:
                facts.append(i)
        return tuple(facts)

    def _compile(self, key: tuple[Any, ...], args: list[Any], kwargs: dict[str, Any],
                 facts: tuple[Any, ...] = ()) -> Any:
        with _COMPILE_LOCK:
            hit = self._cache.get(key)
            if hit is not None and self._valid(hit):
                return hit
            wrt = self._resolve()
            for name, value in zip(self._positional, args):
                refuse_argument(self.func, name, value)
            for name, value in kwargs.items():
                refuse_argument(self.func, name, value)
            gkey = (self.func, getattr(self.func, "__code__", None), self._cmode, wrt,
                    self._wrt_tuple, key)
            try:
                hit = _GLOBAL_CACHE.get(gkey)
            except TypeError:
                hit = None
            if hit is not None and not self._valid(hit):
                hit = None
            if hit is None:
                # what the code will be compiled from, read before it is compiled
                guards, version = collect(self.func), TABLE.version
                arg_kinds = [kind_of_value(a, keep_value=i in facts, facts=True)
                             for i, a in enumerate(args)]
                kw_kinds = {n: kind_of_value(v, keep_value=n in facts, facts=True)
                            for n, v in kwargs.items()}
                if _pattern_of(key) is not None:
                    hit = self._every_size_compile(key, args, kwargs, arg_kinds, kw_kinds, wrt,
                                                   guards, version)
                    if hit is not None:
                        return hit
                    # no code for every size: the call's own sizes are its key (compiled
                    # once for them, whichever key the next call of these sizes computes)
                    return self._compile(self._sized_key(args, kwargs), args, kwargs, facts)
                hit = compiled(self.func, self._cmode, wrt, self._wrt_tuple, arg_kinds,
                               kw_kinds)
                hit.pattern = None
                return self._keep(key, gkey, hit, guards, version)
            return self._keep(key, gkey, hit)

    def _keep(self, key: tuple[Any, ...], gkey: tuple[Any, ...], hit: Any, guards: Any = None,
              version: Any = None) -> Any:
        """Serve `hit` under `key` (in this derivative and, under `gkey`, every derivative of
        the function); `guards` and `version`: what a new one was compiled from."""
        if guards is not None:
            hit.guards, hit.table_version = guards, version
        try:
            _GLOBAL_CACHE[gkey] = hit
        except TypeError:
            pass
        try:
            _LAST_BY_FUNC[gkey[:5]] = hit
        except TypeError:
            pass
        self._cache[key] = hit
        self._last = hit
        return hit

    def _every_size_compile(self, key: tuple[Any, ...], args: list[Any],
                            kwargs: dict[str, Any], arg_kinds: list[Any],
                            kw_kinds: dict[str, Any], wrt: tuple[int, ...], guards: Any,
                            version: Any) -> Any:
        """The specialisation serving this call, for a key with the pattern of its sizes:
        one for every size of the pattern (stored, or made now from two calls' compiles
        that agree), or the first call's compile with its sizes as symbols standing for
        their own values (tentative: served for those sizes only until a call of other sizes
        compares its own with it), or None where none can be made (the pattern is then
        keyed by sizes from now on)."""
        pattern = _pattern_of(key)
        assert pattern is not None
        here = kinds_at(args, arg_kinds, pattern)
        func, mode, tup = self.func, self._cmode, self._wrt_tuple
        code = getattr(func, "__code__", None)
        gkey = (func, code, mode, wrt, tup, key)
        done = stored_for_every_size(func, mode, wrt, tup, here, kw_kinds)
        if done is not None:
            done.pattern = pattern
            return self._keep(key, gkey, done, guards, version)
        # the key of this call's own sizes, int symbols' values in it: what a first
        # compile, which reads them as numbers where they escape, is right for
        ints = [i for i, p in enumerate(pattern) if p is not None and p[:1] == ("int",)]
        sized = tuple((int, "=", args[i]) if i in ints else k
                      for i, k in enumerate(self._sized_key(args, kwargs)))
        exact = [scalar("i", args[i]) if i in ints else k for i, k in enumerate(arg_kinds)]
        skey = (func, code, mode, wrt, tup, sized)
        tkey = gkey + ("tentative",)
        try:
            first = _GLOBAL_CACHE.get(tkey)
        except TypeError:
            return None
        if first is not None and not self._valid(first):
            first = None
        if first is not None and first.sizes == sized:
            return self._keep(sized, skey, first)
        if first is None:  # (a compile from the disk for these sizes, guards unknown)
            first = stored(func, mode, wrt, tup, exact, kw_kinds)
            if first is not None:
                first.size_guards, first.sizes, first.pattern = None, sized, None
                _GLOBAL_CACHE[tkey] = first
                return self._keep(sized, skey, first, guards, version)
        if first is not None and first.size_values is not None and not first.escaped:
            # a symbol of one value in both compiles (a layer's width, fixed while the batch
            # grows): the second compile is made at another value of it, so that it proves
            # the first right for every size; this call's own is compiled only where not
            values = probe_values(size_values(args, pattern), first.size_values,
                                  pinned(first.size_guards))
            probe = None if values is None else generate_observed(
                func, mode, wrt, tup, kinds_at(args, arg_kinds, pattern, values), kw_kinds)
            if probe is not None and same_code(first, probe):
                first.pattern, first.size_guards = pattern, probe.size_guards
                store(func, mode, wrt, tup, here, kw_kinds, first)
                return self._keep(key, gkey, first)
            if values is not None and (probe is None or probe.escaped or
                                       _questions(first) != _questions(probe)):
                self._sized_only(key)  # (the sizes' code differs: code per size)
        done = generate_observed(func, mode, wrt, tup, here, kw_kinds)
        if done is None:
            self._sized_only(key)
            return None
        done.sizes, done.pattern = sized, None
        done.guards, done.table_version = guards, version
        if first is None:
            _GLOBAL_CACHE[tkey] = done
            store(func, mode, wrt, tup, exact, kw_kinds, done, exact=True)
            return self._keep(sized, skey, done)
        if not same_code(first, done):
            if done.escaped:  # (a size left its symbol for a number: code per size)
                self._sized_only(key)
            elif first.size_values is None or _questions(first) == _questions(done) or \
                    any(first.size_values.get(s) == v for s, v in (done.size_values or {}).items()):
                # a first compile read from the disk; the same comparisons of sizes with
                # other answers (n == 3 at one size only); or a symbol of one value in both:
                # this one is compared with the next size's
                _GLOBAL_CACHE[tkey] = done
            else:  # (a size escaped its symbol: code per size)
                self._sized_only(key)
            store(func, mode, wrt, tup, exact, kw_kinds, done, exact=True)
            return self._keep(sized, skey, done)
        # two sizes gave one source under one set of guards: the first compile serves every
        # size (with backend="numba", its machine code is made already)
        first.pattern, first.size_guards = pattern, done.size_guards
        store(func, mode, wrt, tup, here, kw_kinds, first)
        return self._keep(key, gkey, first)

    def _sized_only(self, key: tuple[Any, ...]) -> None:
        """From now on, calls with this key's pattern of sizes are keyed by their sizes."""
        try:
            _SIZED_ONLY[(self.func, self._cmode, key)] = True
        except TypeError:
            pass

    def _invalidate(self) -> None:
        """Forget every specialisation (something they were compiled from changed)."""
        self._cache.clear()
        self._fast_paths.clear()
        self._last = None
        self._last_variant = None
        type(self).__call__ = _generic_call  # type: ignore[method-assign]
        self._dispatcher_changed()

    def _tangent_hint(self, missing: str, current: Any) -> str:
        """Where a tangent (or HVP vector) is missing while the function has defaults: the
        tangents come after every positional parameter, so `jvp(f)(x, v)` of f(x, y=2.0)
        gave v to y."""
        names = list(self.__signature__.parameters)
        tangents = names[self._n_params:self._n_params + len(self._wrt)]
        if missing not in tangents:
            return ""
        defaulted = [n for n, p in current.items()
                     if p.default is not p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
        if not defaulted:
            return ""
        return (f" (it takes {self.__signature__}: every positional argument, "
                f"{', '.join(defaulted)} included, then one tangent per differentiated "
                "argument)")

    def _bind(self, args: tuple[Any, ...],
              kwargs: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        """(positional values, keyword-only values) of a call, the function's current
        defaults filled in; a call that does not fit raises TypeError naming the function."""
        self._resolve()
        if not kwargs and len(args) == self._arity and \
                not any(a is _DEFAULT for a in args):
            return list(args), {}  # every parameter passed by position: nothing to bind
        try:
            bound = self.__signature__.bind(*args, **kwargs)
        except TypeError as e:
            hint = ""
            name = str(e).rpartition("argument: ")[2].strip("'")
            if "missing a required argument" in str(e):
                hint = self._tangent_hint(name, _signature(self.func).parameters)
            raise TypeError(f"{self.__name__}(): {e}{hint}") from None
        values = bound.arguments
        sig_params = self.__signature__.parameters
        plain = [n for n, p in sig_params.items()
                 if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
        missing = [n for n in plain if n not in values or values[n] is _DEFAULT]
        if missing:
            current = _signature(self.func).parameters
            for n in missing:
                p = current.get(n)
                if p is None or p.default is p.empty:
                    raise TypeError(f"{self.__name__}() missing a required argument: {n!r}"
                                    f"{self._tangent_hint(n, current)}")
                values[n] = p.default
        n_pos = len(plain) - len(self._kwonly)
        pos = [values[n] for n in plain[:n_pos]]
        extra = [n for n, p in sig_params.items() if p.kind is p.VAR_POSITIONAL]
        if extra:  # *args: a tuple after the primal arguments (before a JVP's tangents)
            pos.insert(self._n_params - 1, tuple(values.get(extra[0], ())))
        return pos, {n: values[n] for n in self._kwonly}

    def _resolve_quietly(self) -> None:
        """Resolve wrt now when possible (errors surface again at first use)."""
        try:
            self._resolve()
        except Exception:
            self._wrt = None

    def _call_signature(self, sig: inspect.Signature) -> inspect.Signature:
        """The signature of the derivative itself (a JVP also takes one tangent per wrt)."""
        params = list(sig.parameters.values())
        if self.mode not in ("jvp", "hvp"):
            return sig.replace(return_annotation=inspect.Signature.empty)
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        rest = [p for p in params if p not in positional]
        suffix = tangent_suffix([p.name for p in positional])  # x_tangent for a JVP's JVP
        tangents = [inspect.Parameter(positional[i].name + suffix,
                                      inspect.Parameter.POSITIONAL_OR_KEYWORD)
                    for i in self._wrt]
        plain = [p.replace(default=inspect.Parameter.empty) for p in positional]
        return sig.replace(parameters=plain + tangents + rest,
                           return_annotation=inspect.Signature.empty)

    def _slow_call(self, *args: Any, **kwargs: Any) -> Any:
        """Bind the call, find (or compile) the specialisation for its argument key."""
        if self._primitive is not None:
            variant = self._primitive_variant(args, kwargs)
            if variant is not None:
                return variant(*args, **kwargs)
        variant = self._keywords_variant(args, kwargs) or self._arity_variant(args, kwargs)
        if variant is not None:
            return variant(*args, **kwargs)
        self._resolve()
        if self.mode in ("jvp", "hvp") and ("primals" in kwargs or "tangents" in kwargs) and \
                not {"primals", "tangents"} & set(self.__signature__.parameters):
            return self._jax_call(args, kwargs)
        if self._flexible:
            return self._routed_call(args, kwargs)
        pos, kw = self._bind(args, kwargs)
        if pos and _is_instance(pos[0]) and isinstance(self.func, types.FunctionType):
            return self._method_call(pos, kw)
        if self.mode in ("jvp", "hvp"):
            check_tangents(self, pos, self._positional)
        primal = pos[:self._n_params]
        key, facts = self._key(primal, kw)
        hit = self._cache.get(key)
        if hit is not None and not sizes_fit(hit, primal):
            key = self._sized_key(primal, kw)  # (sizes its guards leave out: their own)
            hit = self._cache.get(key)
        refreshed = False
        if hit is not None:
            before = hit.guards
            if self._valid(hit):
                refreshed = any(a[3] is not b[3] for a, b in zip(before, hit.guards))
            else:
                self._invalidate()
                hit = None
        if hit is None:
            hit = self._compile(key, primal, kw, facts)
            if not sizes_fit(hit, primal):
                key = self._sized_key(primal, kw)
                hit = self._compile(key, primal, kw, facts)
            if hit.updated is None:
                hit.updated = updated_arguments(self.func) if isinstance(
                    self.func, types.FunctionType) and primal else ()
            with _COMPILE_LOCK:
                paths = [fp for fp in self._fast_paths if fp[1] is not hit]
                # what the dispatcher tests, not the arrays (they are not kept alive)
                sample = sample_of(primal, kw, self._kwonly)
                pattern = getattr(hit, "pattern", None)
                if pattern is None and getattr(hit, "sizes", None) is not None:
                    # a first compile of a pattern: for its int symbols' values only
                    for i, k in enumerate(hit.sizes[:len(primal)]):
                        if type(k) is tuple and k[:2] == (int, "="):
                            sample[i] = (int, ("=", k[2]), None)
                if pattern is not None:  # (the pattern of the sizes, not the sizes)
                    sample = [(t, ("sizes", dims, getattr(hit, "size_guards", ())), dt)
                              if dims is not None else (t, shape, dt)
                              for (t, shape, dt), dims in
                              zip(sample, list(pattern) + [None] * len(sample))]
                for i in facts:  # (the dispatcher tests the option's value)
                    j = i if isinstance(i, int) else len(primal) + self._kwonly.index(i)
                    sample[j] = (int, ("=", primal[i] if isinstance(i, int) else kw[i]), None)
                if not hit.updated:  # (else every call is tested for shared arrays)
                    self._fast_paths = [(sample, hit)] + paths[:3]
            refreshed = True
        self._slow_calls += 1
        generic = type(self).__dict__.get("__call__") is _generic_call
        if (refreshed or generic or self._dispatch_defaults is not
                getattr(_defaults_holder(self.func), "__defaults__", None)) and \
                self._slow_calls > 1:
            # (not on a first call: `s2sad.grad(f)(x)` made afresh in a loop never builds one)
            with _COMPILE_LOCK:
                self._install_dispatcher()
        if hit.updated:
            check_not_shared(getattr(self.func, "__name__", self.__name__), self._positional,
                             hit.updated, primal)
        fn = in_precision(self, sample_of(primal, kw, self._kwonly), hit)
        if any(map(is_structured, pos)) or any(map(is_structured, kw.values())):
            # dicts and namedtuples go in as tuples; their derivatives come back rebuilt
            fn = structured_call(self, fn, primal)
            pos, kw = [flattened(v) for v in pos], {n: flattened(v) for n, v in kw.items()}
        try:
            out = fn(*pos, **kw)
        except RecursionError as e:
            raise RecursionLimitError.of(self.__name__, e) from None
        if self.mode == "vjp":
            out = checked_vjp(out, self.__name__)
        if hit.out_structure is not None:  # a list, namedtuple or dict returned
            out = structured_result(self.mode, hit.out_structure, self.__name__)(out)
        return out

    def _jax_call(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """`jvp(f)(primals=(x, y), tangents=(dx, dy))`, JAX's form: the arguments and one
        tangent per differentiated one; other keywords are the function's own."""
        kwargs = dict(kwargs)
        primals, tangents = kwargs.pop("primals", None), kwargs.pop("tangents", None)
        for what, value in (("primals", primals), ("tangents", tangents)):
            if not isinstance(value, (tuple, list)):
                raise TypeError(f"{self.__name__}(): {what}= takes a tuple (JAX's form: "
                                f"primals=(x, y), tangents=(x_dot, y_dot)), got "
                                f"{type(value).__name__}")
        if args:
            raise TypeError(f"{self.__name__}(): give the arguments either by position "
                            "(the arguments, then the tangents) or as primals=(...), "
                            "tangents=(...), not both")
        assert primals is not None and tangents is not None
        if self._flexible:
            return self._routed_call(tuple(primals), kwargs, tuple(tangents))
        return self._slow_call(*self._jax_flat(primals, tangents), **kwargs)

    def _jax_flat(self, primals: Any, tangents: Any) -> tuple[Any, ...]:
        """JAX's primals and tangents as the flat form's arguments (a function taking
        *args: its extra arguments after the tangents)."""
        n_plain = sum(1 for p in self.__signature__.parameters.values()
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)) - \
            len(self._wrt)
        if len(tangents) != len(self._wrt):
            raise TypeError(f"{self.__name__}(): {len(tangents)} tangents for "
                            f"{len(self._wrt)} differentiated arguments "
                            f"({', '.join(self._positional[i] for i in self._wrt)})")
        return tuple(primals[:n_plain]) + tuple(tangents) + tuple(primals[n_plain:])

    def _differentiated(self, k: int) -> tuple[int, ...]:
        """The differentiated parameters of a call giving `k` arguments by position: with
        wrt=None, the required positional parameters and the defaulted ones given by
        position; else wrt's."""
        if self._wrt_spec is not None:
            wrt: tuple[int, ...] = self._wrt
            return wrt
        return tuple(range(max(self._n_required, k)))

    def _routed_call(self, args: tuple[Any, ...], kwargs: dict[str, Any],
                     tangents: tuple[Any, ...] | None = None) -> Any:
        """A call of a derivative whose differentiated arguments, or whose tangents' place,
        depend on the arguments given (_routed): bound here, and served by the derivative
        of the function with respect to those arguments (_variant), called with every
        argument and one tangent per differentiated argument."""
        variant, pos, kw, k = self._routed_bind(args, kwargs, tangents)
        if k is not None:
            self._route(len(args), variant, k)
        self._last_variant = variant  # (whose source `source` shows)
        return variant(*pos, **kw)

    def _routed_bind(self, args: tuple[Any, ...], kwargs: dict[str, Any],
                     tangents: tuple[Any, ...] | None = None) -> tuple[Any, ...]:
        """(the variant serving the call, its positional and keyword arguments, the number
        of arguments before the tangents where the dispatcher may route such calls (-1:
        as given), else None)."""
        fsig = _signature(self.func)
        params = [p for p in fsig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        n = len(params)
        kwonly = set(self._kwonly)
        if self.mode not in ("jvp", "hvp"):
            active = self._differentiated(min(len(args), n))
            if not active:
                raise TypeError(f"{self.__name__}(): no argument to differentiate: with "
                                "wrt=None the differentiated arguments are those a call "
                                "gives by position; give them, or name them in wrt")
            return self._variant(active, min(len(args), n)), args, kwargs, -1
        names = list(self.__signature__.parameters)
        tname = {i: names[n + j] for j, i in enumerate(self._wrt)}
        keyed = {i for i in self._wrt if tname[i] in kwargs}
        m = len(args)
        if tangents is None:
            fits = [k for k in range(n + 1)
                    if k + len(set(self._differentiated(k)) - keyed) == m]
            if not fits:
                raise TypeError(self._no_fit(m, keyed, fsig))
            k = fits[0]
            primal_args, given = args[:k], list(args[k:])
        else:
            k, primal_args, given = m, args, list(tangents)
            if keyed or len(given) != len(self._differentiated(k)):
                raise TypeError(f"{self.__name__}(): {len(given)} tangents for "
                                f"{len(self._differentiated(k))} differentiated arguments "
                                f"({self._names(self._differentiated(k))})")
        active = self._differentiated(k)
        if not active:
            raise TypeError(f"{self.__name__}(): no argument to differentiate: with wrt=None "
                            "the differentiated arguments are those a call gives by "
                            "position; give them, or name them in wrt")
        rest = dict(kwargs)
        by_name = {i: rest.pop(tname[i]) for i in keyed}
        try:
            bound = fsig.bind(*primal_args, **rest)
        except TypeError as e:
            raise TypeError(f"{self.__name__}(): {e}") from None
        bound.apply_defaults()
        values = bound.arguments
        primals = [values[p.name] for p in params]
        tangent_values = [by_name[i] if i in keyed else given.pop(0) for i in active]
        routable = tangents is None and not keyed and \
            kwonly.union(p.name for p in params[k:]).issuperset(kwargs)
        return (self._variant(active, k), primals + tangent_values,
                {name: values[name] for name in self._kwonly}, k if routable else None)

    def _positional_call(self, m: int) -> tuple[Derivative[Any, Any], int, list[Any]] | None:
        """A call of `m` positional arguments made inside a differentiated function (where
        a derivative's IR is inlined): (the derivative serving it, the number of
        arguments before the defaults it leaves out, their values), bound as a call of
        this derivative is; None where it fits no binding."""
        self._resolve()
        fsig = _signature(self.func)
        if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in fsig.parameters.values()):
            return None
        params = [p for p in fsig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        n, jvp = len(params), self.mode in ("jvp", "hvp")
        served: Derivative[Any, Any] = self
        if self._flexible:
            fits = [k for k in range(n + 1) if k + len(self._differentiated(k)) == m] \
                if jvp else [min(m, n)]
            if not fits or not self._differentiated(fits[0]):
                return None
            k = fits[0]
            served = self._variant(self._differentiated(k), k)
        else:
            k = m - (len(self._wrt) if jvp else 0)
        if not 0 <= k <= n or any(p.default is p.empty for p in params[k:]):
            return None
        return served, k, [p.default for p in params[k:]]

    def _names(self, indices: tuple[int, ...]) -> str:
        return ", ".join(self._positional[i] for i in indices) or "none"

    def _no_fit(self, m: int, keyed: set[int], fsig: inspect.Signature) -> str:
        """Why `m` positional arguments are no arguments followed by their tangents."""
        r = self._n_required
        n = sum(1 for p in fsig.parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
        ways = [f"{k} argument{'s' if k != 1 else ''} then "
                f"{len(set(self._differentiated(k)) - keyed)} tangent"
                f"{'s' if len(set(self._differentiated(k)) - keyed) != 1 else ''}"
                for k in range(r, n + 1)]
        rule = ("one tangent per differentiated argument: with wrt=None, the required "
                "ones and the defaulted ones given by position" if self._wrt_spec is None
                else f"one tangent per wrt argument ({self._names(self._wrt)})")
        return (f"{self.__name__}() takes the arguments of {fsig}, then {rule}; "
                f"{m} positional arguments fit none of: {'; '.join(ways)} (or give "
                "primals=(...), tangents=(...))")

    def _variant(self, active: tuple[int, ...], k: int) -> Derivative[Any, Any]:
        """The derivative with respect to the parameters `active`, called with every
        argument (the defaults filled in) and, for a JVP, one tangent per parameter; `k`
        arguments given by position (what a routed derivative inside is given)."""
        inner = self.func
        if isinstance(inner, Derivative) and inner._flexible and \
                inner.mode not in ("jvp", "hvp"):
            inner = inner._variant(inner._differentiated(k), k)
        key: Any = (active, inner)
        variant = self._given.get(key)
        if variant is None:
            spec: WrtSpec = self._wrt_spec if self._wrt_spec is not None else \
                active if self._wrt_tuple else active[0]
            variant = Derivative(inner, self.mode, spec, self.checkpoints,
                                 self.explain, backend=self.backend)
            variant._plain_call = True
            variant._router = weakref.ref(self)
            variant._wrt = None
            variant._resolve_quietly()
            variant.__name__ = self.__name__
            self._given[key] = variant
        return variant

    def _route(self, m: int, variant: Derivative[Any, Any], k: int) -> None:
        """Remember that a call of `m` positional arguments (no keywords but keyword-only
        ones) goes to `variant` (`k` arguments then tangents, for a JVP; -1: as given),
        and install the dispatcher routing such calls from the second call on."""
        self._slow_calls += 1
        known = self._routes.get(m)
        if known is not None and known[0] is variant and \
                type(self).__dict__.get("__call__") is not _generic_call and \
                getattr(_defaults_holder(self.func), "__defaults__", None) is \
                self._dispatch_defaults:
            return  # (a route the dispatcher knows, with the defaults it fills in)
        self._routes[m] = (variant, k)
        if self._slow_calls > 1:
            with _COMPILE_LOCK:
                self._install_router()

    def _install_router(self) -> None:
        """The dispatcher of a routed derivative: the calls of a known number of
        positional arguments go straight to their variant (a JVP's: the defaults of the
        arguments left out filled in, while the function's __defaults__ is the same)."""
        env: dict[str, Any] = {f"{_PREFIX}slow": self._slow_call}
        holder = _defaults_holder(self.func)
        self._dispatch_defaults = getattr(holder, "__defaults__", None)
        fsig = _signature(self.func)
        params = [p for p in fsig.parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        a, kw = f"{_PREFIX}a", f"{_PREFIX}kw"
        # (m, the call of its variant as given, or (j, k, the parameters left out), guard)
        routes: list[tuple[int, Any, str | None]] = []
        for j, (m, (variant, k)) in enumerate(sorted(self._routes.items())):
            # the variant's own dispatcher, called directly (one call less; the variant
            # installs this router again whenever it installs another dispatcher)
            own = type(variant).__dict__.get("__call__")
            env[f"{_PREFIX}V{j}"] = own.__func__ if isinstance(own, staticmethod) else variant
            if k < 0:  # (not a JVP: the differentiated arguments follow the positional ones)
                routes.append((m, f"{_PREFIX}V{j}(*{a}", None))
                continue
            left_out = params[k:]  # (defaulted: given by keyword, or their defaults)
            for p in left_out:
                env[f"{_PREFIX}D{j}_{p.name}"] = p.default
            env[f"{_PREFIX}KW{j}"] = frozenset(self._kwonly + [p.name for p in left_out])
            test = None
            if holder is not None and left_out:
                env[f"{_PREFIX}FUNC"], env[f"{_PREFIX}DEFAULTS"] = holder, holder.__defaults__
                test = f"{_PREFIX}FUNC.__defaults__ is {_PREFIX}DEFAULTS"
            routes.append((m, (j, k, left_out), test))

        def branch(keywords: bool) -> list[str]:
            out = []
            for m, route, test in routes:
                out.append(f"    if n == {m}:")
                if isinstance(route, str):  # (the arguments as given)
                    out.append(f"        return {route}{f', **{kw}' if keywords else ''})")
                    continue
                j, k, left_out = route
                filled = [f"{kw}.pop({p.name!r}, {_PREFIX}D{j}_{p.name})" if keywords else
                          f"{_PREFIX}D{j}_{p.name}" for p in left_out]
                call = ", ".join([f"{a}[{i}]" for i in range(k)] + filled +
                                 [f"{a}[{i}]" for i in range(k, m)] +
                                 ([f"**{kw}"] if keywords else []))
                tests = ([test] if test else []) + \
                    ([f"{_PREFIX}KW{j}.issuperset({kw})"] if keywords else [])
                if tests:
                    out += [f"        if {' and '.join(tests)}:",
                            f"            return {_PREFIX}V{j}({call})"]
                else:
                    out.append(f"        return {_PREFIX}V{j}({call})")
            return out

        # without keywords, then with keywords: keyword-only ones, and for a JVP the
        # defaulted arguments left out by position (never differentiated)
        lines = [f"    n = len({a})", f"    if not {kw}:"]
        lines += ["    " + ln for ln in branch(False)]
        lines += [f"        return {_PREFIX}slow(*{a})"]
        lines += branch(True)
        fname = self.__name__ if self.__name__.isidentifier() else "derivative"
        source = "\n".join([f"def {fname}(*{a}, **{kw}):"] + lines +
                           [f"    return {_PREFIX}slow(*{a}, **{kw})"])
        fn = _compiled_dispatcher(source, env, fname)
        fn.__qualname__ = self.__name__
        type(self).__call__ = staticmethod(fn)  # type: ignore[method-assign]

    def _primitive_variant(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """The derivative serving a call of a primitive's derivative that gives options
        (`grad(np.linalg.norm)(x, ord=1)`, `grad(np.var)(x, 0, ddof=1)`), or arguments a
        builtin takes by *args (`grad(math.hypot)(x, y)`): a derivative of a wrapper taking
        them, made once per set of options; the options are never differentiated, and
        those given by position are moved into `kwargs`. None where the call gives no
        option (this derivative serves it)."""
        fn, options = self._primitive, _options_of(self._primitive)
        n_tangents = 0
        if self.mode in ("jvp", "hvp"):
            wrt = self._wrt_spec
            n_tangents = 1 if isinstance(wrt, (int, str)) else len(wrt) if wrt else -1
        if options is None or self._differentiates_options():
            # *args, or options differentiated by position (`grad(norm.logpdf, wrt=(0, 1,
            # 2))(x, loc, scale)`): as many positional parameters as the call has
            n = len(args) if n_tangents == 0 else len(args) // 2 if n_tangents < 0 else \
                len(args) - n_tangents
            key: Any = ("args", n, tuple(sorted(kwargs)))
            variant = self._variants.get(key)
            if variant is None:
                wrapper = _primitive_function(fn, tuple(sorted(kwargs)), n_args=max(n, 1))
                if wrapper is None:
                    raise TypeError(f"{self.__name__}(): cannot tell the parameters of "
                                    f"{getattr(fn, '__name__', fn)}: differentiate a "
                                    "function that calls it")
                variant = self._variants[key] = self._derivative_of(wrapper)
            return variant
        self._resolve()
        n_req = len(self._positional)
        n_primal = len(args) - (len(self._wrt) if self.mode in ("jvp", "hvp") else 0)
        extra = max(n_primal - n_req, 0)
        if not kwargs and not extra:
            return None
        positional = [o for o in options if o in _positional_names(fn)]
        if extra > len(positional):
            raise TypeError(f"{self.__name__}() takes at most {n_req + len(positional)} "
                            f"arguments, got {n_primal}")
        given = dict(zip(positional, args[n_req:n_req + extra]))
        for name in kwargs:
            if name in given:
                raise TypeError(f"{self.__name__}() got multiple values for argument "
                                f"{name!r}")
            if name not in options:
                raise TypeError(f"{self.__name__}() got an unexpected keyword argument "
                                f"{name!r}")
        kwargs.update(given)
        literals = {n: _literal(v) for n, v in kwargs.items()}
        spec: tuple[Any, ...] = tuple(sorted(
            [(n, lit) if lit is not None else n for n, lit in literals.items()], key=str))
        variant = self._variants.get(spec)
        if variant is None:
            wrapper = _primitive_function(fn, spec)
            if wrapper is None:
                raise TypeError(f"{self.__name__}(): cannot pass options to "
                                f"{getattr(fn, '__name__', fn)}: differentiate a function "
                                "that calls it")
            variant = self._variants[spec] = self._derivative_of(wrapper)
        for o in spec:  # (a literal is in the wrapper's code)
            if isinstance(o, tuple):
                del kwargs[o[0]]
        if extra:  # the options given by position now go by keyword: drop them from args
            return _Dropping(variant, n_req, extra)
        return variant

    def _differentiates_options(self) -> bool:
        """Does wrt name a position past the primitive's required parameters (one of its
        options: norm.logpdf's loc and scale)?"""
        spec = self._wrt_spec
        indices = list(spec) if isinstance(spec, (tuple, list)) else [spec]
        try:
            n_req = len(_signature(self.func).parameters)
        except (TypeError, ValueError):
            return False
        return any(isinstance(i, int) and not isinstance(i, bool) and i >= n_req
                   for i in indices)

    def _arity_variant(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """`wrt` naming an argument of a function's *args (`grad(dist.logpdf, wrt=(0, 1))(x,
        a)`, JAX's argnums): the derivative of a wrapper taking as many positional
        parameters as the call gives, made once per number; None where `wrt` names only
        the function's own parameters."""
        if kwargs or isinstance(self.func, Derivative):
            return None
        try:
            params = list(_signature(self.func).parameters.values())
        except (TypeError, ValueError):
            return None
        star = [p for p in params if p.kind is p.VAR_POSITIONAL]
        named = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        spec = self._wrt_spec
        indices = list(spec) if isinstance(spec, (tuple, list)) else [spec]
        if not star or not any(isinstance(i, int) and not isinstance(i, bool) and
                               i >= len(named) for i in indices):
            return None
        n_tangents = len(indices) if self.mode in ("jvp", "hvp") else 0
        n = len(args) - n_tangents
        if n <= len(named):
            return None
        key = ("arity", n)
        variant = self._variants.get(key)
        if variant is None:
            wrapper = _explicit_arity(self.func, [p.name for p in named], star[0].name, n)
            variant = self._variants[key] = self._derivative_of(wrapper)
        return variant

    def _keywords_variant(self, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """A function taking **kwargs (`rv_continuous.logpdf(x, *args, **kwds)`): the
        derivative of a wrapper taking the call's positional arguments by position and its
        keywords by name (keyword-only, not differentiated, as JAX's argnums), made once
        per number of positional arguments and set of keyword names; None where the
        function takes no **kwargs."""
        if isinstance(self.func, Derivative):
            return None
        try:
            params = list(_signature(self.func).parameters.values())
        except (TypeError, ValueError):
            return None
        if not any(p.kind is p.VAR_KEYWORD for p in params):
            return None
        named = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        star = [p.name for p in params if p.kind is p.VAR_POSITIONAL]
        spec = self._wrt_spec
        n_tangents = 0
        if self.mode in ("jvp", "hvp"):  # (the tangents follow the arguments)
            if spec is not None:
                n_tangents = len(spec) if isinstance(spec, (tuple, list)) else 1
            elif star and len(args) >= 2 * len(named):
                n_tangents = len(named)  # (none for the items of *args)
            else:
                n_tangents = len(args) // 2
        n = len(args) - n_tangents
        if n < 0 or (n > len(named) and not star):
            return None  # (a call that does not fit: the function's own TypeError)
        if spec is None:  # the named parameters given by position (none of *args)
            given = min(n, len(named))
            spec = 0 if given == 1 else tuple(range(given))
        key = ("keywords", n, tuple(sorted(kwargs)))
        variant = self._variants.get(key)
        if variant is None:
            wrapper = _explicit_arity(self.func, [p.name for p in named][:n],
                                      star[0] if star else "args", n, sorted(kwargs))
            variant = self._variants[key] = self._derivative_of(wrapper, spec)
        indices = list(spec) if isinstance(spec, (tuple, list)) else [spec]
        if n_tangents and star and n > len(named) and all(
                not isinstance(i, int) or i < len(named) for i in indices):
            # f(x, *args) differentiated in its own parameters: the tangents come before
            # the extra arguments (its derivative's signature is (x, x_dot, *args))
            return _TangentsLast(variant, len(named), n_tangents)
        return variant

    def _derivative_of(self, wrapper: Callable[..., Any], wrt: WrtSpec = None) -> Any:
        inner: Any = wrapper
        for mode, wrt_, checkpoints, explain, backend in self._chain:
            inner = Derivative(inner, mode, wrt_, checkpoints, explain, backend=backend)
        d: Derivative[Any, Any] = Derivative(inner, self.mode,
                                             self._wrt_spec if wrt is None else wrt,
                                             self.checkpoints, self.explain,
                                             backend=self.backend)
        d.__name__ = self.__name__
        return d

    def _method_call(self, pos: list[Any], kw: dict[str, Any]) -> Any:
        """`s2sad.grad(Class.method, wrt=1)(obj, x)`: the derivative of the method bound to
        `obj` (its attributes read as guarded constants, as for `s2sad.grad(obj.method)`),
        kept per object while it lives."""
        obj = pos[0]
        wrt = self._resolve()
        if 0 in wrt:
            raise WrtError(f"{self.__name__}: the first argument is the object "
                           f"{type(obj).__name__!r}, which is not differentiated; select the "
                           f"differentiated arguments with wrt= (wrt=1 for the first after "
                           f"the object)")
        hit = self._bound.get(id(obj))
        if hit is None or hit[0]() is not obj:
            shifted: WrtSpec = tuple(i - 1 for i in wrt) if self._wrt_tuple else wrt[0] - 1
            bound: Derivative[Any, Any] = Derivative(types.MethodType(self.func, obj),
                                                     self.mode, shifted, self.checkpoints,
                                                     self.explain, backend=self.backend)
            table, key = self._bound, id(obj)
            ref: Callable[[], Any]
            try:
                ref = weakref.ref(obj, lambda _: table.pop(key, None))
            except TypeError:  # an object without weak references: kept for its last use
                table.clear()
                ref = functools.partial(lambda o: o, obj)
            hit = self._bound[id(obj)] = (ref, bound)
        rest = pos[1:]
        if rest and getattr(getattr(self.func, "__code__", None), "co_flags", 0) & \
                inspect.CO_VARARGS and isinstance(rest[-1], tuple):
            rest = rest[:-1] + list(rest[-1])  # (the method's *args, packed by _bind)
        return hit[1](*rest, **kw)

    def _install_dispatcher(self) -> None:
        """Generate the dispatcher: the guards, then cheap type/shape tests of recent
        signatures, each calling its generated function directly.

        It has the parameters of the derivative itself (names, defaults, keywords), so a
        call that does not fit fails as a call of the function would. Installed as the
        `__call__` of this object's own class: calling the object costs one Python call
        more than calling the generated function.
        """
        sig = self.__signature__
        names = list(sig.parameters)
        holder = _defaults_holder(self.func)
        self._dispatch_defaults = getattr(holder, "__defaults__", None)
        if any(n.startswith(_PREFIX) for n in names) or any(
                p.kind is p.VAR_KEYWORD for p in sig.parameters.values()):
            type(self).__call__ = _generic_call  # type: ignore[method-assign]
            return
        # `def fun(x, *args)`: the generated code takes the extra arguments as one tuple
        # after the others (before a JVP's tangents), the dispatcher as the function does
        star = [n for n, p in sig.parameters.items() if p.kind is p.VAR_POSITIONAL]
        plain = [n for n, p in sig.parameters.items()
                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        tangents = plain[self._n_params - len(star):]
        n_pos = len(names) - len(self._kwonly)
        env: dict[str, Any] = {f"{_PREFIX}slow": self._slow_call, f"{_PREFIX}DEFAULT": _DEFAULT}
        params, fill = self._dispatch_parameters(sig, n_pos, env)
        keywords = [f"{n}={n}" for n in self._kwonly]
        call = ", ".join(self._positional + tangents + keywords)
        slow_call = ", ".join(plain + [f"*{n}" for n in star] + keywords)
        guards = Guards()
        for _, hit in self._fast_paths:
            guards = guards.merged(hit.guards)
        cond = guards.condition(env, _PREFIX + "G")
        wrap = f"{_PREFIX}vjp" if self.mode == "vjp" else ""
        if wrap:
            env[wrap] = functools.partial(checked_vjp, name=self.__name__)
        fname = self.__name__ if self.__name__.isidentifier() else "derivative"
        options = []
        if self._primitive is not None:  # options or more arguments: the slow path
            rest, kw = f"{_PREFIX}rest", f"{_PREFIX}kw"
            params = params + [f"*{rest}", f"**{kw}"]
            options = [f"    if {rest} or {kw}:",
                       f"        return {_PREFIX}slow({slow_call}, *{rest}, **{kw})"]
        lines = [f"def {fname}({', '.join(params)}):"] + options + \
            _dispatch_guard_lines(cond, fill)
        n_body = len(lines)
        lines += self._fast_path_lines(self._positional + self._kwonly, call, wrap, env,
                                       tangents)
        if len(lines) == n_body:
            lines.append("        pass")
        lines.append(f"    return {_PREFIX}slow({slow_call})")
        # a recursion too deep for Python is told in words (a try costs nothing in 3.11)
        env[f"{_PREFIX}deep"] = functools.partial(RecursionLimitError.of, self.__name__)
        body = "\n".join(lines[1:]).replace("\n", "\n    ")
        lines = [lines[0], "    try:", "    " + body,
                 f"    except RecursionError as {_PREFIX}e:",
                 f"        raise {_PREFIX}deep({_PREFIX}e) from None"]
        fn = _compiled_dispatcher("\n".join(lines), env, fname)
        fn.__qualname__ = self.__name__
        type(self).__call__ = staticmethod(fn)  # type: ignore[method-assign]
        self._dispatcher_changed()

    def _dispatch_parameters(self, sig: inspect.Signature, n_pos: int,
                             env: dict[str, Any]) -> tuple[list[str], list[str]]:
        """The dispatcher's parameter list (a default is a marker) and the statements that
        fill in a default the call left out, as the function would read it."""
        params: list[str] = []
        fill: list[str] = []
        current = _signature(self.func).parameters
        # (the function's, or the innermost function's for a derivative of a derivative)
        holder = _defaults_holder(self.func)
        star = any(p.kind is p.VAR_POSITIONAL for p in sig.parameters.values())
        for i, n in enumerate(sig.parameters):
            p = sig.parameters[n]
            if p.kind is p.VAR_POSITIONAL:
                params.append(f"*{n}")
                continue
            if i == n_pos and self._kwonly and not star:
                params.append("*")
            if p.default is not p.empty:
                params.append(f"{n}={_PREFIX}DEFAULT")
                env[f"{_PREFIX}FUNC"] = holder
                if holder is None:  # (no defaults to change: the signature's value)
                    env[f"{_PREFIX}D_{n}"] = current[n].default
                    fill.append(f"        if {n} is {_PREFIX}DEFAULT:\n"
                                f"            {n} = {_PREFIX}D_{n}")
                elif i < n_pos:  # kept, while the function's __defaults__ is the same tuple
                    env[f"{_PREFIX}D_{n}"] = current[n].default
                    env[f"{_PREFIX}DEFAULTS"] = holder.__defaults__
                    fill.append(f"        if {n} is {_PREFIX}DEFAULT:\n"
                                f"            if {_PREFIX}FUNC.__defaults__ is {_PREFIX}DEFAULTS:\n"
                                f"                {n} = {_PREFIX}D_{n}\n"
                                f"            else:\n"
                                f"                {_PREFIX}ok = False")
                else:  # read when used, as the function reads its __kwdefaults__
                    fill.append(f"        if {n} is {_PREFIX}DEFAULT:\n"
                                f"            {n} = {_PREFIX}FUNC.__kwdefaults__[{n!r}]")
            else:
                params.append(n)
        if self._kwonly and "*" not in params and not star:
            params.insert(n_pos, "*")
        return params, fill

    def _fast_path_lines(self, arg_names: list[str], call: str, wrap: str,
                         env: dict[str, Any], tangents: list[str]) -> list[str]:
        """One test of the arguments' types (and shapes, dtypes) per recent specialisation,
        each returning its generated function's result."""
        lines: list[str] = []
        for k, (sample, hit) in enumerate(self._fast_paths):
            tests = _sample_tests(k, arg_names, sample, env)
            if tests is None:
                continue
            if self.mode in ("jvp", "hvp"):  # a tangent of another shape: the slow path
                tests += self._tangent_tests(k, sample, env, tangents)
            fn = in_precision(self, sample, hit)
            env[f"{_PREFIX}F{k}"] = _direct_entry(fn, k, sample, self.mode, self._wrt,
                                                  self._positional, tangents, tests)
            test = " and ".join(tests) if tests else "True"
            result = f"{_PREFIX}F{k}({call})"
            if wrap:
                result = f"{wrap}({result})"
            if hit.out_structure is not None:  # a list, namedtuple or dict returned
                env[f"{_PREFIX}O{k}"] = structured_result(self.mode, hit.out_structure,
                                                          self.__name__)
                result = f"{_PREFIX}O{k}({result})"
            lines.append(f"        if {test}:")
            lines.append(f"            return {result}")
        return lines

    def _tangent_tests(self, k: int, sample: list[Any], env: dict[str, Any],
                       tangents: list[str]) -> list[str]:
        """The fast path's tests that each tangent (named `tangents`) has its primal's
        shape (a scalar's: not an array), so that any other goes to the slow path, which
        refuses it."""
        tests: list[str] = []
        env[f"{_PREFIX}ndarray"] = _ndarray
        for j, i in enumerate(self._wrt):
            t, shape, _ = sample[i]
            name = tangents[j]
            if t is _ndarray and type(shape) is tuple and shape[:1] == ("sizes",):
                tests.append(f"type({name}) is {_PREFIX}ndarray and "
                             f"{name}.shape == {self._positional[i]}.shape")
            elif t is _ndarray:
                env[f"{_PREFIX}S{k}_{name}"] = shape
                tests.append(f"type({name}) is {_PREFIX}ndarray and "
                             f"{name}.shape == {_PREFIX}S{k}_{name}")
            elif t in (float, complex) or issubclass(t, np.inexact):
                tests.append(f"type({name}) is not {_PREFIX}ndarray")
        return tests

    # -- inspection ------------------------------------------------------

    @property
    def source(self) -> str:
        """The generated Python source of the specialisation used last (a generic one,
        for arguments of any kind, before the first call).

        Returns:
            The source text, as `print` shows it.

        Examples:
            >>> import s2sad
            >>> def square(x):
            ...     return x ** 2
            >>> d = s2sad.grad(square)
            >>> "def square_grad(x):" in d.source
            True
        """
        if self._last_variant is not None:  # (a routed call: the variant serving it)
            variant_source: str = self._last_variant.source
            return variant_source
        if self._last is None or not self._valid(self._last):
            self._compile_generic()
        source: str = self._last.source
        return source

    @property
    def compiled_function(self) -> Callable[..., Any]:
        """The plain generated function of the specialisation used last (no dispatch, no
        guards: it keeps what it was compiled from).

        Returns:
            The generated function; it takes the derivative's arguments, all of them.

        Examples:
            >>> import s2sad
            >>> def square(x):
            ...     return x ** 2
            >>> d = s2sad.grad(square)
            >>> d(3.0)
            6.0
            >>> d.compiled_function(3.0)  # 2 x, computed by the generated code alone
            6.0
        """
        if self._last_variant is not None:  # (a routed call: the variant serving it)
            variant_function: Callable[..., Any] = self._last_variant.compiled_function
            return variant_function
        if self._last is None or not self._valid(self._last):
            self._compile_generic()
        function: Callable[..., Any] = self._last.function
        return function

    def _compile_generic(self) -> None:
        with _COMPILE_LOCK:
            self._resolve()
            key = (self.func, getattr(self.func, "__code__", None), self._cmode, self._wrt,
                   self._wrt_tuple)
            try:
                recent = _LAST_BY_FUNC.get(key)
            except TypeError:
                recent = None
            if recent is not None and self._valid(recent):
                self._last = recent
                return
            guards, version = collect(self.func), TABLE.version
            hit = compiled(self.func, self._cmode, self._wrt, self._wrt_tuple,
                           [UNKNOWN] * self._n_params, {}, ahead_of_time=False)
            hit.guards, hit.table_version = guards, version
            self._last = hit

    def source_for(self, *args: P.args, **kwargs: P.kwargs) -> str:
        """The generated source specialised for these arguments, compiled without running it.

        Returns:
            The source text of the specialisation a call with these arguments runs.

        Examples:
            >>> import numpy as np
            >>> import s2sad
            >>> def total(x):
            ...     return np.sum(x)
            >>> d = s2sad.grad(total)
            >>> "(n,)" in d.source_for(np.zeros(3))  # specialised for vectors of any length
            True
        """
        self._resolve()
        if self.mode in ("jvp", "hvp") and ("primals" in kwargs or "tangents" in kwargs) and \
                not {"primals", "tangents"} & set(self.__signature__.parameters):
            rest: dict[str, Any] = dict(kwargs)
            primals: Any = rest.pop("primals", ())
            tangents: Any = rest.pop("tangents", ())
            if self._flexible:
                variant, pos, kw, _ = self._routed_bind(tuple(primals), rest,
                                                        tuple(tangents))
                return variant.source_for(*pos, **kw)  # type: ignore[no-any-return]
            return self.source_for(*self._jax_flat(primals, tangents), **rest)
        elif self._flexible:
            variant, pos, kw, _ = self._routed_bind(args, kwargs)
            return variant.source_for(*pos, **kw)  # type: ignore[no-any-return]
        pos, kw = self._bind(args, kwargs)
        primal = pos[:self._n_params]
        key, facts = self._key(primal, kw)
        hit = self._compile(key, primal, kw, facts)
        if not sizes_fit(hit, primal):
            hit = self._compile(self._sized_key(primal, kw), primal, kw, facts)
        source: str = hit.source
        return source

    def _repr_html_(self) -> str:
        """Jupyter: the function beside its derivative (the specialisation used last),
        line by line, highlighted when Pygments is installed (s2sad[show])."""
        from s2sad.codegen.display import side_by_side_html

        try:
            c = self._shown()
        except S2SADError as e:
            return f"<pre>{html.escape(str(e))}</pre>"
        return side_by_side_html(c.ir.source_lines, c.ir.first_line, c.source, repr(self))

    def _repr_markdown_(self) -> str:
        """Jupyter and Markdown renderers: the function and its derivative as code."""
        from s2sad.codegen.display import markdown

        try:
            c = self._shown()
        except S2SADError as e:
            return f"```\n{e}\n```\n"
        return markdown(c.ir.source_lines, c.source, repr(self))

    def _shown(self) -> Any:
        if self._last_variant is not None:
            return self._last_variant._shown()
        self.source  # noqa: B018 - compiles the generic code before the first call
        return self._last

    def __repr__(self) -> str:
        return f"<s2sad {self.mode} of {getattr(self.func, '__qualname__', self.func)}>"


def _primitive_options(fn: Callable[..., Any]) -> bool:
    """Does a call of primitive `fn` take more than its required parameters?"""
    try:
        if not TABLE.is_primitive(fn):
            return False
    except TypeError:
        return False
    options = _options_of(fn)
    return options is None or bool(options)


def _literal(value: Any) -> str | None:
    """The source of `value` where it is a literal Python reads back as the same value of
    the same type (None, a bool, int or str, infinity, or a tuple of them), else None. A
    finite float is not one: it goes as an argument (np.clip's bounds, which may change
    from call to call, would compile once per value)."""
    t = type(value)
    if t is tuple:
        items = [_literal(v) for v in value]
        written = [i for i in items if i is not None]
        if len(written) < len(items):
            return None
        return "(" + "".join(i + ", " for i in written) + ")"
    if value is None or t in (bool, int, str):
        return repr(value)
    if t is float and value in (np.inf, -np.inf):
        return "1e999" if value > 0 else "-1e999"  # (how Python writes infinity)
    return None


def _explicit_arity(fn: Callable[..., Any], named: list[str], star: str,
                    n: int, keywords: tuple[str, ...] | list[str] = ()) -> Callable[..., Any]:
    """A function of `n` positional parameters calling `fn` (whose last are its *args),
    and of keyword-only parameters passed on by name, with source lowering reads
    (registered with linecache)."""
    params = named + [f"{star}_{i}" for i in range(n - len(named))]
    name = getattr(fn, "__name__", None) or "function"
    name = name if name.isidentifier() else "function"
    taken = set(params)
    keywords = [k for k in keywords if k.isidentifier() and k not in taken and
                not k.startswith("_s2sad")]
    filename = f"<s2sad: {name} with {n} arguments{''.join(', ' + k for k in keywords)}>"
    signature = ", ".join(params + (["*"] + keywords if keywords else []))
    passed = ", ".join(params + [f"{k}={k}" for k in keywords])
    source = f"def {name}({signature}):\n    return _s2sad_fn({passed})\n"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    scope: dict[str, Any] = {"_s2sad_fn": fn, "__name__": f"s2sad.arity.{name}"}
    exec(compile(source, filename, "exec"), scope)
    wrapper: Callable[..., Any] = scope[name]
    return wrapper


def _primitive_signature(fn: Callable[..., Any]) -> inspect.Signature:
    """A primitive's signature; for one taking `(x, *args, **kwds)` (scipy.stats' norm.cdf,
    whose rules name loc and scale), its rule's, which says what the arguments are."""
    sig = inspect.signature(fn)
    if any(p.kind is p.VAR_POSITIONAL for p in sig.parameters.values()):
        try:
            rule = TABLE.vjp_rules.get(fn) or TABLE.jvp_rules.get(fn)
        except TypeError:
            rule = None
        if rule is not None:
            rule_sig: inspect.Signature = rule.signature
            return rule_sig
    return sig


@functools.lru_cache(maxsize=512)
def _positional_names(fn: Callable[..., Any]) -> frozenset[str]:
    sig = _primitive_signature(fn)
    return frozenset(p.name for p in sig.parameters.values()
                     if p.kind is p.POSITIONAL_OR_KEYWORD)


class _TangentsLast:
    """A JVP called as (primals before *args, tangents, the *args), served by a derivative
    taking every primal first."""

    def __init__(self, variant: Any, n_named: int, n_tangents: int) -> None:
        self.variant, self.n_named, self.n_tangents = variant, n_named, n_tangents

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        k, t = self.n_named, self.n_tangents
        return self.variant(*args[:k], *args[k + t:], *args[k:k + t], **kwargs)


class _Dropping:
    """A primitive's derivative called with options given by position: those go by
    keyword (see Derivative._primitive_variant), the tangents after them by position."""

    def __init__(self, variant: Any, n_req: int, n_extra: int) -> None:
        self.variant, self.n_req, self.n_extra = variant, n_req, n_extra

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        rest = args[:self.n_req] + args[self.n_req + self.n_extra:]
        return self.variant(*rest, **kwargs)


def _as_function(func: Callable[..., Any]) -> Callable[..., Any]:
    """An object whose class defines `__call__` in Python (a link function, a model), passed
    where a function is expected: its `__call__` bound to it, read like any bound method
    (what it holds is guarded like a global)."""
    call = getattr(type(func), "__call__", None)
    if isinstance(call, types.FunctionType) and not isinstance(func, type) and \
            not isinstance(func, (types.FunctionType, types.MethodType, functools.partial)) and \
            not is_derivative(func) and not TABLE.is_primitive(func):
        return types.MethodType(call, func)
    return func


def _generic_call(self: Derivative[Any, Any], *args: Any, **kwargs: Any) -> Any:
    return self._slow_call(*args, **kwargs)


def _direct_entry(fn: Callable[..., Any], k: int, sample: list[Any], mode: str,
                  wrt: tuple[int, ...], names: list[str], tangents: list[str],
                  tests: list[str]) -> Callable[..., Any]:
    """backend="numba": the machine code's own entry for arguments of the kinds of `sample`
    (numba_compile.direct_entry), which the fast path `k` calls in place of `fn`, else
    `fn`. A JVP's tangents are then required (in `tests`) to be of their primals' types
    exactly: the entry takes those only; an int argument, one that fits an int64."""
    direct = getattr(fn, "direct_entry", None)
    if direct is None:
        return fn
    jvp = mode in ("jvp", "hvp")
    entry: Callable[..., Any] | None = direct(
        list(sample) + [sample[i] for i in wrt] if jvp else sample)
    if entry is None:
        return fn
    tests += [f"{-2 ** 63} <= {names[i]} < {2 ** 63}" for i, (t, _, _) in enumerate(sample)
              if t is int]
    if not jvp:
        return entry
    loose = {f"type({t}) is not {_PREFIX}ndarray" for t in tangents}  # (_tangent_tests')
    tests[:] = [t for t in tests if t not in loose] + \
        [f"type({t}) is {_PREFIX}T{k}_{names[i]}" for t, i in zip(tangents, wrt)]
    return entry


def _dispatch_guard_lines(cond: str, fill: list[str]) -> list[str]:
    """The dispatcher's body up to its fast paths: the guards and the defaults filled in,
    leaving `_s2_ok` true where the fast paths may be tried."""
    if cond == "True" and not fill:
        return ["    if True:"]
    lines = ["    try:", f"        {_PREFIX}ok = {cond}"]
    if fill:
        lines += [f"        if {_PREFIX}ok:"]
        lines += ["    " + ln.replace("\n", "\n    ") for ln in fill]
    return lines + ["    except Exception:", f"        {_PREFIX}ok = False",
                    f"    if {_PREFIX}ok:"]


def _sample_tests(k: int, arg_names: list[str], sample: list[Any],
                  env: dict[str, Any]) -> list[str] | None:
    """The tests that arguments are of the kinds of `sample` (type; shape and dtype of an
    array); None where a container argument makes the dispatcher leave it to the slow path."""
    tests: list[str] = []
    firsts: dict[str, str] = {}  # size symbol -> where the call's first size of it is read
    guards: tuple[Any, ...] = ()
    for name, entry in zip(arg_names, sample):
        t, shape, dtype = entry
        if type(shape) is tuple and shape[:1] == ("sizes",):
            # a specialisation for every size: rank, dtype, and the pattern of the sizes
            dims, guards = shape[1], shape[2]
            key = f"{k}_{name}"
            env[f"{_PREFIX}T{key}"], env[f"{_PREFIX}D{key}"] = t, dtype
            if dims[:1] == ("int",):  # (an int argument that may set a size)
                tests.append(f"type({name}) is {_PREFIX}T{key}")
                sizes = [(name, dims[1])]
            else:
                tests.append(f"type({name}) is {_PREFIX}T{key} and {name}.ndim == "
                             f"{len(dims)} and {name}.dtype == {_PREFIX}D{key}")
                sizes = [(f"{name}.shape[{axis}]", d) for axis, d in enumerate(dims)]
            for size, d in sizes:
                if type(d) is int:
                    tests.append(f"{size} == {d}")
                elif d in firsts:
                    tests.append(f"{size} == {firsts[d]}")
                else:
                    tests.append(f"{size} > 1")
                    tests += [f"{size} != {other}" for other in firsts.values()]
                    firsts[d] = size
            continue
        if not _value_tests(tests, name, f"{k}_{name}", entry, env):
            return None
    if guards:
        from s2sad.ir.dims import guard_text

        tests += [f"({guard_text(g, firsts)})" for g in guards]
    return tests


def _value_tests(tests: list[str], expr: str, key: str, entry: tuple[Any, Any, Any],
                 env: dict[str, Any]) -> bool:
    """Append the tests that the value `expr` is of the kind `entry` (calls.sample): its
    type; an array's shape and dtype; a tuple's or list's length and items (the extra
    arguments of `def fun(x, *args)`). False where the dispatcher leaves it to the slow
    path (a dict, a namedtuple, a long or nested container)."""
    t, shape, dtype = entry
    if t is tuple or t is list:
        if shape is None:
            return False
        env[f"{_PREFIX}T{key}"] = t
        tests.append(f"type({expr}) is {_PREFIX}T{key} and len({expr}) == {len(shape)}")
        return all(_value_tests(tests, f"{expr}[{i}]", f"{key}_{i}", item, env)
                   for i, item in enumerate(shape))
    if t is dict or issubclass(t, tuple) or issubclass(t, list):
        return False
    env[f"{_PREFIX}T{key}"] = t
    tests.append(f"type({expr}) is {_PREFIX}T{key}")
    if t is bool or t is str or (isinstance(shape, tuple) and shape[:1] == ("=",)):
        # (its value: see calls.sample; an int option at its default, _option_facts)
        env[f"{_PREFIX}V{key}"] = shape[1]
        tests.append(f"{expr} == {_PREFIX}V{key}")
        return True
    if t is _ndarray or (shape is not None and hasattr(t, "__array_function__")):
        env[f"{_PREFIX}S{key}"] = shape
        env[f"{_PREFIX}D{key}"] = dtype
        tests.append(f"{expr}.shape == {_PREFIX}S{key} and {expr}.dtype == {_PREFIX}D{key}")
    return True


def _compiled_dispatcher(source: str, env: dict[str, Any], fname: str) -> Callable[..., Any]:
    """Run the dispatcher's source in `env` and return its function (the code is compiled
    once per distinct source: the same chain of tests for another function)."""
    code = _DISPATCH_CODE.get(source)
    if code is None:
        code = _DISPATCH_CODE[source] = compile(source, "<s2sad dispatch>", "exec")
    exec(code, env)
    fn: Callable[..., Any] = env[fname]
    return fn
