// `strata info`: shape, type, size and a sanity summary of any supported file;
// for a directory, the collection or index it holds.
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "collection_io.h"
#include "command.h"
#include "strata/collection.h"
#include "strata/dataset.h"
#include "strata/distance.h"
#include "strata/index.h"

namespace strata::cli {
namespace {

struct InfoArgs {
  std::string file;
  std::uint64_t sample = 20000;
};

// A collection (its stats, opened without background merges) or an index
// (its description and sizes).
Status RunDirectoryInfo(const InfoArgs& a) {
  if (IsCollectionDirectory(a.file)) {
    CollectionOptions o;
    o.background_merge = false;
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Collection> c, OpenExistingCollection(a.file, o));
    const CollectionStats stats = c->Stats();
    Status closed = c->Close();
    if (!closed.ok()) return closed.WithContext("closing collection " + a.file);
    PrintCollectionStats(a.file, stats, stdout);
    return Status::OK();
  }
  Result<std::unique_ptr<Index>> opened = Index::Open(a.file);
  if (!opened.ok() && opened.status().IsNotFound()) {
    return Status::NotFound(a.file + ": a directory that holds neither a collection nor an index");
  }
  STRATA_ASSIGN_OR_RETURN(auto index, std::move(opened));
  std::printf("index %s\n  %s\n  RAM %s, disk %s\n", a.file.c_str(), index->Describe().c_str(),
              FormatBytes(index->memory_bytes()).c_str(), FormatBytes(index->disk_bytes()).c_str());
  return Status::OK();
}

Status RunInfo(const InfoArgs& a) {
  std::error_code ec;
  if (std::filesystem::is_directory(a.file, ec)) return RunDirectoryInfo(a);
  STRATA_ASSIGN_OR_RETURN(DatasetInfo info, GetDatasetInfo(a.file));
  std::printf("%s\n  %s\n", a.file.c_str(), info.ToString().c_str());
  if (info.ground_truth) {
    STRATA_ASSIGN_OR_RETURN(GroundTruth gt, ReadGroundTruth(a.file));
    std::printf("  ground truth: %llu queries x %u neighbours, %s distances\n",
                static_cast<unsigned long long>(gt.num_queries), gt.k,
                gt.distances.empty() ? "without" : "with");
    if (!gt.distances.empty() && gt.num_queries > 0) {
      std::printf("  query 0: nearest id %llu at %.6g, k-th at %.6g\n",
                  static_cast<unsigned long long>(gt.ids[0]), gt.distances[0],
                  gt.distances[gt.k - 1]);
    }
    return Status::OK();
  }
  STRATA_ASSIGN_OR_RETURN(auto reader, DatasetReader::Open(a.file));
  SummaryOptions so;
  so.max_rows = a.sample;
  STRATA_ASSIGN_OR_RETURN(DatasetSummary summary, reader->Summarize(so));
  std::printf("%s\n", summary.ToString().c_str());
  std::printf("  distance kernels: %s\n", std::string(ActiveIsaName()).c_str());
  return Status::OK();
}

}  // namespace

void AddInfoCommand(CLI::App& root, CommandAction* action) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd = root.add_subcommand(
      "info", "Describe a vector or ground-truth file, or a collection or index directory");
  cmd->add_option("file", args->file, "File or directory to describe")->required();
  cmd->add_option("--sample", args->sample, "Rows to sample for the summary")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->callback([args, action] { *action = [args] { return RunInfo(*args); }; });
}

}  // namespace strata::cli
