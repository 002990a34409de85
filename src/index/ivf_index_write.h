// Writing an IVF index's files from its parts (quantizer, coarse quantizer,
// cluster tables, RAM blocks, records): the common tail of BuildIvfIndex and
// MergeIvfIndex, so that both write the same files and the same manifest.
#ifndef STRATA_INDEX_IVF_INDEX_WRITE_H_
#define STRATA_INDEX_IVF_INDEX_WRITE_H_

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "base/timer.h"
#include "format/ivf_ram_file.h"
#include "format/ivf_records_file.h"
#include "ivf/cluster_encoder.h"
#include "ivf/coarse_quantizer.h"
#include "ivf/page_packing.h"
#include "quant/rabitq/quantizer.h"
#include "strata/ivf_index.h"

namespace strata {

// What an IVF index is written from. Storage position p (0 <= p < n) is the
// p-th record in cluster order; parts.ids[p] is its row id.
struct IvfIndexContents {
  ElementType type = ElementType::kFloat32;  // element type the rows came in
  std::uint32_t dim = 0;
  std::uint64_t n = 0;
  const quant::rabitq::RabitqQuantizer* quantizer = nullptr;
  ivf::RerankKind rerank = ivf::RerankKind::kExCode;
  ivf::CoarseKind coarse = ivf::CoarseKind::kIrq;
  ivf::PagePacking packing;
  // Every section of ivf.ram, filled by the caller (quantizer and coarse
  // blobs serialised).
  const format::IvfRamParts* parts = nullptr;
  // The SSD record of each storage position, called in increasing order.
  format::IvfRecordSource records;
  // Rotation seed (manifest "seed") and the cluster size the clustering aimed
  // at (manifest "target_cluster_size": n / C at the first build, kept by
  // merges, which split clusters past twice it).
  std::uint64_t seed = 0;
  std::uint64_t target_cluster_size = 0;
  // Extra entries of the manifest's "build" section (a merge's counts).
  nlohmann::json build_extra = nlohmann::json::object();
};

// Writes ivf.records, ivf.ram and the manifest into a staging directory that
// replaces `index_dir` only once complete (BuildAside): a failure leaves a
// previous index there untouched. `options` supplies page_order and threads
// for the manifest; the report's size, shape, write and total fields are
// filled (`total` is the caller's clock; seconds_load / cluster / encode are
// the caller's and go into the manifest as they are). Errors from the record
// source and I/O pass through.
Status WriteIvfIndex(const IvfIndexContents& contents, const std::string& index_dir,
                     const IvfBuildOptions& options, const BuildProgress& progress,
                     const Timer& total, IvfBuildReport* report);

}  // namespace strata

#endif  // STRATA_INDEX_IVF_INDEX_WRITE_H_
