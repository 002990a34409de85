// Result<T>: a value or an error Status (a small std::expected for C++20).
//
// Every public function that produces a value and can fail returns Result<T>.
// Accessing value() of an error Result is a programmer error (checked by
// assert in debug builds); callers test ok() first or use STRATA_ASSIGN_OR_RETURN.
#ifndef STRATA_RESULT_H_
#define STRATA_RESULT_H_

#include <cassert>
#include <optional>
#include <type_traits>
#include <utility>

#include "strata/status.h"

namespace strata {

template <typename T>
class [[nodiscard]] Result {
 public:
  // Implicit from a value and from a non-OK Status, so `return value;` and
  // `return Status::IOError(...)` both work in a function returning Result<T>.
  Result(T value) : value_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Result(Status status) : status_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!status_.ok() && "Result constructed from an OK Status without a value");
    if (status_.ok()) status_ = Status(StatusCode::kInvalidArgument, "Result from OK status");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }

  T& value() & {
    assert(ok());
    return *value_;
  }
  const T& value() const& {
    assert(ok());
    return *value_;
  }
  T&& value() && {
    assert(ok());
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  std::optional<T> value_;
  Status status_;  // OK iff value_ is set
};

}  // namespace strata

#define STRATA_CONCAT_INNER_(a, b) a##b
#define STRATA_CONCAT_(a, b) STRATA_CONCAT_INNER_(a, b)

// `STRATA_ASSIGN_OR_RETURN(auto x, Foo());` declares x from Foo()'s value, or
// returns Foo()'s error status from the enclosing function.
#define STRATA_ASSIGN_OR_RETURN(lhs, expr)                              \
  auto STRATA_CONCAT_(strata_result_, __LINE__) = (expr);               \
  if (!STRATA_CONCAT_(strata_result_, __LINE__).ok())                   \
    return STRATA_CONCAT_(strata_result_, __LINE__).status();           \
  lhs = std::move(STRATA_CONCAT_(strata_result_, __LINE__)).value()

#endif  // STRATA_RESULT_H_
