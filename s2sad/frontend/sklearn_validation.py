"""What scikit-learn's validation does to a NumPy array, as code the compiler reads.

`check_array(array, dtype=[np.float64, np.float32])` keeps an array whose dtype is in the
list and converts any other to the first; which one an array is, only the code that runs
knows (a kind holds a dtype's letter, not its width). Inlined in place of that conversion
(s2sad/frontend/library_shims.py).
"""

from __future__ import annotations

import numpy as np


def as_one_of(array, dtypes):
    """The array in its own dtype where that is one of `dtypes`, else in the first."""
    dtype = array.dtype
    if dtype not in dtypes:
        dtype = dtypes[0]
    return np.asarray(array, dtype=dtype)
