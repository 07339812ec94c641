"""The rule table: which callables are primitives, and their JVP/VJP rules.

Rules are plain Python functions written in the restricted language the
compiler accepts; the compiler parses them and inlines their bodies.

JVP rule: parameters are the primitive's parameters (the *primal signature*),
plus `<p>_dot` for the tangent of parameter `p`, plus optionally `ans` (the
primal result). It returns the tangent of the result.

VJP rule: parameters are `g` (the result's cotangent), optionally `ans`, and
the primal signature. It returns the cotangent of each differentiable
parameter, in signature order (a tuple when there are several).
"""

from __future__ import annotations

import importlib
import inspect
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeVar, overload

from s2sad.errors import RuleError


@dataclass
class Rule:
    """One registered JVP or VJP rule."""

    func: object
    mode: str  # "jvp" or "vjp"
    signature: inspect.Signature  # the primal signature (no g, ans, *_dot)
    diff_params: tuple  # parameter names with a derivative
    uses_ans: bool
    _ir: object = field(default=None, repr=False)  # lowered rule body, cached

    @property
    def primal_params(self) -> tuple:
        return tuple(self.signature.parameters)


class RuleTable:
    """Maps primitive callables to their rules and properties."""

    def __init__(self):
        self.jvp_rules: dict = {}
        self.vjp_rules: dict = {}
        self.nondiff: dict = {}  # callable -> True
        self.linear: dict = {}  # callable -> tuple of parameter names it is linear in
        self.spelling: dict = {}  # callable -> (module path, attribute name) for imports
        self.checks: dict = {}  # callable -> compile-time check of a call's options
        self.optional: dict = {}  # an optional library's module -> its rule module
        self._listeners: list = []
        self._version = 0
        self._fingerprint = None  # (version, hash)

    @property
    def version(self) -> int:
        """The table's generation: bumped by every registration."""
        return self._version

    @version.setter
    def version(self, value: int):
        self._version = value
        for listener in list(self._listeners):
            listener()

    def add_listener(self, callback):
        """Call `callback()` after every registration (compiled derivatives are dropped)."""
        self._listeners.append(callback)

    def _key(self, fn):
        try:
            hash(fn)
            return fn
        except TypeError:
            raise RuleError(f"cannot register a rule for unhashable object {fn!r}")

    def is_primitive(self, fn) -> bool:
        try:
            if fn in self.jvp_rules or fn in self.vjp_rules or fn in self.nondiff:
                return True
        except TypeError:
            return False
        return self._load_optional_rules(fn)

    def _load_optional_rules(self, fn) -> bool:
        """Import the rule module of an optional library (`optional`: the library's module
        -> the rule module) the first time one of its functions is looked up: SciPy takes
        longer to import than s2sad, so it is never imported for a user who does not call
        it. Is `fn` a primitive then?"""
        if not self.optional:
            return False
        module = getattr(fn, "__module__", None)
        for library, rules in list(self.optional.items()):
            loaded = sys.modules.get(library)
            if loaded is None:
                continue
            if (isinstance(module, str) and module.startswith(library)) or (
                    type(fn).__name__ == "ufunc" and
                    getattr(loaded, getattr(fn, "__name__", ""), None) is fn):
                del self.optional[library]
                importlib.import_module(rules)  # (registers its rules)
                return fn in self.jvp_rules or fn in self.vjp_rules or fn in self.nondiff
        return False

    def is_nondiff(self, fn) -> bool:
        try:
            return bool(self.nondiff.get(fn, False))
        except TypeError:
            return False

    def fingerprint(self) -> str:
        """A content hash of the table: what each rule covers and the sources of the rules.

        Stable across processes (the disk cache keys on it); editing a rule changes it.
        """
        if self._fingerprint is None or self._fingerprint[0] != self.version:
            self._fingerprint = (self.version, _content_hash(self))
        return self._fingerprint[1]

    # -- registration -----------------------------------------------------

    def add_rule(self, fns, func, mode: str, wrt=None):
        sig = inspect.signature(func)
        names = list(sig.parameters)
        kinds = {p.kind for p in sig.parameters.values()}
        if inspect.Parameter.VAR_POSITIONAL in kinds or inspect.Parameter.VAR_KEYWORD in kinds:
            raise RuleError(f"{mode} rule {func.__name__} may not take *args or **kwargs")
        uses_ans = "ans" in names
        if mode == "jvp":
            dots = [n for n in names if n.endswith("_dot")]
            primal = [p for n, p in sig.parameters.items() if n not in dots and n != "ans"]
            primal_names = {p.name for p in primal}
            for d in dots:
                if d[:-4] not in primal_names:
                    raise RuleError(
                        f"jvp rule {func.__name__}: tangent parameter {d!r} has no primal "
                        f"parameter {d[:-4]!r}")
            diff = tuple(d[:-4] for d in dots)
        else:
            if "g" not in names:
                raise RuleError(f"vjp rule {func.__name__} must take the cotangent `g`")
            primal = [p for n, p in sig.parameters.items() if n not in ("g", "ans")]
            if wrt is None:
                diff = tuple(p.name for p in primal if p.default is inspect.Parameter.empty)
            else:
                diff = tuple(wrt)
        primal_sig = sig.replace(parameters=primal)
        for fn in fns:
            _check_fits(fn, primal_sig, func, mode)
            rule = Rule(func, mode, primal_sig, diff, uses_ans)
            table = self.jvp_rules if mode == "jvp" else self.vjp_rules
            other = (self.vjp_rules if mode == "jvp" else self.jvp_rules).get(fn)
            if other is not None and _positions(other) != _positions(rule):
                raise RuleError(
                    f"{mode} rule {func.__name__} differentiates {list(diff)} but the "
                    f"{other.mode} rule {other.func.__name__} differentiates "
                    f"{list(other.diff_params)}",
                    hint="give the VJP rule wrt=(...) naming the JVP rule's tangents")
            table[self._key(fn)] = rule
        self.version += 1
        return func


