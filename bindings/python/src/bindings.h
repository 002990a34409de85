// The parts of the strata._strata module, each defined in its own file and
// registered by module.cc.
#ifndef STRATA_BINDINGS_PYTHON_BINDINGS_H_
#define STRATA_BINDINGS_PYTHON_BINDINGS_H_

#include <pybind11/pybind11.h>

namespace strata::python {

namespace py = pybind11;

// strata.Collection (collection_binding.cc).
void RegisterCollection(py::module_& m);
// strata.Index (index_binding.cc).
void RegisterIndex(py::module_& m);
// strata.build_index (build_binding.cc).
void RegisterBuild(py::module_& m);

}  // namespace strata::python

#endif  // STRATA_BINDINGS_PYTHON_BINDINGS_H_
