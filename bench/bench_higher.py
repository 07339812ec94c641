"""Jacobians and Hessian-vector products: vector mode against repeated JVPs, HVP against
a hand-written one. Prints ratios; run `python bench/bench_higher.py`.

Targets (issue 5): jacfwd of an R^100 -> R^100 function in vector mode at least 10x
faster than 100 separate JVP calls; hvp of Rosenbrock on 1e5 elements at most 1.5x a
hand-written Hessian-vector product.
"""

import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import higher_workloads as W  # noqa: E402
from harness import fmt_ratio, fmt_time, measure_many, table  # noqa: E402

import s2sad  # noqa: E402


def jacobian_by_columns(f_jvp, x, Wm, eye):
    return np.stack([f_jvp(x, Wm, eye[i])[1] for i in range(eye.shape[0])], axis=1)


def main():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(W.N_JAC)
    Wm = rng.standard_normal((W.N_JAC, W.N_JAC)) / 10
    eye = np.eye(W.N_JAC)
    jac = s2sad.jacfwd(W.layer, wrt=0)
    f_jvp = s2sad.jvp(W.layer, wrt=0)
    J1, J2 = jac(x, Wm), jacobian_by_columns(f_jvp, x, Wm, eye)
    assert np.allclose(J1, J2, rtol=1e-12, atol=1e-12)
    t_vec, t_cols, t_primal = measure_many([(jac, (x, Wm)),
                                            (jacobian_by_columns, (f_jvp, x, Wm, eye)),
                                            (W.layer, (x, Wm))])
    table([["jacfwd, vector mode (1 call)", fmt_time(t_vec.best), ""],
           ["100 JVP calls", fmt_time(t_cols.best),
            fmt_ratio(t_cols.best, t_vec.best) + " slower (target >= 10x)"],
           ["primal", fmt_time(t_primal.best), ""]],
          headers=["Jacobian of R^100 -> R^100", "time", "ratio"])
    print()
    x = rng.uniform(-1.5, 1.5, W.N_HVP)
    v = rng.standard_normal(W.N_HVP)
    hvp = s2sad.hvp(W.rosenbrock)
    assert np.allclose(hvp(x, v), W.rosenbrock_hvp_hand(x, v), rtol=1e-10, atol=1e-8)
    t_gen, t_hand, t_primal = measure_many([(hvp, (x, v)), (W.rosenbrock_hvp_hand, (x, v)),
                                            (W.rosenbrock, (x,))])
    table([["s2sad.hvp (forward over reverse)", fmt_time(t_gen.best),
            fmt_ratio(t_gen.best, t_hand.best) + " of hand (target <= 1.5x)"],
           ["hand-written HVP", fmt_time(t_hand.best), ""],
           ["primal", fmt_time(t_primal.best), ""]],
          headers=["HVP of Rosenbrock, 1e5", "time", "ratio"])


if __name__ == "__main__":
    main()
