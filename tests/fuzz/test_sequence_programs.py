"""Random programs over sequences of arrays (tests/fuzz/sequence_programs.py): tuple and
list arguments of unequal shapes, lists of arrays built by comprehensions and given to
NumPy functions, lists of arrays of unequal shapes as output. A few in the default run,
many more in the deep run (`-m slow`)."""

from __future__ import annotations

import tempfile

import pytest

from tests.fuzz import harness
from tests.fuzz import sequence_programs as seqs

DEFAULT_SEEDS = tuple(range(6))
DEEP_SEEDS = tuple(range(10_000, 10_400))

_WRITER: list = []


def _load(seed: int):
    if not _WRITER:
        _WRITER.append(harness.ModuleWriter(tempfile.mkdtemp(prefix="s2sad-seqfuzz-"),
                                            tag="seq"))
    src, args = seqs.generate(seed)
    mod = _WRITER[0].load(seqs.HEADER + src, f"s{seed}")
    return src, mod.f, args


def _check(seed: int):
    src, f, args = _load(seed)
    problem = seqs.check(f, args, seed)
    assert not problem, f"seed {seed}: {problem}\n\n{src}\nargs: {args!r}"


@pytest.mark.parametrize("seed", DEFAULT_SEEDS)
def test_sequence_programs(seed):
    _check(seed)


@pytest.mark.slow
@pytest.mark.parametrize("seed", DEEP_SEEDS)
def test_sequence_programs_deep(seed, request):
    if "slow" not in (request.config.getoption("-m") or ""):
        pytest.skip("deep fuzz run: select with -m slow")
    _check(seed)


def test_sequence_generator_is_deterministic():
    assert seqs.generate(3)[0] == seqs.generate(3)[0]
    assert {seqs.generate(s)[0] for s in range(8)} != {seqs.generate(0)[0]}
