"""The `s2sad` command (also `python -m s2sad`): show, build and check derivatives.

    s2sad --version
    s2sad show MODULE:FUNC [--mode jvp|vjp|grad|value_and_grad] [--wrt NAMES] [--ir] [--args EXPR]
    s2sad show path/to/file.py:FUNC ...
    s2sad build [MODULE:FUNC ...] [--check]     # [tool.s2sad] in pyproject.toml
    s2sad cache info|clear
    s2sad demo

Exit status: 0 success, 1 a compile error (or a stale module for `build --check`),
2 a usage error (bad arguments, unknown target, bad configuration).
"""

from __future__ import annotations

import argparse
import importlib
import math
import os
import sys
from pathlib import Path

import numpy as np

from s2sad.errors import S2SADError
from s2sad.transform import BACKENDS, VERSION

USAGE_ERROR = 2
COMPILE_ERROR = 1
MODES = ("jvp", "vjp", "grad", "value_and_grad")
ENTRY_KEYS = {"target", "mode", "wrt", "args", "out", "name", "backend"}


class UsageError(Exception):
    """Bad arguments or configuration: reported on stderr, exit status 2."""


# -- targets -----------------------------------------------------------------------


def _load(spec: str, root: Path | None = None):
    """MODULE:FUNC or path/to/file.py:FUNC -> (module, function object)."""
    if ":" not in spec:
        raise UsageError(f"expected MODULE:FUNC or FILE.py:FUNC, got {spec!r}")
    # a file path may itself hold a colon (C:\\...): the function is after the last one
    mod_name, func_name = spec.rsplit(":", 1) if ".py:" in spec else spec.split(":", 1)
    for path in (str(root) if root else None, os.getcwd()):
        if path and path not in sys.path:
            sys.path.insert(0, path)
    if mod_name.endswith(".py"):
        module = _import_file(Path(root or os.getcwd()) / mod_name)
    else:
        try:
            module = importlib.import_module(mod_name)
        except ImportError as e:
            raise UsageError(f"cannot import module {mod_name!r}: {e}") from None
    obj = module
    for part in func_name.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise UsageError(f"module {mod_name!r} has no function {func_name!r}") from None
    if not callable(obj):
        raise UsageError(f"{spec} is not a function")
    return module, obj


def _import_file(path: Path):
    """Import a .py file as a module by its path (its folder goes on sys.path, so that it
    imports its neighbours as it would when run). It is registered in sys.modules under its
    file name, or under a private name when that name is taken by another module."""
    import importlib.util

    path = path.resolve()
    if not path.is_file():
        raise UsageError(f"no such file: {path}")
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    name = path.stem
    taken = sys.modules.get(name)
    if taken is not None:
        if getattr(taken, "__file__", None) and Path(taken.__file__).resolve() == path:
            return taken
        name = f"_s2sad_file_{abs(hash(str(path))):x}_{path.stem}"
        if name in sys.modules:
            return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as e:
        del sys.modules[name]
        raise UsageError(f"cannot import {path}: {type(e).__name__}: {e}") from None
    return module


def _parse_wrt(text):
    """`x,y` or `0,1` (or a list from pyproject) -> what s2sad.grad & co take as wrt."""
    if text is None:
        return None
    items = text if isinstance(text, list) else [t.strip() for t in str(text).split(",")]
    items = [int(t) if isinstance(t, str) and t.lstrip("-").isdigit() else t for t in items]
    if any(t == "" for t in items):
        raise UsageError(f"bad --wrt {text!r}: expected comma-separated parameter names")
    return items[0] if len(items) == 1 else tuple(items)


def _eval_args(text: str | None, module):
    """Example arguments from a Python expression (`np.ones(3), 2.0`), or None."""
    if text is None:
        return None
    scope = dict(vars(module))
    scope.update({"np": np, "numpy": np, "math": math})
    try:
        value = eval(text, scope)  # the user's own expression, from their command line
    except Exception as e:
        raise UsageError(f"cannot evaluate --args {text!r}: {type(e).__name__}: {e}") from None
    return value if isinstance(value, tuple) else (value,)


# -- show ----------------------------------------------------------------------------


