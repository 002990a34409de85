// File names inside an IVF index directory (see include/strata/ivf_index.h),
// the default n_probe shared by build and open, and loading an index's
// tables (open and merge).
#ifndef STRATA_INDEX_IVF_FILES_H_
#define STRATA_INDEX_IVF_FILES_H_

#include <cstdint>
#include <string>

#include "strata/status.h"

namespace strata {
namespace format {
struct Manifest;
}
namespace search {
struct IvfIndexData;
}

inline constexpr const char* kIvfRecordsFile = "ivf.records";
inline constexpr const char* kIvfRamFile = "ivf.ram";

// Default clusters probed for an index of `clusters` clusters:
// min(C, max(8, C / 32)).
std::uint32_t DefaultIvfNprobe(std::uint64_t clusters);

// Reads the manifest and ivf.ram of the IVF index in `dir` and opens its
// records file, checking every table against the manifest and the others
// (and, with `verify_checksums`, the files against the manifest). NotFound,
// InvalidArgument (another index type), Corruption, NotSupported, naming the
// directory or file.
Status LoadIvfIndexData(const std::string& dir, bool verify_checksums, format::Manifest* manifest,
                        search::IvfIndexData* data);

}  // namespace strata

#endif  // STRATA_INDEX_IVF_FILES_H_
