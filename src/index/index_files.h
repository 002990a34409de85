// File names inside an index directory (see include/strata/index.h).
#ifndef STRATA_INDEX_INDEX_FILES_H_
#define STRATA_INDEX_INDEX_FILES_H_

namespace strata {

inline constexpr const char* kGraphNodesFile = "graph.nodes";
inline constexpr const char* kPqFile = "pq.bin";
// Entry-point PQ code and MemGraph (BlobKind::kMemGraph).
inline constexpr const char* kEntryFile = "entry.bin";
// Page-shuffled graph layouts: each row's slot in the node file
// (BlobKind::kRowSlots), so that a search restricted to known rows (the
// exact-scan fallback of filtered search) finds their codes and records.
// Indexes written before it have none; such a search then walks instead.
inline constexpr const char* kRowSlotsFile = "rows.bin";
// Graphs built with labels (FilteredVamana): each label's start row
// (BlobKind::kLabelStarts; 0xFFFFFFFF where no row carries the label).
inline constexpr const char* kLabelStartsFile = "label_starts.bin";

}  // namespace strata

#endif  // STRATA_INDEX_INDEX_FILES_H_
