// Index::Open: reads the manifest and opens the index type it names.
#include <string>

#include "format/manifest.h"
#include "strata/graph_index.h"
#include "strata/index.h"
#include "strata/ivf_index.h"

namespace strata {

Result<std::unique_ptr<Index>> Index::Open(const std::string& dir, const OpenOptions& options) {
  STRATA_ASSIGN_OR_RETURN(format::Manifest m, format::ReadManifest(dir));
  if (m.index_type == "graph") {
    STRATA_ASSIGN_OR_RETURN(auto index, GraphIndex::Open(dir, options));
    return std::unique_ptr<Index>(std::move(index));
  }
  if (m.index_type == "ivf") {
    STRATA_ASSIGN_OR_RETURN(auto index, IvfIndex::Open(dir, options));
    return std::unique_ptr<Index>(std::move(index));
  }
  return Status::NotSupported(dir + ": index type '" + m.index_type + "' (known: graph, ivf)");
}

}  // namespace strata
