#include "errors.h"

namespace strata::python {
namespace {

// Owned for the life of the process: the module keeps it as an attribute,
// and an exception type must outlive every exception raised with it.
PyObject* corruption_error = nullptr;

[[noreturn]] void Raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

}  // namespace

void RegisterExceptions(py::module_& m) {
  corruption_error = PyErr_NewExceptionWithDoc(
      "strata.CorruptionError",
      "Stored data failed a check (magic, version, checksum or size): a damaged or\n"
      "truncated index or collection file. A subclass of RuntimeError.",
      PyExc_RuntimeError, nullptr);
  if (corruption_error == nullptr) throw py::error_already_set();
  m.attr("CorruptionError") = py::handle(corruption_error);
}

void RaiseStatus(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
      Raise(PyExc_ValueError, status.message());
    case StatusCode::kIOError:
      Raise(PyExc_OSError, status.message());
    case StatusCode::kNotFound:
      Raise(PyExc_FileNotFoundError, status.message());
    case StatusCode::kCorruption:
      Raise(corruption_error != nullptr ? corruption_error : PyExc_RuntimeError, status.message());
    case StatusCode::kNotSupported:
      Raise(PyExc_NotImplementedError, status.message());
    default:
      Raise(PyExc_RuntimeError, status.ToString());
  }
}

void RaiseValueError(const std::string& message) { Raise(PyExc_ValueError, message); }
void RaiseTypeError(const std::string& message) { Raise(PyExc_TypeError, message); }

}  // namespace strata::python
