"""What goes wrong today with each corpus case, per mode: "rev" (grad or vjp), "fwd" (jvp).

Written by `python bench/realcode_report.py --write-expected`. A refusal category marks the
case xfail(strict=True, raises=S2SADError); a reason starting "BUG:" (a wrong derivative,
or an exception that is not an S2SADError) marks it xfail(strict=True). When the compiler
learns a case its test XPASSes, which fails the suite: delete the entry (or regenerate).
"""

EXPECT: dict[str, dict[str, str]] = {
    'scipy:special.zeta (x)': {
        'rev': 'not differentiable: `scipy.special.zeta` is not differentiable with respect to i',
        'fwd': 'not differentiable: `scipy.special.zeta` is not differentiable with respect to i',
    },
}
