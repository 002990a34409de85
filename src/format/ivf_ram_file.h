// The RAM part of an IVF index: `ivf.ram`, a blob file (blob_file.h) of kind
// kIvfRamBlobKind, version 2 (version 1, without section 6, is still read),
// loaded whole at open and verified by its payload checksum. Sections, in
// order (little-endian):
//   0  fine quantizer       RabitqQuantizer::Serialize (rotation, D', D_m, B)
//   1  coarse quantizer     ivf::CoarseQuantizer::Serialize (IRQ or flat)
//   2  centroids            f32[C * d], row-major
//   3  cluster sizes        u64[C]
//   4  ids                  u32[N]: input row id of each storage position
//   5  RAM batch blocks     per cluster ceil(size / 32) FastScan blocks of
//                           layout.ram_batch_bytes() (quant/rabitq/layout.h)
//   6  listed codes         empty, or per storage position one listed code of
//                           layout.listed_code_bytes() (the 2-bit RAM tier of
//                           filtered search's exact fallback)
#ifndef STRATA_FORMAT_IVF_RAM_FILE_H_
#define STRATA_FORMAT_IVF_RAM_FILE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "format/blob_file.h"
#include "strata/result.h"

namespace strata::format {

// Blob kind of ivf.ram.
inline constexpr BlobKind kIvfRamBlobKind = BlobKind::kIvfRam;
inline constexpr std::uint32_t kIvfRamVersion = 2;

struct IvfRamParts {
  std::vector<std::uint8_t> quantizer;
  std::vector<std::uint8_t> coarse;
  std::vector<float> centroids;
  std::vector<std::uint64_t> cluster_sizes;
  std::vector<std::uint32_t> ids;
  std::vector<std::uint8_t> ram_blocks;
  std::vector<std::uint8_t> listed_codes;
};

// Writes `parts` atomically to `path`; returns the file size in bytes.
Result<std::uint64_t> WriteIvfRamFile(const std::string& path, const IvfRamParts& parts);

// Reads and verifies `path`. NotFound / Corruption (checksum, section sizes
// not multiples of their element size) / NotSupported, naming the path.
// Shapes against each other are checked by the caller (the index).
Result<IvfRamParts> ReadIvfRamFile(const std::string& path);

}  // namespace strata::format

#endif  // STRATA_FORMAT_IVF_RAM_FILE_H_
