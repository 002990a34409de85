"""Strata: SSD-resident vector search, from Python.

    import numpy as np, strata

    with strata.Collection("data/coll", dim=128, metric="l2") as col:
        ids = col.add(np.random.rand(5000, 128).astype(np.float32))
        ids, dists = col.search(np.random.rand(10, 128), k=10)   # (10, 10) each

    strata.build_index(base, "data/idx", type="graph", R=64, L=125)
    with strata.Index.open("data/idx") as index:
        ids, dists = index.search(queries, k=10, L=50, threads=2)

Collection is a crash-safe store of vectors under 64-bit ids with payloads
(exact scan below 1,024 vectors, an SSD graph or IVF index above);
build_index / Index build and search static indexes. Searches return
(ids, distances) numpy arrays of shape (nq, k), with NO_ID and +inf past the
last hit. The work runs in the C++ library (strata._strata) with the GIL
released. See bindings/python/README.md.
"""

from ._strata import NO_ID, Collection, CorruptionError, Index, __version__, build_index

__all__ = ["NO_ID", "Collection", "CorruptionError", "Index", "build_index", "__version__"]
