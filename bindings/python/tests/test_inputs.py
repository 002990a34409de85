"""Input conversion and error paths shared by every call: dtypes, layouts, ids, k."""

import numpy as np
import pytest

import strata
from strata import _strata


def test_c_contiguous_float32_is_not_copied():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert _strata._input_address(a) == a.ctypes.data
    for converted in (a.astype(np.float64), np.asfortranarray(a), a[:, ::2], a[::2]):
        assert _strata._input_address(converted) != converted.ctypes.data


@pytest.mark.parametrize("convert", [
    lambda x: x.astype(np.float64),
    lambda x: x.astype(np.float16),
    lambda x: x.astype(np.int64).tolist(),
    np.asfortranarray,
    lambda x: np.repeat(x, 2, axis=1)[:, ::2],  # a strided view
], ids=["float64", "float16", "int-lists", "fortran", "strided"])
def test_other_dtypes_and_layouts_give_the_same_results(coll_path, rng, convert):
    # Small integers: exact in every dtype above, so results must be identical.
    data = rng.integers(-8, 8, size=(100, 8)).astype(np.float32)
    queries = rng.integers(-8, 8, size=(10, 8)).astype(np.float32)
    with strata.Collection(coll_path, dim=8) as col:
        col.add(convert(data))
        np.testing.assert_array_equal(col.get(range(100))[0], data)
        want = col.search(queries, k=5)
        got = col.search(convert(queries), k=5)
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_wrong_shapes_and_values(small_collection):
    col, data = small_collection
    with pytest.raises(ValueError, match="dimension 15"):
        col.add(np.ones((2, 15), np.float32))
    with pytest.raises(ValueError, match="dimension 17"):
        col.search(np.ones(17, np.float32))
    with pytest.raises(ValueError, match="2-D"):
        col.search(np.ones((2, 2, 16), np.float32))
    with pytest.raises(TypeError):
        col.search("sixteen floats")
    bad = data[:2].copy()
    bad[1, 3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        col.add(bad, ids=[500, 501])
    assert 500 not in col  # the batch is atomic: nothing was written
    bad[1, 3] = np.inf
    with pytest.raises(ValueError, match="NaN or Inf"):
        col.add(bad, ids=[500, 501])
    with pytest.raises(ValueError, match="NaN"):
        col.search(bad[1])
    with pytest.raises(ValueError, match="empty"):
        col.add(np.zeros((0, 16), np.float32))


def test_ids_errors(small_collection):
    col, data = small_collection
    with pytest.raises(ValueError, match="non-negative"):
        col.add(data[:2], ids=[1, -1])
    with pytest.raises(TypeError, match="integers"):
        col.add(data[:2], ids=[1.0, 2.0])
    with pytest.raises(TypeError, match="integers"):
        col.delete([True])
    with pytest.raises(ValueError, match="NO_ID"):
        col.add(data[:1], ids=[strata.NO_ID])
    with pytest.raises(ValueError, match="1 entries for 2 vectors"):
        col.add(data[:2], ids=[7])
    with pytest.raises(ValueError, match="twice"):
        col.add(data[:2], ids=[7, 7])
    with pytest.raises(ValueError, match="empty"):
        col.delete([])
    np.testing.assert_array_equal(col.add(data[:1], ids=np.array([2**64 - 2], np.uint64)),
                                  [2**64 - 2])
    assert 2**64 - 2 in col
    with pytest.raises(ValueError, match="NO_ID"):
        col.add(data[:1])  # the default counter would reach NO_ID


def test_k_and_search_parameters(small_collection):
    col, data = small_collection
    for k in (0, -1, 2**32):
        with pytest.raises(ValueError, match="k must be"):
            col.search(data[0], k=k)
    with pytest.raises(TypeError, match="L must be an int"):
        col.search(data[0], L="big")
    with pytest.raises(TypeError, match="page_search must be True or False"):
        col.search(data[0], page_search=1)
    with pytest.raises(ValueError, match="beam width"):
        col.search(data[0], beamwidth=0)
    with pytest.raises(ValueError, match="pipeline"):
        col.search(data[0], pipeline="warp")
    with pytest.raises(ValueError, match="profile"):
        col.search(data[0], profile="fastest")
    ids, _ = col.search(data[0], k=60)  # L defaults to max(50, k)
    assert ids.shape == (1, 60)


def test_cosine_rejects_zero_vector(coll_path):
    with strata.Collection(coll_path, dim=4, metric="cosine") as col:
        with pytest.raises(ValueError, match="zero vector"):
            col.add(np.zeros((1, 4), np.float32))


def test_paths_accept_pathlike(tmp_path):
    with strata.Collection(tmp_path / "c", dim=3) as col:
        assert col.path == str(tmp_path / "c")
    with pytest.raises(TypeError):
        strata.Collection(42, dim=3)
