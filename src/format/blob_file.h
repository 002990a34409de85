// Blob files: small index files that are loaded whole into RAM at open (PQ
// codebooks and codes, id maps, navigation graphs). Layout (little-endian):
//
//   magic[8] "STRATAB1"  kind u32  version u32  num_sections u32  reserved u32
//   section sizes u64[num_sections]
//   payload checksum u64  (XXH3-64 of all section bytes, seeded with kind)
//   header checksum u64   (XXH3-64 of the bytes above)
//   sections, back to back
//
// The whole payload is verified at load, so a damaged blob never reaches a search.
#ifndef STRATA_FORMAT_BLOB_FILE_H_
#define STRATA_FORMAT_BLOB_FILE_H_

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "strata/result.h"

namespace strata::format {

enum class BlobKind : std::uint32_t {
  kPqCodes = 1,     // sections: PQ codebook (ProductQuantizer::Serialize), codes n * m
  kNodeCache = 2,   // reserved
  kMemGraph = 3,    // sections: meta, sample vectors, adjacency, sample slots (search/mem_graph.h)
  kRowSlots = 4,    // sections: u32 LE slot per row (page-shuffled graph layouts)
  kLabelStarts = 5, // sections: u32 LE start row per label (graphs built with labels)
  kIvfRam = 16,     // IVF RAM parts: centroids, coarse quantizer, RaBitQ blocks (format/ivf_ram_file.h)
};

// Writes the sections atomically (temporary file, fsync, rename). Returns the
// file size in bytes.
Result<std::uint64_t> WriteBlobFile(const std::string& path, BlobKind kind, std::uint32_t version,
                                    const std::vector<std::span<const std::uint8_t>>& sections);

struct BlobContents {
  std::uint32_t version = 0;
  std::vector<std::vector<std::uint8_t>> sections;
};

// Reads and verifies a blob of `kind` with version <= max_version and exactly
// `expected_sections` sections (0: any number). NotFound / Corruption /
// NotSupported naming the path.
Result<BlobContents> ReadBlobFile(const std::string& path, BlobKind kind,
                                  std::uint32_t max_version, std::uint32_t expected_sections);

}  // namespace strata::format

#endif  // STRATA_FORMAT_BLOB_FILE_H_