def _content_hash(table: RuleTable) -> str:
    import hashlib
    import re

    names: dict = {}

    def name(obj) -> str:
        text = names.get(id(obj))
        if text is None:
            text = names[id(obj)] = describe(obj)
        return text

    def describe(obj) -> str:
        mod = getattr(obj, "__module__", None) or type(obj).__module__
        qual = getattr(obj, "__qualname__", None) or getattr(obj, "__name__", None)
        line = getattr(getattr(obj, "__code__", None), "co_firstlineno", "")
        text = f"{mod}.{qual}:{line}" if qual else repr(obj)
        # no addresses, so that the hash is the same in every process
        return re.sub(r" at 0x[0-9a-fA-F]+", "", text) if " at 0x" in text else text

    entries, files = [], set()
    for mode, rules in (("jvp", table.jvp_rules), ("vjp", table.vjp_rules)):
        for fn, rule in rules.items():
            # which rule function it is shows in its file's content, hashed below
            entries.append(f"{mode} {name(fn)} {rule.diff_params} {name(rule.func)}")
            files.add(getattr(getattr(rule.func, "__code__", None), "co_filename", ""))
    entries += [f"nondiff {name(fn)} {v}" for fn, v in table.nondiff.items()]
    for fn, check in table.checks.items():
        entries.append(f"check {name(fn)} {name(check)}")
        files.add(getattr(getattr(check, "__code__", None), "co_filename", ""))
    entries += [f"linear {name(fn)} {v}" for fn, v in table.linear.items()]
    h = hashlib.sha256("\n".join(sorted(entries)).encode())
    for path in sorted(files):
        try:
            with open(path, "rb") as f:
                h.update(hashlib.sha256(f.read()).digest())
        except OSError:
            h.update(f"unreadable {path}".encode())
    return h.hexdigest()


