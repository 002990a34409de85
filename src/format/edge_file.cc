#include "format/edge_file.h"

#include <vector>

#include "base/aligned_buffer.h"
#include "format/le_coding.h"

namespace strata::format {
namespace {

constexpr std::size_t kFieldsSize = 24;

}  // namespace

Result<std::uint64_t> WriteEdgeFile(const std::string& path, std::uint32_t capacity,
                                    std::uint64_t num_vertices,
                                    std::span<const std::uint32_t> placement,
                                    const EdgeListSource& source, std::uint32_t vector_bytes,
                                    const EdgeVectorSource& vectors) {
  STRATA_ASSIGN_OR_RETURN(EdgePageGeometry g, EdgePageGeometry::ForCapacity(capacity, vector_bytes));
  if (vector_bytes > 0 && !vectors) {
    return Status::InvalidArgument("edge file: slots carry vectors but none are given");
  }
  if (num_vertices >= kNoVertex) {
    return Status::InvalidArgument("edge file: " + std::to_string(num_vertices) +
                                   " vertices exceed 32-bit ids");
  }
  std::vector<bool> placed(num_vertices, false);
  std::uint64_t count = 0;
  for (const std::uint32_t v : placement) {
    if (v == kNoVertex) continue;
    if (v >= num_vertices || placed[v]) {
      return Status::InvalidArgument("edge file: vertex " + std::to_string(v) +
                                     (v >= num_vertices ? " out of range" : " placed twice"));
    }
    placed[v] = true;
    ++count;
  }
  if (count != num_vertices) {
    return Status::InvalidArgument("edge file: " + std::to_string(num_vertices - count) +
                                   " vertices not placed");
  }

  // Pages as the lists' lengths cut them: a first pass over the degrees.
  std::vector<std::uint32_t> ids;
  std::uint64_t num_pages = 0;
  {
    std::size_t room = 0;  // on the current page; 0: none open
    for (const std::uint32_t v : placement) {
      if (v == kNoVertex) {
        room = 0;
        continue;
      }
      ids.clear();
      STRATA_RETURN_IF_ERROR(source(v, &ids));
      if (ids.size() > g.capacity) {
        return Status::InvalidArgument("edge file: vertex " + std::to_string(v) + " has " +
                                       std::to_string(ids.size()) + " edges, more than the " +
                                       std::to_string(g.capacity) + " a list holds");
      }
      const std::size_t bytes = g.ListBytes(ids.size());
      if (bytes > room) {
        ++num_pages;
        room = kEdgePageRoom;
      }
      room -= bytes;
    }
  }
  if (num_pages >= 0xFFFFFFFFull) return Status::InvalidArgument("edge file: too many pages");
  FileHeader header;
  header.kind = FileKind::kEdgePages;
  header.version = kEdgeFileVersion;
  header.num_sectors = 1 + num_pages;
  std::byte fields[kFieldsSize] = {};
  PutU32(fields, g.capacity);
  PutU32(fields + 4, g.vector_bytes);
  PutU64(fields + 8, num_vertices);
  PutU64(fields + 16, num_pages);
  STRATA_ASSIGN_OR_RETURN(SectorFileWriter writer, SectorFileWriter::Create(path, header, fields));
  std::vector<std::byte> vector(vector_bytes);
  EdgePageWriter page(g, writer.sector().first<kSectorPayload>());
  bool open = false;
  for (const std::uint32_t v : placement) {
    if (v == kNoVertex) {
      if (open) STRATA_RETURN_IF_ERROR(writer.AppendSector());
      open = false;
      continue;
    }
    ids.clear();
    STRATA_RETURN_IF_ERROR(source(v, &ids));
    if (open && !page.Fits(ids.size())) {
      STRATA_RETURN_IF_ERROR(writer.AppendSector());
      open = false;
    }
    if (!open) page.Clear(0);
    open = true;
    if (vector_bytes > 0) STRATA_RETURN_IF_ERROR(vectors(v, vector));
    STRATA_RETURN_IF_ERROR(page.Append(v, ids, vector).status());
  }
  if (open) STRATA_RETURN_IF_ERROR(writer.AppendSector());
  return writer.Commit();
}

Result<EdgeFile> EdgeFile::Open(const std::string& path, bool grown) {
  EdgeFile f;
  FileHeader header;
  std::string fields;
  std::uint64_t size = 0;
  STRATA_RETURN_IF_ERROR(OpenFixedSectorFile(path, FileKind::kEdgePages, kEdgeFileVersion,
                                             kFieldsSize, &f.file_, &header, &fields, grown,
                                             &size));
  if (header.version < kEdgeFileVersion) {
    return Status::NotSupported(path + ": edge file version " + std::to_string(header.version) +
                                " (fixed-width slots); rewrite the layout with this build "
                                "(strata decouple)");
  }
  f.growable_ = grown;
  f.file_pages_ = size / kSector - 1;
  const auto* p = reinterpret_cast<const std::byte*>(fields.data());
  auto geometry = EdgePageGeometry::ForCapacity(GetU32(p), GetU32(p + 4));
  if (!geometry.ok()) return Status::Corruption(path + ": " + geometry.status().message());
  f.geometry_ = *geometry;
  f.num_vertices_ = GetU64(p + 8);
  f.num_pages_ = GetU64(p + 16);
  if (header.num_sectors != 1 + f.num_pages_ ||
      f.num_vertices_ > f.num_pages_ * f.geometry_.slots_per_page) {
    return Status::Corruption(path + ": " + std::to_string(header.num_sectors) + " sectors hold " +
                              std::to_string(f.num_pages_) + " pages, " +
                              std::to_string(f.num_vertices_) + " vertices");
  }
  return f;
}

Result<EdgePageReader> EdgeFile::OpenPage(std::uint64_t page,
                                          std::span<const std::byte, kSector> sector) const {
  if (page == 0 || page > (growable_ ? kMaxGrownPage : num_pages_)) {
    return Status::InvalidArgument(path() + ": no edge page " + std::to_string(page));
  }
  STRATA_RETURN_IF_ERROR(VerifySector(sector, FileKind::kEdgePages, page, path()));
  auto reader = EdgePageReader::Open(
      geometry_, std::span<const std::byte, kSectorPayload>(sector.data(), kSectorPayload));
  if (!reader.ok()) return reader.status().WithContext(path() + " page " + std::to_string(page));
  return reader;
}

Result<EdgePageReader> EdgeFile::ReadPage(std::uint64_t page,
                                          std::span<std::byte, kSector> sector) const {
  if (page == 0 || page > (growable_ ? kMaxGrownPage : num_pages_)) {
    return Status::InvalidArgument(path() + ": no edge page " + std::to_string(page));
  }
  STRATA_RETURN_IF_ERROR(file_.ReadAt(page * kSector, sector));
  return OpenPage(page, sector);
}

namespace {

// Every vertex's slot on the pages [1, num_pages] that `keep` accepts;
// Corruption for a vertex out of range or placed twice. A page `keep`
// refuses after reading it is passed over; with `skip_damaged`, so is one
// that fails its check.
Status ScanPages(const EdgeFile& file, std::uint64_t num_vertices, bool skip_damaged,
                 const std::function<bool(const EdgePageReader&)>& keep,
                 std::vector<EdgeLocation>* where, std::uint64_t* found) {
  where->assign(num_vertices, EdgeLocation{});
  *found = 0;
  AlignedBuffer sector(kSector);
  auto span = std::span<std::byte, kSector>(sector.data(), kSector);
  for (std::uint64_t page = 1; page <= file.num_pages(); ++page) {
    auto read = file.ReadPage(page, span);
    if (!read.ok() && skip_damaged && read.status().code() == StatusCode::kCorruption) continue;
    STRATA_RETURN_IF_ERROR(read.status());
    const EdgePageReader& r = *read;
    if (!keep(r)) continue;
    for (std::uint32_t s = 0; s < r.slots(); ++s) {
      const std::uint32_t v = r.vertex(s);
      if (v == kNoVertex) continue;
      if (v >= num_vertices || (*where)[v].page != 0) {
        return Status::Corruption(file.path() + ": page " + std::to_string(page) + " slot " +
                                  std::to_string(s) + " holds vertex " + std::to_string(v) +
                                  (v >= num_vertices ? ", out of range" : ", placed twice"));
      }
      (*where)[v] = EdgeLocation{static_cast<std::uint32_t>(page), static_cast<std::uint16_t>(s), 0};
      ++*found;
    }
  }
  return Status::OK();
}

}  // namespace

Result<std::vector<EdgeLocation>> EdgeFile::ScanLocations() const {
  std::vector<EdgeLocation> where;
  std::uint64_t found = 0;
  STRATA_RETURN_IF_ERROR(ScanPages(*this, num_vertices_, /*skip_damaged=*/false,
                                   [](const EdgePageReader&) { return true; }, &where, &found));
  if (found != num_vertices_) {
    return Status::Corruption(path() + ": " + std::to_string(num_vertices_ - found) +
                              " vertices have no edge list");
  }
  return where;
}

Result<std::vector<EdgeLocation>> EdgeFile::ScanOriginalLocations() const {
  std::vector<EdgeLocation> where;
  std::uint64_t found = 0;
  STRATA_RETURN_IF_ERROR(ScanPages(*this, num_vertices_, /*skip_damaged=*/true,
                                   [](const EdgePageReader& r) { return r.epoch() == 0; }, &where,
                                   &found));
  return where;
}

}  // namespace strata::format
