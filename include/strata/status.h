// Status: the error type of every fallible Strata call.
//
// Strata never throws across its public API and never exits or aborts on bad
// input or an I/O failure: every operation that can fail returns a Status (or a
// Result<T>, see result.h). A Status is either OK or carries a code from a small
// fixed set plus a human-readable message naming what went wrong and where
// (file, row, option). Statuses are cheap to copy when OK (no allocation).
//
// Thread-safety: a Status is a value type; distinct objects may be used from
// distinct threads freely.
#ifndef STRATA_STATUS_H_
#define STRATA_STATUS_H_

#include <memory>
#include <string>
#include <string_view>
#include <utility>

namespace strata {

// The error categories. Kept small on purpose (leveldb/rocksdb style): callers
// branch on the category, humans read the message.
enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,  // the caller passed something wrong (bad option, wrong dims, NaN)
  kNotFound = 2,         // a file, id or key does not exist
  kCorruption = 3,       // stored data fails a check (magic, version, checksum, size)
  kIOError = 4,          // the operating system reported a failure (errno in message)
  kNotSupported = 5,     // valid request that this build/platform/format cannot serve
  kBusy = 6,             // resource temporarily unavailable (queue full, lock held)
  kAborted = 7,          // operation cancelled or stopped before completion
  kOutOfRange = 8,       // read/index past the end of a file or array
};

// Returns a stable name such as "InvalidArgument" for a code.
std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  // An OK status.
  Status() noexcept = default;
  Status(StatusCode code, std::string_view message);

  static Status OK() { return Status(); }
  static Status InvalidArgument(std::string_view msg) {
    return Status(StatusCode::kInvalidArgument, msg);
  }
  static Status NotFound(std::string_view msg) { return Status(StatusCode::kNotFound, msg); }
  static Status Corruption(std::string_view msg) { return Status(StatusCode::kCorruption, msg); }
  static Status IOError(std::string_view msg) { return Status(StatusCode::kIOError, msg); }
  // An IOError whose message is "<context>: <strerror(err)>".
  static Status FromErrno(std::string_view context, int err);
  static Status NotSupported(std::string_view msg) {
    return Status(StatusCode::kNotSupported, msg);
  }
  static Status Busy(std::string_view msg) { return Status(StatusCode::kBusy, msg); }
  static Status Aborted(std::string_view msg) { return Status(StatusCode::kAborted, msg); }
  static Status OutOfRange(std::string_view msg) { return Status(StatusCode::kOutOfRange, msg); }

  bool ok() const { return state_ == nullptr; }
  StatusCode code() const { return state_ ? state_->code : StatusCode::kOk; }
  // The message without the code name; empty when OK.
  const std::string& message() const;
  // "OK" or "<CodeName>: <message>".
  std::string ToString() const;

  // Returns a copy whose message is "<context>: <old message>"; OK stays OK.
  Status WithContext(std::string_view context) const;

  bool IsInvalidArgument() const { return code() == StatusCode::kInvalidArgument; }
  bool IsNotFound() const { return code() == StatusCode::kNotFound; }
  bool IsCorruption() const { return code() == StatusCode::kCorruption; }
  bool IsIOError() const { return code() == StatusCode::kIOError; }
  bool IsNotSupported() const { return code() == StatusCode::kNotSupported; }
  bool IsOutOfRange() const { return code() == StatusCode::kOutOfRange; }

  // Marks a status as deliberately ignored.
  void IgnoreError() const {}

 private:
  struct State {
    StatusCode code;
    std::string message;
  };
  // Shared so that copying an error status is cheap; never mutated after creation.
  std::shared_ptr<const State> state_;
};

}  // namespace strata

// Evaluates `expr` (a Status) and returns it from the enclosing function if not OK.
#define STRATA_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    ::strata::Status strata_status_tmp_ = (expr);    \
    if (!strata_status_tmp_.ok()) return strata_status_tmp_; \
  } while (0)

#endif  // STRATA_STATUS_H_