def _positions(rule: Rule) -> set:
    names = list(rule.signature.parameters)
    return {names.index(d) for d in rule.diff_params if d in names}


def _check_fits(fn, primal_sig: inspect.Signature, rule_func, mode: str):
    """A rule's primal signature must accept the calls the primitive accepts."""
    try:
        fn_sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # builtins without a signature: trust the rule
    fn_params = [p for p in fn_sig.parameters.values()
                 if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    required = [p.name for p in fn_params if p.default is p.empty]
    rule_names = list(primal_sig.parameters)
    has_var = any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in fn_sig.parameters.values())
    if not has_var and len(rule_names) > len(fn_params):
        raise RuleError(
            f"{mode} rule {rule_func.__name__} takes parameters {rule_names} but "
            f"{getattr(fn, '__name__', fn)} takes only {[p.name for p in fn_params]}")
    if len(required) > len(rule_names):
        raise RuleError(
            f"{mode} rule {rule_func.__name__} takes parameters {rule_names} but "
            f"{getattr(fn, '__name__', fn)} requires {required}")


class transforms:  # noqa: N801 - a namespace holding the hooks the API installs
    """The compiler's `jvp` and `vjp` (s2sad.api, a layer above, installs them here). The
    run-time half of a rule whose primitive takes the user's function as an argument
    (scipy.integrate.odeint's `func`) differentiates that function with them."""

    jvp: Callable[..., Any] | None = None
    vjp: Callable[..., Any] | None = None


TABLE = RuleTable()
F = TypeVar("F", bound=Callable[..., Any])  # a rule, or a function marked: returned as it is


def _as_tuple(fns):
    return fns if isinstance(fns, tuple) else (fns,)


def defjvp(*fns: Callable[..., Any]) -> Callable[[F], F]:
    """Decorator: register the decorated function as the JVP rule of each of `fns`.

    The rule takes the primitive's parameters (same names, same defaults), then `<p>_dot`
    for each parameter `p` it differentiates, and optionally `ans` (the primal result); it
    returns the result's tangent. See docs/writing_rules.md.

    Returns:
        The decorator; it returns the rule function itself, unchanged.

    Raises:
        RuleError: the rule's parameters do not fit a function of `fns`.

    Examples:
        >>> import numpy as np
        >>> import s2sad
        >>> def softplus(x):
        ...     return np.logaddexp(0.0, x)
        >>> @s2sad.defjvp(softplus)
        ... def softplus_jvp(x, x_dot, ans):
        ...     return x_dot * np.exp(x - ans)
        >>> def f(x):
        ...     return 2.0 * softplus(x)
        >>> out, out_dot = s2sad.jvp(f)(0.0, 1.0)
        >>> float(out_dot)  # 2 sigmoid(0)
        1.0
    """

    def register(func: F) -> F:
        return TABLE.add_rule(fns, func, "jvp")

    return register


def defvjp(*fns: Callable[..., Any],
           wrt: Iterable[str] | None = None) -> Callable[[F], F]:
    """Decorator: register the decorated function as the VJP rule of each of `fns`.

    The rule takes `g` (the result's cotangent), optionally `ans`, then the primitive's
    parameters; it returns one cotangent per differentiable parameter (a tuple when there
    are several). `wrt` names the differentiable parameters; by default those without a
    default value. See docs/writing_rules.md.

    Returns:
        The decorator; it returns the rule function itself, unchanged.

    Raises:
        RuleError: the rule's parameters do not fit a function of `fns`, or it
            differentiates other parameters than the function's JVP rule.

    Examples:
        >>> import numpy as np
        >>> import s2sad
        >>> def softplus2(x):
        ...     return np.logaddexp(0.0, x)
        >>> @s2sad.defvjp(softplus2)
        ... def softplus2_vjp(g, ans, x):
        ...     return g * np.exp(x - ans)
        >>> def f(x):
        ...     return 2.0 * softplus2(x)
        >>> float(s2sad.grad(f)(0.0))  # 2 sigmoid(0)
        1.0
    """

    def register(func: F) -> F:
        return TABLE.add_rule(fns, func, "vjp", wrt=wrt)

    return register


