"""logsumexp's gradient and JVP at two sizes, and the split form (`vjp`, then the pullback).

    python bench/bench_split.py [--quick] [--repeat N]

Rows (issue 16's table), each timed interleaved with its hand-written counterpart in one
process:

* logsumexp grad, n = 10^3 and 10^6: `s2sad.grad` / the hand-written softmax (targets
  1.3 / 1.2);
* logsumexp JVP, n = 10^3 and 10^6: `s2sad.jvp` / a hand-written JVP (target 1.3);
* split form: `out, pullback = s2sad.vjp(f)(*args); pullback(1.0)` / the hand-written
  gradient, for Rosenbrock 10^3, the x[i] loop (h) and the MLP (e) (target 1.3).  The split
  form also computes the value, which the hand-written gradient does not, so two more
  columns divide by the primal's time plus the hand-written gradient's, and by the same
  split form written by hand (`workloads.*_vjp`: the value, and a pullback closure over what
  the forward pass computed; checked by check_handwritten.py).
"""

from __future__ import annotations

import numpy as np

import common
import harness
import workloads


def logsumexp_jvp_hand(x, x_dot):
    m = np.max(x)
    e = np.exp(x - m)
    s = np.sum(e)
    return m + np.log(s), np.sum(x_dot * e) / s


def hand_split_form(w):
    def gradient(*args):
        _, pullback = w.hand_vjp(*args)
        return pullback(1.0)

    return gradient


def split_form(s2sad, w):
    vjp = s2sad.vjp(w.primal, wrt=w.wrt)

    def gradient(*args):
        _, pullback = vjp(*args)
        return pullback(1.0)

    return gradient


def rows_for(s2sad, opts, rng):
    x3 = rng.standard_normal(10**3)
    x6 = rng.standard_normal(10**6)
    lse = workloads.logsumexp
    cases = []  # (label, target, hand, hand_args, make_gen, gen_args, primal or None)
    for label, x, target in (("logsumexp grad, 1e3", x3, 1.3),
                             ("logsumexp grad, 1e6", x6, 1.2)):
        cases.append((label, target, workloads.logsumexp_grad, (x,),
                      lambda: s2sad.grad(lse), (x,), None))
    for label, x in (("logsumexp JVP, 1e3", x3), ("logsumexp JVP, 1e6", x6)):
        xd = rng.standard_normal(x.shape)
        cases.append((label, 1.3, logsumexp_jvp_hand, (x, xd), lambda: s2sad.jvp(lse),
                      (x, xd), None))
    primal_of = {}  # the split-form rows' workloads
    rosen = next(w for w in workloads.GRAD_WORKLOADS if w.key == "f")
    xr = rng.uniform(-1.0, 1.0, 10**3)
    for w, args, label in ((rosen, (xr,), "split form, Rosenbrock 1e3"),
                           (next(w for w in workloads.GRAD_WORKLOADS if w.key == "h"), None,
                            "split form, x[i] loop (h)"),
                           (next(w for w in workloads.GRAD_WORKLOADS if w.key == "e"), None,
                            "split form, MLP (e)")):
        args = args if args is not None else w.make_args(rng)
        primal_of[label] = w
        cases.append((label, 1.3, w.hand, args, lambda w=w: split_form(s2sad, w), args,
                      w.primal))
    rows = []
    for label, target, hand, hand_args, make_gen, gen_args, primal in cases:
        want = hand(*hand_args)
        try:
            gen = make_gen()
            got = gen(*gen_args)
            check = common.check_cell(got if not isinstance(want, np.ndarray) or
                                      not isinstance(got, tuple) else got[0], want)
            timed = [(hand, hand_args), (gen, gen_args)]
            if primal is not None:
                timed += [(primal, hand_args), (hand_split_form(primal_of[label]), hand_args)]
            t = harness.measure_many(timed, repeat=opts.repeat, target=opts.target)
            both = harness.fmt_ratio(t[1].best, t[0].best + t[2].best) if primal else ""
            split = harness.fmt_ratio(t[1].best, t[3].best, target) if primal else ""
            rows.append([label, harness.fmt_time(t[0].best), harness.fmt_time(t[1].best),
                         harness.fmt_ratio(t[1].best, t[0].best, target), both, split, check])
        except Exception as exc:
            rows.append([label, "", common.na(exc), "n/a", "", "", ""])
    return rows


def main():
    opts = common.parse_args(__doc__.splitlines()[0])
    s2sad, import_error = common.load_s2sad()
    if s2sad is None:
        print(common.na(import_error))
        return
    rows = rows_for(s2sad, opts, np.random.default_rng(0))
    print(f"logsumexp and the split form; min of {opts.repeat} timed batches, interleaved")
    print()
    harness.table(rows, ["row", "hand", "s2sad", "gen/hand (target)", "gen/(primal+hand)",
                         "gen/hand split form", "check"])


if __name__ == "__main__":
    main()
