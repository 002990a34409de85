#include "arrays.h"

#include <algorithm>
#include <limits>

#include "errors.h"

namespace strata::python {
namespace {

std::string ShapeText(const py::array& a) {
  std::string s = "(";
  for (py::ssize_t i = 0; i < a.ndim(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(a.shape(i));
  }
  return s + (a.ndim() == 1 ? ",)" : ")");
}

}  // namespace

FloatRows ToFloatRows(py::handle obj, std::uint32_t dim, const char* what, bool allow_1d) {
  // ensure() hands back `obj` itself when it is already a C-contiguous float32
  // array (PyArray_FromAny with the array's own flags), so that case is not copied.
  FloatArray array = FloatArray::ensure(obj);
  if (!array) {
    PyErr_Clear();
    RaiseTypeError(std::string(what) +
                   " must be an array of numbers (float32, or anything numpy converts to "
                   "float32), not " +
                   Py_TYPE(obj.ptr())->tp_name);
  }
  FloatRows out;
  if (array.ndim() == 1 && allow_1d && dim != 0) {
    out.rows = 1;
    out.dim = static_cast<std::uint32_t>(array.shape(0));
  } else if (array.ndim() == 2) {
    if (array.shape(1) > std::numeric_limits<std::uint32_t>::max()) {
      RaiseValueError(std::string(what) + " has shape " + ShapeText(array) + ": too many columns");
    }
    out.rows = static_cast<std::size_t>(array.shape(0));
    out.dim = static_cast<std::uint32_t>(array.shape(1));
  } else {
    RaiseValueError(std::string(what) + " must be a 2-D array (n, dim)" +
                    (allow_1d && dim != 0 ? " or one vector (dim,)" : "") + ", not shape " +
                    ShapeText(array));
  }
  if (dim != 0 && out.dim != dim) {
    RaiseValueError(std::string(what) + " have dimension " + std::to_string(out.dim) + " (shape " +
                    ShapeText(array) + "), expected " + std::to_string(dim));
  }
  if (out.dim == 0) RaiseValueError(std::string(what) + " have dimension 0");
  out.array = std::move(array);
  return out;
}

IdArray ToIds(py::handle obj, const char* what) {
  py::array any = py::array::ensure(obj);
  if (!any) {
    PyErr_Clear();
    RaiseTypeError(std::string(what) + " must be an int or a sequence of ints");
  }
  IdArray out;
  if (any.size() == 0) {
    out.array = U64Array(py::ssize_t{0});
    return out;
  }
  const char kind = any.dtype().kind();
  if (kind == 'i') {
    // A negative id would wrap to a huge unsigned one: refuse it instead.
    using I64Array = py::array_t<std::int64_t, py::array::c_style | py::array::forcecast>;
    const I64Array as_signed = I64Array::ensure(any);
    const std::int64_t* p = as_signed.data();
    const auto* neg = std::find_if(p, p + as_signed.size(), [](std::int64_t v) { return v < 0; });
    if (neg != p + as_signed.size()) {
      RaiseValueError(std::string(what) + " must be non-negative, got " + std::to_string(*neg));
    }
  } else if (kind != 'u') {
    RaiseTypeError(std::string(what) + " must be integers in [0, 2**64 - 1), not dtype " +
                   std::string(py::str(any.dtype())));
  }
  U64Array ids = U64Array::ensure(any);
  if (!ids) throw py::error_already_set();
  if (ids.ndim() != 1) ids = ids.attr("reshape")(-1).cast<U64Array>();
  out.array = std::move(ids);
  return out;
}

SearchOutput MakeSearchOutput(std::size_t rows, std::uint32_t k) {
  SearchOutput out;
  const std::vector<py::ssize_t> shape = {static_cast<py::ssize_t>(rows),
                                          static_cast<py::ssize_t>(k)};
  out.ids = py::array_t<std::uint64_t>(shape);
  out.distances = py::array_t<float>(shape);
  std::fill_n(out.ids_data(), rows * k, kInvalidVectorId);
  std::fill_n(out.distances_data(), rows * k, std::numeric_limits<float>::infinity());
  return out;
}

std::string ToPath(py::handle obj) {
  py::object path = py::module_::import("os").attr("fspath")(obj);
  if (!py::isinstance<py::str>(path)) {
    RaiseTypeError("paths must be str or os.PathLike of str, not bytes");
  }
  return path.cast<std::string>();
}

}  // namespace strata::python
