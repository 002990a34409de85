// WriteIvfIndex: the files and manifest of an IVF index, written aside and
// switched in once complete (BuildAside).
#include "index/ivf_index_write.h"

#include <string>
#include <utility>

#include "base/stats.h"
#include "format/manifest.h"
#include "index/build_util.h"
#include "index/ivf_files.h"

namespace strata {

Status WriteIvfIndex(const IvfIndexContents& contents, const std::string& index_dir,
                     const IvfBuildOptions& options, const BuildProgress& progress,
                     const Timer& total, IvfBuildReport* report) {
  const Timer phase;
  auto report_progress = [&](double f) {
    if (progress) progress("write", f);
  };
  report_progress(0.0);
  const format::IvfRamParts& parts = *contents.parts;
  const std::uint64_t n = contents.n;
  const std::size_t C = parts.cluster_sizes.size();
  const quant::rabitq::RabitqQuantizer& quantizer = *contents.quantizer;
  const std::size_t record_bytes = contents.packing.record_bytes();
  // RAM per vector, taken before the parts are released.
  const double ram_per_vector =
      n == 0 ? 0.0
             : static_cast<double>(parts.ram_blocks.size() + parts.listed_codes.size() +
                                   parts.ids.size() * 4) /
                   n;
  auto write_files = [&](const std::string& dir) -> Status {
    STRATA_ASSIGN_OR_RETURN(
        std::uint64_t records_bytes,
        format::WriteIvfRecordsFile(dir + "/" + kIvfRecordsFile, contents.packing,
                                    parts.cluster_sizes, [&](std::uint64_t pos, std::uint8_t* out) {
                                      STRATA_RETURN_IF_ERROR(contents.records(pos, out));
                                      if ((pos & 0xFFFF) == 0) {
                                        report_progress(0.9 * static_cast<double>(pos) / n);
                                      }
                                      return Status::OK();
                                    }));
    STRATA_ASSIGN_OR_RETURN(std::uint64_t ram_bytes,
                            format::WriteIvfRamFile(dir + "/" + kIvfRamFile, parts));
    report->index_bytes = records_bytes + ram_bytes;
    report->num_vectors = n;
    report->dim = contents.dim;
    report->clusters = C;
    report->prefix_bits = static_cast<std::uint32_t>(quantizer.prefix_dim());
    report->record_bytes = static_cast<std::uint32_t>(record_bytes);
    report->records_per_page = contents.packing.records_per_unit();
    report->ram_bytes_per_vector = ram_per_vector;
    const std::uint32_t nprobe = DefaultIvfNprobe(C);
    format::Manifest m;
    m.index_type = "ivf";
    m.metric = options.metric;
    m.element_type = contents.type;
    m.dim = contents.dim;
    m.num_vectors = n;
    m.parameters = {{"clusters", C},
                    {"prefix_bits", report->prefix_bits},
                    {"bits", quantizer.options().total_bits},
                    {"rerank", ivf::RerankKindName(contents.rerank)},
                    {"coarse", ivf::CoarseKindName(contents.coarse)},
                    {"page_order", options.page_order},
                    {"seed", contents.seed},
                    {"target_cluster_size", contents.target_cluster_size},
                    {"record_bytes", record_bytes},
                    {"records_per_page", contents.packing.records_per_unit()},
                    {"pages_per_record", contents.packing.pages_per_unit()},
                    {"default_nprobe", nprobe},
                    {"filter_codes", !parts.listed_codes.empty()}};
    for (const char* name : {kIvfRecordsFile, kIvfRamFile}) {
      format::ManifestFile f{name, 0, 0};
      STRATA_RETURN_IF_ERROR(format::ChecksumFile(dir + "/" + name, &f.bytes, &f.checksum));
      m.files.push_back(f);
    }
    report->seconds_write = phase.ElapsedSeconds();
    report->seconds_total = total.ElapsedSeconds();
    report->peak_rss_bytes = PeakRssBytes();
    m.build = {{"seconds_total", report->seconds_total},
               {"seconds_load", report->seconds_load},
               {"seconds_cluster", report->seconds_cluster},
               {"seconds_encode", report->seconds_encode},
               {"seconds_write", report->seconds_write},
               {"peak_rss_bytes", report->peak_rss_bytes},
               {"threads", options.threads}};
    m.build.update(contents.build_extra);
    return format::WriteManifest(dir, m);
  };
  STRATA_RETURN_IF_ERROR(BuildAside(index_dir, write_files));
  report_progress(1.0);
  return Status::OK();
}

}  // namespace strata
