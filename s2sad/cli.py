"""The `s2sad` command (also `python -m s2sad`): show generated derivatives, run the demo."""

from __future__ import annotations

import argparse
import importlib
import sys

import numpy as np

from s2sad.errors import S2SADError

USAGE_ERROR = 2
COMPILE_ERROR = 1


def _load(spec: str):
    if ":" not in spec:
        raise ValueError(f"expected MODULE:FUNC, got {spec!r}")
    mod_name, func_name = spec.split(":", 1)
    sys.path.insert(0, ".")
    module = importlib.import_module(mod_name)
    obj = module
    for part in func_name.split("."):
        obj = getattr(obj, part)
    return obj


def cmd_show(args) -> int:
    import s2sad
    from s2sad.ir.printer import format_function
    from s2sad.transform import lowered

    try:
        func = _load(args.target)
    except (ValueError, ImportError, AttributeError) as e:
        print(f"s2sad show: {e}", file=sys.stderr)
        return USAGE_ERROR
    if args.ir:
        print(format_function(lowered(func)))
        return 0
    wrt = tuple(args.wrt.split(",")) if args.wrt else None
    if wrt is not None and len(wrt) == 1:
        wrt = wrt[0]
    transform = {"jvp": s2sad.jvp, "vjp": s2sad.vjp, "grad": s2sad.grad}[args.mode]
    d = transform(func, wrt=wrt) if wrt is not None or args.mode != "grad" else transform(func)
    print(d.source, end="")
    return 0


def cmd_demo(args) -> int:
    import s2sad
    from s2sad.examples import seeds

    f_jvp = s2sad.jvp(seeds.f)
    x = np.array([2.0, 3.0])
    print("# f(x) = [x0 + x1, x0 * x1, sin(x0)] at x = [2, 3]")
    for v in (np.array([1.0, 0.0]), np.array([0.0, 1.0])):
        out, out_dot = f_jvp(x, v)
        print(f"# JVP along {v.tolist()}: {out_dot.tolist()}")
    print(f_jvp.source)
    loss_grad = s2sad.grad(seeds.loss, wrt=0)
    rng = np.random.default_rng(0)
    w, xb, yb = rng.standard_normal((3, 2)), rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    loss_grad(w, xb, yb)
    print("# the gradient of a small model's loss, by reverse mode")
    print(loss_grad.source)
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="s2sad", description=__doc__)
    sub = parser.add_subparsers(dest="command")
    show = sub.add_parser("show", help="print the generated derivative of MODULE:FUNC")
    show.add_argument("target", help="MODULE:FUNC")
    show.add_argument("--mode", choices=["jvp", "vjp", "grad"], default="jvp")
    show.add_argument("--wrt", help="comma-separated parameter names")
    show.add_argument("--ir", action="store_true", help="print the IR instead")
    sub.add_parser("demo", help="differentiate the bundled examples and print the code")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return USAGE_ERROR if e.code else 0
    if args.command is None:
        parser.print_usage(sys.stderr)
        return USAGE_ERROR
    try:
        return {"show": cmd_show, "demo": cmd_demo}[args.command](args)
    except S2SADError as e:
        print(str(e), file=sys.stderr)
        return COMPILE_ERROR


if __name__ == "__main__":
    sys.exit(main())