@overload
def def_nondiff(fn: F, /) -> F: ...
@overload
def def_nondiff(*fns: Callable[..., Any]) -> tuple[Callable[..., Any], ...]: ...


def def_nondiff(*fns: Any) -> Any:
    """Mark callables as non-differentiable: their results carry no tangent or cotangent.

    Works as a decorator too: a helper marked so is evaluated, not differentiated.

    Returns:
        The callable when given one (so the decorated name stays the function), else the
        tuple of them.

    Examples:
        >>> import s2sad
        >>> @s2sad.def_nondiff
        ... def count_positive(x):
        ...     return float(x > 0.0)
        >>> def f(x):
        ...     return count_positive(x) * x * x
        >>> s2sad.grad(f)(3.0)  # the count is a constant 1.0: 2 x
        6.0
    """
    for fn in fns:
        TABLE.nondiff[TABLE._key(fn)] = True
    TABLE.version += 1
    return fns[0] if len(fns) == 1 else fns


def defcheck(*fns):
    """Decorator: a compile-time check of the options of a call of each of `fns`.

    The check takes (a subset of) the primitive's parameters by name: an option's value where
    the compiler knows it (a literal or a folded constant), else an `Unknown` describing the
    argument. It returns None to accept the call or a short reason naming the option it
    cannot handle; the compiler then refuses the call with a MissingRuleError. A check may
    also raise an S2SADError of its own words, which gets the call's location.
    """

    def register(func):
        for fn in fns:
            TABLE.checks[TABLE._key(fn)] = func
        TABLE.version += 1
        return func

    return register


def refuse_arguments(*rules, **reasons):
    """Say why `rules` (a primitive's JVP and VJP rule) do not differentiate some of its
    parameters: each keyword names one and gives (why, hint). A call that differentiates such
    an argument is refused (NonDifferentiableError) with that reason and hint instead of the
    generic ones. Returns the rules."""
    for rule in rules:
        rule.refused_arguments = {name: tuple(r) for name, r in reasons.items()}
    return rules


class Unknown:
    """An argument whose value is not known at compile time: its rank, shape and dtype kind
    ('f', 'c', ...), each None where the compiler does not know it either."""

    def __init__(self, ndim=None, dtype=None, shape=None):
        self.ndim = ndim
        self.dtype = dtype
        self.shape = shape

    def __repr__(self):
        return f"Unknown(ndim={self.ndim}, dtype={self.dtype!r}, shape={self.shape})"


@overload
def def_linear(fn: F, /, *, wrt: Iterable[int] | None = None) -> F: ...
@overload
def def_linear(*fns: Callable[..., Any],
               wrt: Iterable[int] | None = None) -> tuple[Callable[..., Any], ...]: ...


def def_linear(*fns: Any, wrt: Iterable[int] | None = None) -> Any:
    """Mark callables as linear in each of the argument positions `wrt` separately
    (position 0 when None): a zero in any listed position gives a zero result, as for
    x * y, x @ y or np.sum(x). Functions linear only jointly (x + y, np.where(c, x, y))
    must not be listed. The compiler then skips the work a zero tangent or cotangent
    would cost.

    Returns:
        The callable when given one, else the tuple of them.

    Examples:
        >>> import numpy as np
        >>> import s2sad
        >>> def flip(x):
        ...     return x[::-1]
        >>> s2sad.def_linear(flip) is flip
        True
        >>> def f(x):
        ...     return np.sum(flip(x) * np.array([1.0, 2.0]))
        >>> s2sad.grad(f)(np.array([5.0, 7.0]))  # the weights, flipped back
        array([2., 1.])
    """
    for fn in fns:
        TABLE.linear[TABLE._key(fn)] = tuple(wrt) if wrt is not None else None
    TABLE.version += 1
    return fns[0] if len(fns) == 1 else fns