def cmd_show(args) -> int:
    from s2sad.api import Derivative
    from s2sad.ir.kinds import UNKNOWN, kind_of_value
    from s2sad.ir.printer import format_function
    from s2sad.transform import derivative_ir, generate, lowered, with_explain

    module, func = _load(args.target)
    if isinstance(func, Derivative):  # a decorated function: show derivatives of its source
        func = func.func
    if args.ir and args.stage == "lowered":
        _print(format_function(lowered(func)), code=False)
        return 0
    wrt = _parse_wrt(args.wrt)
    d = Derivative(func, args.mode, wrt if wrt is not None else _default_wrt(args.mode))
    mode = with_explain(args.mode, args.explain)
    d._resolve()
    example = _eval_args(args.args, module)
    if example is None:
        kinds = [UNKNOWN] * d._n_params
    else:
        if len(example) != d._n_params:
            raise UsageError(f"--args gives {len(example)} values but {func.__name__} takes "
                             f"{d._n_params} positional arguments")
        kinds = [kind_of_value(a, keep_value=False) for a in example]
    if args.ir:
        _print(format_function(derivative_ir(func, mode, d._wrt, kinds, {})), code=False)
        return 0
    compiled = generate(func, mode, d._wrt, d._wrt_tuple, kinds, {})
    text = compiled.source
    if example is None and d._n_params:
        text = ("# s2sad show: the generic code; give example arguments to see it specialised "
                "on their kinds,\n# as a call compiles it: --args \"np.ones(3), 2.0\"\n" + text)
    _print(text, code=True, color=args.color)
    return 0


def _default_wrt(mode: str):
    return 0 if mode in ("grad", "value_and_grad") else None


def _print(text: str, code: bool, color: str = "auto"):
    """Print `text`; code is highlighted (with Pygments, when installed) for `always`, and
    for `auto` when the output is a terminal."""
    if code and (color == "always" or (color == "auto" and sys.stdout.isatty())):
        try:
            from pygments import highlight
            from pygments.formatters import TerminalFormatter
            from pygments.lexers import PythonLexer
        except ImportError:
            pass
        else:
            text = highlight(text, PythonLexer(), TerminalFormatter())
    sys.stdout.write(text if text.endswith("\n") else text + "\n")


# -- build ---------------------------------------------------------------------------


def _find_pyproject(start: Path) -> Path | None:
    for d in (start, *start.parents):
        if (d / "pyproject.toml").is_file():
            return d / "pyproject.toml"
    return None


def _read_config(path: Path) -> list:
    try:
        import tomllib
    except ImportError:  # Python 3.10
        try:
            import tomli as tomllib
        except ImportError:
            raise UsageError("reading pyproject.toml needs Python 3.11 or the tomli "
                             "package") from None
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot read {path}: {e}") from None
    table = data.get("tool", {}).get("s2sad", {})
    entries = table.get("derivatives", [])
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise UsageError(f"{path}: [tool.s2sad] derivatives must be a list of tables")
    for i, e in enumerate(entries):
        unknown = set(e) - ENTRY_KEYS
        if unknown:
            raise UsageError(f"{path}: derivatives[{i}] has unknown keys {sorted(unknown)}; "
                             f"known keys: {sorted(ENTRY_KEYS)}")
        if "target" not in e:
            raise UsageError(f"{path}: derivatives[{i}] needs a target = \"module:function\"")
        if e.get("mode", "grad") not in MODES:
            raise UsageError(f"{path}: derivatives[{i}]: mode must be one of {list(MODES)}")
        if e.get("backend", "numpy") not in BACKENDS:
            raise UsageError(f"{path}: derivatives[{i}]: backend must be one of "
                             f"{list(BACKENDS)}")
    return entries


def _specs(args) -> dict:
    """{output path: [DerivativeSpec, ...]} from the command line or pyproject.toml."""
    from s2sad.api import Derivative
    from s2sad.store.aot import DerivativeSpec, default_out

    if args.targets:
        root = Path.cwd()
        entries = [{"target": t, "mode": args.mode, "wrt": args.wrt, "args": args.args,
                    "out": args.out} for t in args.targets]
    else:
        config = Path(args.config) if args.config else _find_pyproject(Path.cwd())
        if config is None or not config.is_file():
            raise UsageError("no pyproject.toml found (and no MODULE:FUNC given)")
        root = config.parent
        entries = _read_config(config)
        if not entries:
            raise UsageError(f"{config}: no derivatives listed under [tool.s2sad]")
    groups: dict = {}
    for e in entries:
        module, func = _load(e["target"], root)
        mode, wrt = e.get("mode"), _parse_wrt(e.get("wrt"))
        backend = e.get("backend")
        if isinstance(func, Derivative):  # a decorated function: build what it computes
            mode, wrt = mode or func.mode, wrt if wrt is not None else func._wrt_spec
            backend = backend or func.backend
            func = func.func
        spec = DerivativeSpec(e["target"], func, mode or "grad", wrt,
                              _eval_args(e.get("args"), module), e.get("name"), e.get("out"),
                              args_text=e.get("args"), backend=backend or "numpy")
        out = Path(e["out"]) if e.get("out") else default_out(module.__name__)
        out = out if out.is_absolute() else root / out
        groups.setdefault(out.resolve(), []).append(spec)
    return groups


