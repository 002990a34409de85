// Writing and opening the node file of a graph index (a sector file of kind
// kGraphNodes with the GraphLayout of graph_layout.h).
#ifndef STRATA_FORMAT_GRAPH_NODE_FILE_H_
#define STRATA_FORMAT_GRAPH_NODE_FILE_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "format/graph_layout.h"
#include "strata/io.h"
#include "strata/result.h"

namespace strata::format {

// What one slot's record holds, filled by a NodeSource. The writer clears
// `neighbours` and `codes` and sets `empty` false before each call.
struct NodeContent {
  std::span<std::byte> vector;          // layout.vector_bytes, to be filled
  std::vector<VectorId> neighbours;     // slot numbers
  VectorId external_id = kInvalidVectorId;  // layouts with external ids
  std::vector<std::uint8_t> codes;      // neighbours.size() * code_bytes (all-in-storage)
  bool empty = false;                   // an empty slot (shuffled layouts)
};

// Supplies the record of slot `slot`.
using NodeSource = std::function<Status(std::uint64_t slot, NodeContent* content)>;

// Writes every slot's record in slot order to `path` atomically (temporary
// file, fsync, rename). Returns the file's size in bytes.
Result<std::uint64_t> WriteGraphNodeFile(const std::string& path, const GraphLayout& layout,
                                         const NodeSource& source);

// An open node file: validated header, O_DIRECT descriptor for the I/O queues.
class GraphNodeFile {
 public:
  // NotFound / Corruption (bad magic, checksum, kind, size) / NotSupported
  // (newer version) with the path in the message.
  static Result<GraphNodeFile> Open(const std::string& path);

  const GraphLayout& layout() const { return layout_; }
  const DirectFile& file() const { return file_; }
  const std::string& path() const { return file_.path(); }

  // Verifies the sectors of `loc` in `buffer` (loc.sectors * kSector bytes,
  // read from loc.sector) and decodes the record of `slot`. Corruption on a
  // bad sector.
  Status Decode(std::uint64_t slot, const RecordLocation& loc, std::span<const std::byte> buffer,
                std::vector<std::byte>* scratch, NodeRecordView* out) const;
  // Verifies `count` sectors of `buffer` read from sector `first`.
  Status Verify(std::uint64_t first, std::uint32_t count, std::span<const std::byte> buffer) const;

  // Synchronously reads sectors [first, first + count) into `buffer` (count *
  // kSector bytes, 4 KiB aligned) and verifies them; for loading caches.
  Status ReadSectors(std::uint64_t first, std::uint64_t count, std::span<std::byte> buffer) const;

 private:
  DirectFile file_;
  GraphLayout layout_;
};

}  // namespace strata::format

#endif  // STRATA_FORMAT_GRAPH_NODE_FILE_H_
