// File names inside an index directory (see include/strata/index.h).
#ifndef STRATA_INDEX_INDEX_FILES_H_
#define STRATA_INDEX_INDEX_FILES_H_

namespace strata {

inline constexpr const char* kGraphNodesFile = "graph.nodes";
inline constexpr const char* kPqFile = "pq.bin";
// Entry-point PQ code and MemGraph (BlobKind::kMemGraph).
inline constexpr const char* kEntryFile = "entry.bin";

}  // namespace strata

#endif  // STRATA_INDEX_INDEX_FILES_H_