def cmd_build(args) -> int:
    from s2sad.store.aot import write_module

    stale = []
    for out, specs in _specs(args).items():
        text = write_module(specs)
        try:
            old = out.read_text()
        except OSError:
            old = None
        shown = _relative(out)
        if args.check:
            if old != text:
                why = "missing" if old is None else "stale"
                stale.append(out)
                print(f"{why}: {shown}", file=sys.stderr)
            continue
        if old == text:
            print(f"up to date: {shown}")
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.tmp")
        tmp.write_text(text)
        os.replace(tmp, out)
        print(f"wrote {shown}")
    if args.check:
        if stale:
            print(f"s2sad build --check: {len(stale)} generated module(s) out of date; "
                  "run `s2sad build`", file=sys.stderr)
            return COMPILE_ERROR
        print("generated modules are up to date")
    return 0


def _relative(p: Path) -> str:
    try:
        return str(p.relative_to(Path.cwd()))
    except ValueError:
        return str(p)


# -- cache, demo ------------------------------------------------------------------------


def cmd_cache(args) -> int:
    from s2sad.store import cache

    if args.action == "clear":
        try:
            n = cache.clear()
        except (cache.UnsafeCacheError, OSError) as e:
            print(f"s2sad cache clear: not clearing {cache.configured_dir()}: {e}",
                  file=sys.stderr)
            return COMPILE_ERROR
        print(f"removed {n} entries from {cache.configured_dir()} (temporary files of "
              f"writers still at work, younger than {cache.TMP_MAX_AGE:.0f} s, are kept)")
        return 0
    d = cache.info()
    state = "off" if not d["enabled"] else ("refused" if d["problem"] else "on")
    print(f"path:    {d['path']}")
    print(f"status:  {state}" + (f" ({d['problem']})" if d["problem"] else ""))
    print(f"entries: {d['entries']} ({d['bytes']} bytes)")
    return 0


def cmd_demo(args) -> int:
    """The two worked examples the project was designed from, with their numbers, their
    formulas and the generated code of both modes; then a small model's gradient."""
    from s2sad.api import grad, jvp, vjp
    from s2sad.examples import seeds

    def say(*lines):
        print("\n".join(f"# {ln}" if ln else "#" for ln in lines))

    def numbers(v) -> str:
        return "[" + ", ".join(f"{float(a) + 0.0:.6g}" for a in np.ravel(v)) + "]"  # no -0

    say("Example 1: f(x) = [x0 + x1, x0 * x1, sin(x0)] at x = [2, 3]",
        "",
        "Its Jacobian is J = [[1, 1], [x1, x0], [cos x0, 0]]. Forward mode pushes one",
        "tangent v through f and gives J v; along e0 = [1, 0] that is J's first column,",
        "along e1 = [0, 1] its second: one JVP, one column.")
    f_jvp = jvp(seeds.f)
    x = np.array([2.0, 3.0])
    for name, v, formula in (("e0", [1.0, 0.0], "[1, x1, cos x0] = [1, 3, cos 2]"),
                             ("e1", [0.0, 1.0], "[1, x0, 0] = [1, 2, 0]")):
        _, out_dot = f_jvp(x, np.array(v))
        say(f"JVP along {name}: {formula} = {numbers(out_dot)}")
    print(f_jvp.source)

    say("Example 2: g(x1, x2) = (x1**2 + x2, sin(x1 * x2)) at (x1, x2) = (2, 3)",
        "",
        "J = [[2 x1, 1], [x2 cos(x1 x2), x1 cos(x1 x2)]] = [[4, 1], [3 cos 6, 2 cos 6]].",
        "Forward mode (JVP) gives J v, a combination of J's columns; reverse mode (VJP)",
        "pulls a cotangent u back and gives u^T J, a combination of its rows: one VJP per",
        "output seed, whatever the number of inputs -- why a gradient costs one reverse",
        "sweep.")
    c6 = math.cos(6.0)
    g_jvp = jvp(seeds.g)
    _, out_dot = g_jvp(2.0, 3.0, 1.0, 0.0)
    say(f"JVP along v = (1, 0): (2 x1, x2 cos(x1 x2)) = (4, 3 cos 6) = "
        f"{numbers(out_dot)}   (3 cos 6 = {3 * c6:.6g})")
    print(g_jvp.source)
    say("The same JVP step by step (explain=True): dual-number arithmetic, one operation",
        "per line, each tangent named after its value, under the rule it applies")
    g_jvp_steps = jvp(seeds.g, explain=True)
    g_jvp_steps(2.0, 3.0, 1.0, 0.0)
    print(g_jvp_steps.source)
    g_vjp = vjp(seeds.g)
    _, pullback = g_vjp(2.0, 3.0)
    cot = pullback((1.0, 1.0))
    say(f"VJP with u = (1, 1): (2 x1 + x2 cos(x1 x2), 1 + x1 cos(x1 x2)) = "
        f"(4 + 3 cos 6, 1 + 2 cos 6) = {numbers(cot)}",
        f"  (4 + 3 cos 6 = {4 + 3 * c6:.6g}, 1 + 2 cos 6 = {1 + 2 * c6:.6g})")
    print(g_vjp.source)
    say("The same VJP step by step (explain=True): every cotangent named, each reverse",
        "step under the operation it reverses and the rule it applies")
    g_vjp_steps = vjp(seeds.g, explain=True)
    g_vjp_steps(2.0, 3.0)[1]((1.0, 1.0))
    print(g_vjp_steps.source)

    loss_grad = grad(seeds.loss, wrt=0)
    rng = np.random.default_rng(0)
    w, xb, yb = rng.standard_normal((3, 2)), rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    loss_grad(w, xb, yb)
    say("The gradient of a small model's loss, by reverse mode")
    print(loss_grad.source)
    return 0


