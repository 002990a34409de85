// Fault injection for the write path of our own files (LevelDB's
// FaultInjectionTestEnv is the model): tests arm a fault point so that after
// `n` more successful operations of that kind, every one fails with EIO
// until cleared. AtomicFileWriter, which writes every index segment file,
// consults it before each write, fsync and rename; an injected failure is
// indistinguishable from a real one to its caller. Process-wide, thread-safe
// (atomics); a disarmed point costs one relaxed load.
#ifndef STRATA_IO_FAULT_INJECTION_H_
#define STRATA_IO_FAULT_INJECTION_H_

#include <cstdint>

namespace strata::io {

enum class FaultPoint : std::uint8_t { kWrite = 0, kFsync = 1, kRename = 2 };

// After `after` more successful operations at `point`, fail every one.
void ArmFault(FaultPoint point, std::uint64_t after);
// Disarms every point.
void ClearFaults();
// Consumes one operation at `point`: true if it must fail.
bool ShouldInjectFault(FaultPoint point);
// Operations failed by injection since the last ClearFaults.
std::uint64_t InjectedFaults();

}  // namespace strata::io

#endif  // STRATA_IO_FAULT_INJECTION_H_
