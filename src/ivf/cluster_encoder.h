// Encoding the clusters of an IVF index (RaBitQ-SSD §3.1, Split-RaBitQ): per
// cluster, in storage order, the RAM part (first D_m bits of each 1-bit
// RaBitQ code + 3 factors, FastScan batches of 32) and the SSD record
// (remaining code bits, B-1-bit ex-code, 2 re-ranking factors), or, with
// RerankKind::kRaw, the raw float vector as the SSD record (exact
// re-ranking).
//
// Pure compute; no I/O.
#ifndef STRATA_IVF_CLUSTER_ENCODER_H_
#define STRATA_IVF_CLUSTER_ENCODER_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "ivf/clustering.h"
#include "quant/rabitq/quantizer.h"
#include "strata/result.h"

namespace strata::ivf {

// What the SSD record holds.
enum class RerankKind : std::uint8_t {
  kExCode = 0,  // Split-RaBitQ suffix + ex-code + 2 factors (estimated distance)
  kRaw = 1,     // the float32 vector, d * 4 bytes (exact distance)
};

// "excode" / "raw"; InvalidArgument otherwise.
Status ParseRerankKind(const std::string& name, RerankKind* out);
const char* RerankKindName(RerankKind kind);

// SSD record size in bytes for a quantizer and rerank kind.
std::size_t RecordBytes(const quant::rabitq::RabitqQuantizer& quantizer, RerankKind rerank);

struct EncodedClusters {
  // Size C + 1: cluster c's RAM blocks are [block_offsets[c], block_offsets[c + 1]).
  std::vector<std::uint64_t> block_offsets;
  // block_offsets.back() * layout.ram_batch_bytes() bytes.
  std::vector<std::uint8_t> ram_blocks;
  // kExCode: n * RecordBytes() bytes in storage order (record i belongs to
  // clustering.order[i]). kRaw: empty (records are the rows themselves).
  std::vector<std::uint8_t> records;
  // With listed codes: n * layout.listed_code_bytes() bytes in storage
  // order (quant/rabitq/layout.h); else empty.
  std::vector<std::uint8_t> listed_codes;
};

// Encodes n rows of `data` (n * d floats, already normalised under cosine)
// laid out by `clustering`, parallel over clusters on `threads` threads
// (0 = all cores), with each row's listed code when `listed_codes`.
// InvalidArgument (naming the row) for a non-finite row.
Result<EncodedClusters> EncodeClusters(const quant::rabitq::RabitqQuantizer& quantizer,
                                       const float* data, const IvfClustering& clustering,
                                       RerankKind rerank, unsigned threads = 0,
                                       bool listed_codes = false);

}  // namespace strata::ivf

#endif  // STRATA_IVF_CLUSTER_ENCODER_H_