# -- entry ---------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="s2sad", description="Source-to-source automatic differentiation for Python + "
        "NumPy: show, build and check generated derivatives.")
    parser.add_argument("--version", action="version", version=f"s2sad {VERSION}")
    sub = parser.add_subparsers(dest="command")
    show = sub.add_parser("show", help="print the generated derivative of MODULE:FUNC")
    show.add_argument("target", help="MODULE:FUNC or path/to/file.py:FUNC")
    show.add_argument("--mode", choices=MODES, default="jvp")
    show.add_argument("--wrt", help="comma-separated parameter names (or indices)")
    show.add_argument("--ir", action="store_true", help="print the IR instead of Python")
    show.add_argument("--explain", action="store_true",
                      help="the step-by-step derivative: one primitive per line, each step "
                           "with the rule it applies")
    show.add_argument("--color", choices=("auto", "always", "never"), default="auto",
                      help="highlight the code (needs Pygments: pip install s2sad[show]); "
                           "auto: when printing to a terminal")
    show.add_argument("--stage", choices=("derivative", "lowered"), default="derivative",
                      help="with --ir: the derivative's IR (default) or the lowered function")
    show.add_argument("--args", help="example arguments to specialise on, as a Python "
                                     "expression, e.g. \"np.ones(3), 2.0\"")
    build = sub.add_parser("build", help="write ahead-of-time derivative modules")
    build.add_argument("targets", nargs="*", metavar="MODULE:FUNC",
                       help="derivatives to build (default: [tool.s2sad] in pyproject.toml)")
    build.add_argument("--mode", choices=MODES,
                       help="default: grad, or the mode of a decorated function")
    build.add_argument("--wrt", help="comma-separated parameter names (or indices)")
    build.add_argument("--args", help="example arguments to specialise on")
    build.add_argument("--out", help="output .py file (default: MODULE_s2sad.py beside it)")
    build.add_argument("--config", help="the pyproject.toml to read (default: search upward)")
    build.add_argument("--check", action="store_true",
                       help="write nothing; exit 1 if a generated module is missing or stale")
    cache = sub.add_parser("cache", help="inspect or clear the disk cache")
    cache.add_argument("action", choices=("info", "clear"))
    sub.add_parser("demo", help="differentiate the bundled examples and print the code")
    return parser


def main(argv=None) -> int:
    parser = _parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return USAGE_ERROR if e.code else 0
    if args.command is None:
        parser.print_usage(sys.stderr)
        return USAGE_ERROR
    command = {"show": cmd_show, "build": cmd_build, "cache": cmd_cache, "demo": cmd_demo}
    try:
        return command[args.command](args)
    except UsageError as e:
        print(f"s2sad {args.command}: {e}", file=sys.stderr)
        return USAGE_ERROR
    except S2SADError as e:
        print(str(e), file=sys.stderr)
        return COMPILE_ERROR


if __name__ == "__main__":
    sys.exit(main())
