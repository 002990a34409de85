// File names inside an IVF index directory (see include/strata/ivf_index.h)
// and the default n_probe shared by build and open.
#ifndef STRATA_INDEX_IVF_FILES_H_
#define STRATA_INDEX_IVF_FILES_H_

#include <cstdint>

namespace strata {

inline constexpr const char* kIvfRecordsFile = "ivf.records";
inline constexpr const char* kIvfRamFile = "ivf.ram";

// Default clusters probed for an index of `clusters` clusters:
// min(C, max(8, C / 32)).
std::uint32_t DefaultIvfNprobe(std::uint64_t clusters);

}  // namespace strata

#endif  // STRATA_INDEX_IVF_FILES_H_
