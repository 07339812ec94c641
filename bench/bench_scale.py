"""Compile time and peak memory against function length: is compilation linear?

    python bench/bench_scale.py [--profile N]

Straight-line functions of N lines over arrays of 4 (sin/tanh/exp/products), compiled in
reverse mode (grad) for N = 500, 1,000 and 2,000, and the 50-line function of
bench_compile.py cold. Targets (issue 16): 2,000 lines within 4.5x the 500-line time,
under 2 s and 400 MB peak. Prints the figures and ratios; asserts nothing.
"""

from __future__ import annotations

import gc
import importlib.util
import os
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def straight_line_module(n: int) -> str:
    """`def model(x, y):` of n lines, each a new array of 4 from two earlier ones."""
    ops = ["np.sin({a}) * {b}", "np.tanh({a} + {b})", "np.exp(-{a} * {a}) + {b}",
           "{a} * {b} + 0.5 * {a}"]
    lines = ["import numpy as np", "", "", "def model(x, y):", "    v0 = x * y"]
    for i in range(1, n - 1):
        a, b = f"v{i - 1}", f"v{max(i - 3, 0)}" if i % 2 else "x"
        lines.append(f"    v{i} = " + ops[i % len(ops)].format(a=a, b=b))
    lines.append(f"    return np.sum(v{n - 2} * v{n - 2})")
    return "\n".join(lines) + "\n"


def _load(source: str, name: str, work: Path):
    path = work / f"{name}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def compile_once(source: str, name: str, work: Path, memory: bool, args=None):
    """(seconds, peak bytes or None) of compiling grad(model) for the source."""
    import numpy as np

    import s2sad

    mod = _load(source, name, work)
    if args is None:
        args = (np.linspace(0.1, 0.4, 4), np.linspace(0.5, 0.2, 4))
    d = s2sad.grad(mod.model, wrt=tuple(range(len(args))))
    gc.collect()
    if memory:
        tracemalloc.start()
    t = time.perf_counter()
    d(*args)
    elapsed = time.perf_counter() - t
    peak = None
    if memory:
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return elapsed, peak


def main():
    os.environ["S2SAD_CACHE"] = "0"
    import numpy as np
    from bench_compile import ARGS, _reference_loop, fifty_line_module

    work = Path(tempfile.mkdtemp(prefix="s2sad-scale-"))
    sys.path.insert(0, str(work))
    if "--profile" in sys.argv:
        import cProfile
        import pstats

        n = int(sys.argv[sys.argv.index("--profile") + 1])
        compile_once(straight_line_module(50), "warmup", work, False)
        source = straight_line_module(n)
        prof = cProfile.Profile()
        prof.enable()
        compile_once(source, f"prof_{n}", work, False)
        prof.disable()
        pstats.Stats(prof).sort_stats("cumulative").print_stats(40)
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
        return
    # warm up: the rules used are lowered once per process
    compile_once(straight_line_module(50), "warmup", work, False)
    args = eval(ARGS, {"np": np})
    cold = [compile_once(fifty_line_module(), f"fifty_{i}", work, False, args)[0]
            for i in range(5)]
    rows = {}
    for n in (500, 1000, 2000):
        source = straight_line_module(n)
        t, _ = compile_once(source, f"lines_{n}_t", work, False)  # time without tracing
        t2, _ = compile_once(source, f"lines_{n}_t2", work, False)
        _, peak = compile_once(source, f"lines_{n}_m", work, True)
        rows[n] = (min(t, t2), peak)
    ms = 1e3
    print(f"cold compile, 50-line function (grad, in-process): "
          f"{sorted(cold)[2] * ms:7.1f} ms (min {min(cold) * ms:.1f}; target 30 ms)")
    for n, (t, peak) in rows.items():
        print(f"straight-line function of {n:5d} lines (grad): {t:7.2f} s  "
              f"peak {peak / 2**20:7.1f} MB  ({t / rows[500][0]:.2f}x the 500-line time)")
    print(f"2,000 lines / 500 lines: {rows[2000][0] / rows[500][0]:.2f}x "
          "(target <= 4.5x, under 2 s and 400 MB)")
    print(f"a fixed Python loop (machine speed, for reference): {_reference_loop() * ms:5.1f} ms")


if __name__ == "__main__":
    main()
