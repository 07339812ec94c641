"""passes/functional.py and its runtime helpers: a scatter at a basic index written as
whole-array operations (np.pad, np.where), against NumPy's own in-place writes."""

import numpy as np
import pytest

from s2sad.ir.prims import index_add_functional, index_update_functional

INDICES = [0, -1, slice(1, 5), slice(None, None, 2), slice(None, None, -1), slice(5, 0, -2),
           (slice(None), 2), (Ellipsis, 1), (None, 3, slice(1, 4, 2)),
           (2, None, Ellipsis, slice(3, None, -3)), slice(3, 3), (1, 2, 3),
           (slice(1, 6, 3), slice(None), None), (slice(-2, None), -1, slice(None, 1))]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_functional_scatters_equal_numpy_writes(index):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(7, 5, 4))
    g = rng.normal(size=np.shape(a[index]))
    added = a.copy()
    added[index] += g
    np.testing.assert_array_equal(index_add_functional(a, index, g), added)
    updated = a.copy()
    updated[index] = g
    np.testing.assert_array_equal(index_update_functional(a, index, g), updated)
    updated[index] = 0.5  # a scalar broadcast over the selection
    np.testing.assert_array_equal(index_update_functional(a, index, 0.5), updated)
    assert not np.shares_memory(index_add_functional(a, index, g), a)


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_functional_scatters_run_lazily_on_dask(index):
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(1)
    a = rng.normal(size=(7, 5, 4))
    g = rng.normal(size=np.shape(a[index]))
    lazy_a = da.from_array(a, chunks=3)
    lazy_g = da.from_array(g) if np.ndim(g) else g
    added = a.copy()
    added[index] += g
    result = index_add_functional(lazy_a, index, lazy_g)
    assert isinstance(result, da.Array)
    np.testing.assert_array_equal(result.compute(), added)
    updated = a.copy()
    updated[index] = g
    np.testing.assert_array_equal(index_update_functional(lazy_a, index, lazy_g).compute(),
                                  updated)
