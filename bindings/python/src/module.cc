// strata._strata: the compiled part of the `strata` Python package (see
// bindings/python/README.md). The package's __init__.py re-exports it.
#include <pybind11/pybind11.h>

#include "arrays.h"
#include "bindings.h"
#include "errors.h"
#include "strata/types.h"

namespace py = pybind11;

PYBIND11_MODULE(_strata, m) {
  using namespace strata::python;
  m.doc() =
      "Strata: SSD-resident vector search. Collection is a crash-safe store of vectors\n"
      "under 64-bit ids with payloads that takes upserts and deletes while it serves\n"
      "searches; build_index and Index build and search static graph (DiskANN) and IVF\n"
      "(RaBitQ) indexes. Searches return (ids, distances) numpy arrays of shape (nq, k).";
  m.attr("__version__") = STRATA_VERSION_STRING;
  m.attr("NO_ID") = py::int_(strata::kInvalidVectorId);
  RegisterExceptions(m);
  RegisterCollection(m);
  RegisterIndex(m);
  RegisterBuild(m);
  // For the test suite: the address of the float32 buffer the bindings read
  // `vectors` from, to check that a C-contiguous float32 array is not copied.
  m.def(
      "_input_address",
      [](py::handle vectors) {
        return reinterpret_cast<std::uintptr_t>(
            ToFloatRows(vectors, 0, "vectors", false).values().data());
      },
      py::arg("vectors"), "Address of the float32 data the bindings would read (tests only).");
}
