// numpy in and out: vectors, ids and search results.
//
// Vectors are used in place when they already are a C-contiguous float32
// array; anything else numpy can turn into float32 (float64, float16, integer
// arrays, nested lists, Fortran order, strided views) is converted once. The
// returned views keep the array they point into alive; while the GIL is
// released around the work the caller must not resize or free it (numpy
// refuses to resize an array another object references).
#ifndef STRATA_BINDINGS_PYTHON_ARRAYS_H_
#define STRATA_BINDINGS_PYTHON_ARRAYS_H_

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "strata/types.h"

namespace strata::python {

namespace py = pybind11;

// The array types conversions produce: C-contiguous, converted by numpy
// (forcecast) when the input is not already so.
using FloatArray = py::array_t<float, py::array::c_style | py::array::forcecast>;
using U64Array = py::array_t<std::uint64_t, py::array::c_style | py::array::forcecast>;

// rows x dim float32 values, row-major, in `array`'s buffer.
struct FloatRows {
  FloatArray array;
  std::size_t rows = 0;
  std::uint32_t dim = 0;
  std::span<const float> values() const { return {array.data(), rows * dim}; }
};

// `obj` as rows of `dim` floats: a 2-D array of shape (n, dim), or, when
// `allow_1d`, a 1-D array of dim values as one row. dim 0 takes the array's
// second dimension (2-D only). `what` names the argument in errors: TypeError
// when numpy cannot make float32 values of `obj`, ValueError for a wrong
// number of dimensions or a dimension other than `dim`.
FloatRows ToFloatRows(py::handle obj, std::uint32_t dim, const char* what, bool allow_1d);

// 1-D uint64 ids, in `array`'s buffer.
struct IdArray {
  U64Array array;
  std::span<const VectorId> values() const {
    return {reinterpret_cast<const VectorId*>(array.data()),
            static_cast<std::size_t>(array.size())};
  }
};

// `obj` (an int, or a sequence or array of ints; any shape is flattened) as
// ids. Unsigned integer arrays are used as they are, signed ones must hold no
// negative value (ValueError); floats, bools and other objects are a
// TypeError. An empty sequence gives no ids.
IdArray ToIds(py::handle obj, const char* what);

// The (ids, distances) pair every search returns: uint64 ids and float32
// distances of shape (rows, k), filled with kInvalidVectorId / +inf so that
// slots past the last hit need no writing.
struct SearchOutput {
  py::array_t<std::uint64_t> ids;
  py::array_t<float> distances;
  VectorId* ids_data() { return reinterpret_cast<VectorId*>(ids.mutable_data()); }
  float* distances_data() { return distances.mutable_data(); }
  py::tuple ToTuple() const { return py::make_tuple(ids, distances); }
};
SearchOutput MakeSearchOutput(std::size_t rows, std::uint32_t k);

// `obj` as a str path: str or os.PathLike (TypeError otherwise).
std::string ToPath(py::handle obj);

}  // namespace strata::python

#endif  // STRATA_BINDINGS_PYTHON_ARRAYS_H_
