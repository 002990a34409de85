// Errors of the Python package: Status codes mapped onto Python exceptions,
// and the argument errors the bindings raise themselves.
//
//   InvalidArgument -> ValueError            Corruption   -> strata.CorruptionError
//   IOError         -> OSError               NotSupported -> NotImplementedError
//   NotFound        -> FileNotFoundError     anything else -> RuntimeError
// FileNotFoundError is an OSError, NotImplementedError and CorruptionError are
// RuntimeErrors. The message is the Status message (with the code name in
// front for the plain RuntimeError, where the type does not tell it).
//
// Every function here raises by setting the Python error and throwing
// py::error_already_set, so it must be called with the GIL held.
#ifndef STRATA_BINDINGS_PYTHON_ERRORS_H_
#define STRATA_BINDINGS_PYTHON_ERRORS_H_

#include <pybind11/pybind11.h>

#include <string>
#include <utility>

#include "strata/result.h"
#include "strata/status.h"

namespace strata::python {

namespace py = pybind11;

// Creates strata.CorruptionError and adds it to `m`; once, at import.
void RegisterExceptions(py::module_& m);

// Raises the exception for `status`, which must not be OK.
[[noreturn]] void RaiseStatus(const Status& status);

inline void RaiseIfError(const Status& status) {
  if (!status.ok()) RaiseStatus(status);
}

template <typename T>
T ValueOrRaise(Result<T> result) {
  if (!result.ok()) RaiseStatus(result.status());
  return std::move(result).value();
}

[[noreturn]] void RaiseValueError(const std::string& message);
[[noreturn]] void RaiseTypeError(const std::string& message);

}  // namespace strata::python

#endif  // STRATA_BINDINGS_PYTHON_ERRORS_H_
