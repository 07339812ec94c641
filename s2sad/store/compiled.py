"""Where a compiled derivative comes from: a fresh ahead-of-time module, the disk cache,
or the compiler (whose result is then stored in the disk cache)."""

from __future__ import annotations

from s2sad.store import cache
from s2sad.store.aot import load_ahead_of_time
from s2sad.store.sizes import generate_for_every_size
from s2sad.transform import Compiled, generate, split_backend


def compiled(func, mode: str, wrt: tuple, wrt_tuple: bool, arg_kinds: list,
             kw_kinds: dict, ahead_of_time: bool = True) -> Compiled:
    """The derivative of `func` for these argument kinds, from the fastest place that has
    a current one."""
    if split_backend(mode)[1] != "numpy":  # (Numba keeps its own cache: cache.jit_dir)
        hit = load_ahead_of_time(func, mode, wrt, wrt_tuple, arg_kinds, kw_kinds) \
            if ahead_of_time else None
        return hit or generate(func, mode, wrt, wrt_tuple, arg_kinds, kw_kinds,
                               cache.jit_dir())
    if ahead_of_time:
        hit = load_ahead_of_time(func, mode, wrt, wrt_tuple, arg_kinds, kw_kinds)
        if hit is not None:
            return hit
    slot = cache.slot(func, mode, wrt, wrt_tuple, arg_kinds, kw_kinds)
    if slot.hit is not None:
        return slot.hit
    result = generate(func, mode, wrt, wrt_tuple, arg_kinds, kw_kinds)
    slot.fill(result.source, result.namespace, result.name, result.out_structure)
    return result


def compiled_for_every_size(func, mode: str, wrt: tuple, wrt_tuple: bool, kinds_a: list,
                            kinds_b: list, kw_kinds: dict) -> Compiled | None:
    """The derivative for argument kinds whose sizes are symbols (ir/dims.py), or None
    where no such code serves every size: the compile read a size in a way the key does not
    decide, failed, or printed another source when the representatives were others
    (`kinds_b`: the same symbols, other representative sizes; a size that escaped its
    symbol shows there as another number)."""
    hit = load_ahead_of_time(func, mode, wrt, wrt_tuple, kinds_a, kw_kinds)
    if hit is not None:  # (an ahead-of-time module for every size)
        hit.size_guards = ()
        return hit
    if split_backend(mode)[1] != "numpy":  # (Numba keeps its own cache: cache.jit_dir)
        return generate_for_every_size(func, mode, wrt, wrt_tuple, kinds_a, kinds_b,
                                       kw_kinds)
    slot = cache.slot(func, mode, wrt, wrt_tuple, kinds_a, kw_kinds)
    if slot.hit is not None:
        slot.hit.size_guards = ()
        return slot.hit  # (stored only once both compiles agreed, and with no guard)
    first = generate_for_every_size(func, mode, wrt, wrt_tuple, kinds_a, kinds_b, kw_kinds)
    if first is not None and not first.size_guards:
        # (a specialisation under guards is kept in memory only: the disk keeps code only)
        slot.fill(first.source, first.namespace, first.name, first.out_structure)
    return first
