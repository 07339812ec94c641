"""Sinking (codegen/sinking.py) moves each single-use temporary to just before the
statement that reads it, with the readers found once per block and the order kept as a
linked list: it used to scan from each temporary to its reader, and a reverse sweep reads
hundreds of temporaries thousands of statements below their definitions (quadratic). The
order it gives is the one of that scan, written here as the reference."""

from __future__ import annotations

import pytest

from s2sad.codegen.sinking import _free_in, _rebuild, sink_temporaries
from s2sad.codegen.syntax import NO_INLINE
from s2sad.ir.kinds import kind_of_value
from s2sad.ir.nodes import Block, Call, atoms_of, count_uses, free_vars
from s2sad.transform import derivative_ir, resolve_wrt

try:  # works both with and without tests/__init__.py
    from tests import oracle
    from tests.corpus import programs
except ImportError:  # pragma: no cover
    import oracle
    from corpus import programs


def _scanned(fn) -> Block:
    """The reference: per temporary (bottom up), a scan down to its reader."""
    counts = count_uses(fn.body)

    def blk(b: Block) -> Block:
        stmts = [_rebuild(s, blk) for s in b.stmts]
        i = len(stmts) - 1
        while i >= 0:
            s = stmts[i]
            if isinstance(s, Call) and s.target.name.startswith("_") and \
                    s.fn not in NO_INLINE and counts.get(s.target) == 1:
                j = next((k for k in range(i + 1, len(stmts))
                          if s.target in atoms_of(stmts[k]) or (
                              type(stmts[k]) is not Call
                              and s.target in _free_in(stmts[k], free_vars))), None)
                if j is not None and j > i + 1 and s.target in atoms_of(stmts[j]) and \
                        not any(isinstance(x, Call) and x.fn in NO_INLINE
                                for x in stmts[i + 1:j]):
                    stmts.insert(j - 1, stmts.pop(i))
            i -= 1
        return Block(tuple(stmts), b.results)

    return blk(fn.body)


@pytest.mark.parametrize("case", programs.CASES, ids=programs.CASE_IDS)
def test_sinking_orders_as_the_scan_does(case):
    args = case.args(oracle.rng_for(case.name, "probe"))
    wrt, wrt_tuple = resolve_wrt(case.fn, case.wrt)
    kinds = [kind_of_value(a, keep_value=False) for a in args]
    for mode in ("jvp", "vjp"):
        fn = derivative_ir(case.fn, mode, wrt, kinds, {}, wrt_tuple=wrt_tuple)
        assert sink_temporaries(fn).body == _scanned(fn)
