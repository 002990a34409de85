// The edge file of the decoupled graph layout: a sector file of kind
// kEdgePages whose payload sectors are edge pages (edge_page.h), placed by
// locality (a vertex's page mates are those it is expanded with; the
// page-shuffle order), plus the RAM indirection table that says where each
// vertex's list is.
//
// Header fields (little-endian, after the sector file's fixed header):
//   capacity u32 | vector bytes per slot u32 (0: decoupled; else the packed
//   baseline, edge_page.h) | num_vertices u64 | num_pages u64
// Pages are sectors 1..num_pages. The indirection table is not stored: every
// slot names its vertex, so ScanLocations rebuilds it from the pages
// (sequential reads; a version whose lists have moved since is described by
// the collection's journal, not by this file).
#ifndef STRATA_FORMAT_EDGE_FILE_H_
#define STRATA_FORMAT_EDGE_FILE_H_

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "format/edge_page.h"
#include "strata/io.h"
#include "strata/result.h"

namespace strata::format {

// 2: slotted pages, lists packed by length (edge_page.h); 1 had
// fixed-width slots and is refused (NotSupported) rather than converted.
inline constexpr std::uint32_t kEdgeFileVersion = 2;

// Where a vertex's list is: its page (sector number, >= 1) and slot in the
// page's directory. 8 B of
// RAM per vertex in the indirection table.
struct alignas(8) EdgeLocation {
  std::uint32_t page = 0;  // 0: the vertex has no list
  std::uint16_t slot = 0;
  std::uint16_t reserved = 0;
};

// Fills `ids` (cleared by the caller) with `vertex`'s out-neighbours.
using EdgeListSource = std::function<Status(std::uint32_t vertex, std::vector<std::uint32_t>* ids)>;
// Fills `out` (vector_bytes) with `vertex`'s vector, for slots that carry it.
using EdgeVectorSource = std::function<Status(std::uint32_t vertex, std::span<std::byte> out)>;

// Writes the edge file atomically (temporary file, fsync, rename).
// `placement` holds the vertices in page order: a page takes them until the
// next list does not fit, and kNoVertex ends a page early (the page
// shuffle's groups; runs of it are one break). Every vertex below
// `num_vertices` exactly once, else InvalidArgument. With `vector_bytes` > 0 every slot carries
// its vertex's vector from `vectors` (the packed baseline). Returns the
// file's size in bytes.
Result<std::uint64_t> WriteEdgeFile(const std::string& path, std::uint32_t capacity,
                                    std::uint64_t num_vertices,
                                    std::span<const std::uint32_t> placement,
                                    const EdgeListSource& source, std::uint32_t vector_bytes = 0,
                                    const EdgeVectorSource& vectors = nullptr);

class EdgeFile {
 public:
  // NotFound / Corruption (header, size) / NotSupported (newer version).
  // With `grown`, the file may hold pages past its header's count, appended
  // by an in-place updater (it is then growable from the start).
  static Result<EdgeFile> Open(const std::string& path, bool grown = false);

  const EdgePageGeometry& geometry() const { return geometry_; }
  std::uint64_t num_vertices() const { return num_vertices_; }
  std::uint64_t num_pages() const { return num_pages_; }  // as written
  std::uint64_t file_pages() const { return file_pages_; }  // in the file at open
  const DirectFile& file() const { return file_; }
  const std::string& path() const { return file_.path(); }

  // Verifies page `page` read into `sector` and opens it.
  Result<EdgePageReader> OpenPage(std::uint64_t page,
                                  std::span<const std::byte, kSector> sector) const;
  // Synchronously reads page `page` into `sector` (4 KiB aligned) and opens it.
  Result<EdgePageReader> ReadPage(std::uint64_t page, std::span<std::byte, kSector> sector) const;
  // Pages past num_pages() are accepted from now on: an in-place updater
  // appends pages (update/in_place_updater.h). Call before readers exist.
  void set_growable() { growable_ = true; }
  // The indirection table of the file as written: every vertex's location.
  // Corruption when a vertex is out of range, placed twice or missing.
  Result<std::vector<EdgeLocation>> ScanLocations() const;
  // The same for a file an in-place updater has changed since: the lists
  // still where the file was written (pages of write epoch 0; a page the
  // updater took again carries a later epoch, or fails its check if a crash
  // tore its rewrite, and is passed over). Vertices whose lists moved are
  // left at page 0: the collection's journal says where they are now.
  Result<std::vector<EdgeLocation>> ScanOriginalLocations() const;

 private:
  DirectFile file_;
  EdgePageGeometry geometry_;
  std::uint64_t num_vertices_ = 0;
  std::uint64_t num_pages_ = 0;
  std::uint64_t file_pages_ = 0;
  bool growable_ = false;
  static constexpr std::uint64_t kMaxGrownPage = 0xFFFFFFFEu;
};

}  // namespace strata::format

#endif  // STRATA_FORMAT_EDGE_FILE_H_
