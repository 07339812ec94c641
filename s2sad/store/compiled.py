"""Where a compiled derivative comes from: a fresh ahead-of-time module, the disk cache,
or the compiler (whose result is then stored in the disk cache)."""

from __future__ import annotations

from s2sad.store import cache
from s2sad.store.aot import load_ahead_of_time
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


def stored_for_every_size(func, mode: str, wrt: tuple, wrt_tuple: bool, kinds: list,
                          kw_kinds: dict) -> Compiled | None:
    """A derivative for every size of the pattern of `kinds` (symbolic sizes) from an
    ahead-of-time module or the disk cache, or None."""
    hit = load_ahead_of_time(func, mode, wrt, wrt_tuple, kinds, kw_kinds)
    if hit is None and split_backend(mode)[1] == "numpy":  # (Numba: cache.jit_dir)
        hit = cache.slot(func, mode, wrt, wrt_tuple, kinds, kw_kinds).hit
    if hit is not None:
        hit.size_guards = ()  # (stored only once two sizes agreed, and with no guard)
    return hit


def store(func, mode: str, wrt: tuple, wrt_tuple: bool, kinds: list, kw_kinds: dict,
          done: Compiled, exact: bool = False) -> None:
    """Keep `done` in the disk cache under `kinds`: the sizes of one call (`exact`), or
    symbols, where a specialisation for every size under guards is kept in memory only
    (the disk keeps code, not guards)."""
    if split_backend(mode)[1] == "numpy" and (exact or not done.size_guards):
        slot = cache.slot(func, mode, wrt, wrt_tuple, kinds, kw_kinds)
        if slot.hit is None:
            slot.fill(done.source, done.namespace, done.name, done.out_structure)


def stored(func, mode: str, wrt: tuple, wrt_tuple: bool, kinds: list,
           kw_kinds: dict) -> Compiled | None:
    """A derivative for exactly these kinds from the disk cache, or None."""
    if split_backend(mode)[1] != "numpy":
        return None
    return cache.slot(func, mode, wrt, wrt_tuple, kinds, kw_kinds).hit
