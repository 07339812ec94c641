"""The public transformations: jvp, vjp, grad, value_and_grad (and their decorator forms).

Each returns a `Derivative`: a callable that compiles lazily, specialises the
generated code on the kinds of its arguments (Python scalar, array shape and
dtype) and caches each specialisation in memory.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from s2sad.errors import WrtError
from s2sad.ir.kinds import UNKNOWN, kind_of_value
from s2sad.transform import generate, resolve_wrt

_ndarray = np.ndarray
_GLOBAL_CACHE: dict = {}
_DISPATCH_CODE: dict = {}  # dispatcher source -> compiled code (its constants live in env)
_LAST_BY_FUNC: dict = {}  # (func, code, mode, wrt, wrt_tuple) -> last specialisation


def _arg_key(a):
    t = type(a)
    if t is _ndarray:
        return (a.shape, a.dtype.char)
    if t is tuple:
        return tuple(_arg_key(x) for x in a)
    return t


class Derivative:
    """A derivative of a Python function, compiled on first use.

    Call it like the generated function; `.source` is the generated Python source
    (of the most recent specialisation, or a generic one before the first call).
    """

    def __init__(self, func, mode: str, wrt=None):
        if not callable(func):
            raise TypeError(f"s2sad.{mode} needs a function, got {func!r}")
        self.func = func
        self.mode = mode
        self._wrt_spec = wrt
        self._wrt = None
        self._cache: dict = {}
        self._last = None
        self._n_params = None
        self._fast_paths: list = []
        # each Derivative gets its own class, whose __call__ is the generated dispatcher
        self.__class__ = type(type(self).__name__, (type(self),), {})
        type(self).__call__ = _generic_call
        functools.update_wrapper(self, func, updated=())
        del self.__wrapped__  # the signature is the derivative's own, set when resolved
        self.__name__ = f"{getattr(func, '__name__', 'f')}_{mode}"
        self._resolve_quietly()

    # -- compilation ---------------------------------------------------

    def _resolve(self):
        if self._wrt is None:
            self._wrt, self._wrt_tuple = resolve_wrt(self.func, self._wrt_spec)
            sig = inspect.signature(self.func)
            self.__signature__ = self._call_signature(sig)
            self._n_params = sum(1 for p in sig.parameters.values()
                                 if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
            self._has_kwonly = any(p.kind is p.KEYWORD_ONLY for p in sig.parameters.values())
        return self._wrt

    def _compile(self, key, args, kwargs):
        wrt = self._resolve()
        gkey = (self.func, getattr(self.func, "__code__", None), self.mode, wrt,
                self._wrt_tuple, key)
        try:
            hit = _GLOBAL_CACHE.get(gkey)
        except TypeError:
            hit = None
        if hit is None:
            arg_kinds = [kind_of_value(a, keep_value=False) for a in args]
            kw_kinds = {n: kind_of_value(v, keep_value=False) for n, v in kwargs.items()}
            from s2sad.codegen.aot import load_ahead_of_time

            hit = load_ahead_of_time(self.func, self.mode, wrt, self._wrt_tuple, arg_kinds,
                                     kw_kinds)  # a present, fresh generated module
            if hit is None:
                hit = generate(self.func, self.mode, wrt, self._wrt_tuple, arg_kinds, kw_kinds)
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

    def _split(self, args):
        """The primal arguments of a call (a JVP call also passes tangents)."""
        self._resolve()
        n = self._n_params
        if self.mode in ("jvp", "hvp"):
            if len(args) != n + len(self._wrt):
                raise TypeError(
                    f"{self.__name__} takes the {n} arguments of {self.func.__name__} and then "
                    f"one tangent per differentiated argument ({len(self._wrt)}); "
                    f"got {len(args)} arguments")
            return args[:n]
        if len(args) != n:
            raise TypeError(f"{self.__name__} takes {n} positional arguments, got {len(args)}")
        return args

    def _resolve_quietly(self):
        """Resolve wrt now when possible (errors surface again at first use)."""
        try:
            self._resolve()
        except Exception:
            self._wrt = None

    def _call_signature(self, sig):
        """The signature of the derivative itself (a JVP also takes one tangent per wrt)."""
        params = list(sig.parameters.values())
        if self.mode not in ("jvp", "hvp"):
            return sig
        positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        rest = [p for p in params if p not in positional]
        tangents = [inspect.Parameter(positional[i].name + "_dot",
                                      inspect.Parameter.POSITIONAL_OR_KEYWORD)
                    for i in self._wrt]
        plain = [p.replace(default=inspect.Parameter.empty) for p in positional]
        return sig.replace(parameters=plain + tangents + rest)

    def _slow_call(self, *args, **kwargs):
        """Dispatch by the full argument key, compiling a new specialisation if needed."""
        primal = self._split(args)
        key = tuple(map(_arg_key, primal))
        if kwargs:
            key += tuple(sorted((k, _arg_key(v)) for k, v in kwargs.items()))
        hit = self._cache.get(key)
        if hit is None:
            hit = self._compile(key, primal, kwargs)
            if not kwargs:
                self._fast_paths.insert(0, (primal, hit.function))
                del self._fast_paths[4:]
                self._install_dispatcher()
        return hit.function(*args, **kwargs)

    def _install_dispatcher(self):
        """Generate the dispatcher: a chain of cheap type/shape tests on recent signatures.

        Installed as the `__call__` of this object's own class, so that calling the object
        costs one Python call more than calling the generated function directly.
        """
        n = self._n_params
        n_all = n + (len(self._wrt) if self.mode in ("jvp", "hvp") else 0)
        names = [f"a{i}" for i in range(n_all)]
        sig = ", ".join(names)
        lines = [f"def dispatch({sig}{', **kw' if self._has_kwonly else ''}):"]
        if self._has_kwonly:
            lines.append(f"    if kw:\n        return slow({sig}, **kw)")
        env = {"slow": self._slow_call}
        for k, (primal, fn) in enumerate(self._fast_paths):
            tests = []
            for i, a in enumerate(primal):
                t = type(a)
                env[f"T{k}_{i}"] = t
                tests.append(f"type(a{i}) is T{k}_{i}")
                if t is _ndarray:
                    env[f"S{k}_{i}"] = a.shape
                    env[f"D{k}_{i}"] = a.dtype
                    tests.append(f"a{i}.shape == S{k}_{i} and a{i}.dtype == D{k}_{i}")
                elif t is tuple or t is list:
                    tests = None
                    break
            if tests is None:
                continue
            env[f"F{k}"] = fn
            cond = " and ".join(tests) if tests else "True"
            lines.append(f"    if {cond}:")
            lines.append(f"        return F{k}({sig})")
        lines.append(f"    return slow({sig})")
        source = "\n".join(lines)
        code = _DISPATCH_CODE.get(source)
        if code is None:  # the same chain of tests for another function: compile once
            code = _DISPATCH_CODE[source] = compile(source, "<s2sad dispatch>", "exec")
        exec(code, env)
        type(self).__call__ = staticmethod(env["dispatch"])

    # -- inspection ------------------------------------------------------

    @property
    def source(self) -> str:
        """The generated source (last specialisation used; generic before any call)."""
        if self._last is None:
            self._compile_generic()
        return self._last.source

    @property
    def compiled_function(self):
        """The plain generated function of the last specialisation (no dispatch)."""
        if self._last is None:
            self._compile_generic()
        return self._last.function

    def _compile_generic(self):
        self._resolve()
        key = (self.func, getattr(self.func, "__code__", None), self.mode, self._wrt,
               self._wrt_tuple)
        try:
            recent = _LAST_BY_FUNC.get(key)
        except TypeError:
            recent = None
        if recent is not None:
            self._last = recent
            return
        from s2sad.transform import generate as gen

        hit = gen(self.func, self.mode, self._wrt, self._wrt_tuple,
                  [UNKNOWN] * self._n_params, {})
        self._last = hit

    def source_for(self, *args, **kwargs) -> str:
        """The generated source specialised for these arguments (without running it)."""
        primal = self._split(args)
        key = tuple(map(_arg_key, args))
        return self._compile(key, primal, kwargs).source

    def __repr__(self) -> str:
        return f"<s2sad {self.mode} of {getattr(self.func, '__qualname__', self.func)}>"


def _generic_call(self, *args, **kwargs):
    return self._slow_call(*args, **kwargs)


def _transform(mode):
    def make(f=None, *, wrt=None):
        if f is None:
            return lambda g: Derivative(g, mode, wrt)
        if isinstance(f, (int, str, tuple)) and not callable(f):
            raise WrtError(f"s2sad.{mode}: pass wrt as a keyword (wrt={f!r})")
        return Derivative(f, mode, wrt)

    return make


def jvp(f=None, wrt=None):
    """Forward mode: `jvp(f)(*args, *tangents) -> (out, out_dot)`."""
    return _transform("jvp")(f, wrt=wrt)


def vjp(f=None, wrt=None):
    """Reverse mode: `vjp(f)(*args) -> (out, pullback)`; `pullback(out_bar)` -> cotangents."""
    return _transform("vjp")(f, wrt=wrt)


def grad(f=None, wrt=0):
    """Gradient of a scalar function: `grad(f)(*args)` -> cotangent (tuple for tuple `wrt`)."""
    return _transform("grad")(f, wrt=wrt)


def value_and_grad(f=None, wrt=0):
    """`value_and_grad(f)(*args) -> (f(*args), grad)`."""
    return _transform("value_and_grad")(f, wrt=wrt)


def jacfwd(f=None, wrt=0):
    """Jacobian by vector forward mode: one call, one tangent direction per input entry.

    `jacfwd(f)(*args)` has shape out.shape + arg.shape; a tuple `wrt` gives a tuple of
    blocks, a tuple output a tuple of Jacobians.
    """
    return _transform("jacfwd")(f, wrt=wrt)


def jacrev(f=None, wrt=0):
    """Jacobian by reverse mode with a batch of seeds (one per output entry)."""
    return _transform("jacrev")(f, wrt=wrt)


def hessian(f=None, wrt=0):
    """Hessian of a scalar function: jacfwd(grad(f)) (forward over reverse)."""
    if f is None:
        return lambda g: hessian(g, wrt)
    return Derivative(Derivative(f, "grad", wrt), "jacfwd", wrt)


def hvp(f=None, wrt=0):
    """Hessian-vector product without forming the Hessian: `hvp(f)(*args, v)`.

    One vector per `wrt` argument; computed as the JVP of the gradient.
    """
    if f is None:
        return lambda g: hvp(g, wrt)
    return Derivative(Derivative(f, "grad", wrt), "hvp", wrt)
