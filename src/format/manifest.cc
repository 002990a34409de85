#include "format/manifest.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "base/checksum.h"
#include "strata/io.h"

namespace strata::format {
namespace {

constexpr std::uint64_t kManifestSeed = 0x4d414e4946455354ull;  // "MANIFEST"

nlohmann::json ToJson(const Manifest& m) {
  nlohmann::json files = nlohmann::json::array();
  for (const auto& f : m.files) {
    files.push_back({{"name", f.name}, {"bytes", f.bytes}, {"checksum", f.checksum}});
  }
  return {{"format_version", m.format_version},
          {"index_type", m.index_type},
          {"metric", std::string(MetricName(m.metric))},
          {"element_type", std::string(ElementTypeName(m.element_type))},
          {"dim", m.dim},
          {"num_vectors", m.num_vectors},
          {"parameters", m.parameters},
          {"build", m.build},
          {"files", files}};
}

std::uint64_t JsonChecksum(const nlohmann::json& j) {
  const std::string dump = j.dump();
  return Checksum64(dump.data(), dump.size(), kManifestSeed);
}

}  // namespace

const ManifestFile* Manifest::Find(const std::string& name) const {
  for (const auto& f : files) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

Status ChecksumFile(const std::string& path, std::uint64_t* bytes, std::uint64_t* checksum) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::FromErrno("open " + path, errno);
  // Sequential whole-file read: tell the kernel, and drop the pages after, so
  // checksumming an index does not leave it in the page cache.
  posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
  ChecksumStream stream;
  std::vector<char> buf(4u << 20);
  std::uint64_t total = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      return Status::FromErrno("read " + path, err);
    }
    if (n == 0) break;
    stream.Update(buf.data(), static_cast<std::size_t>(n));
    total += static_cast<std::uint64_t>(n);
  }
  posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  *bytes = total;
  *checksum = stream.Digest();
  return Status::OK();
}

Status WriteManifest(const std::string& dir, const Manifest& manifest) {
  nlohmann::json j = ToJson(manifest);
  j["manifest_checksum"] = JsonChecksum(j);
  const std::string text = j.dump(2) + "\n";
  STRATA_ASSIGN_OR_RETURN(AtomicFileWriter writer,
                          AtomicFileWriter::Create(dir + "/" + kManifestName,
                                                   {.use_direct_io = false}));
  STRATA_RETURN_IF_ERROR(writer.Append(std::as_bytes(std::span<const char>(text))));
  return writer.Commit();
}

Result<Manifest> ReadManifest(const std::string& dir) {
  const std::string path = dir + "/" + kManifestName;
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return Status::NotFound(dir + " is not a Strata index (no " + kManifestName + ")");
  }
  FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return Status::FromErrno("open " + path, errno);
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  const std::size_t got = std::fread(text.data(), 1, text.size(), f);
  std::fclose(f);
  if (got != text.size()) return Status::IOError("short read of " + path);
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) return Status::Corruption(path + ": not valid JSON");
  if (!j.contains("manifest_checksum") || !j["manifest_checksum"].is_number_unsigned()) {
    return Status::Corruption(path + ": missing manifest_checksum");
  }
  const std::uint64_t want = j["manifest_checksum"].get<std::uint64_t>();
  j.erase("manifest_checksum");
  if (JsonChecksum(j) != want) return Status::Corruption(path + ": manifest checksum mismatch");

  Manifest m;
  // Field access without exceptions: check presence and type first.
  auto need = [&](const char* key, bool (nlohmann::json::*is)() const noexcept) -> Status {
    if (!j.contains(key) || !(j[key].*is)()) {
      return Status::Corruption(path + ": missing or malformed field '" + key + "'");
    }
    return Status::OK();
  };
  STRATA_RETURN_IF_ERROR(need("format_version", &nlohmann::json::is_number_unsigned));
  STRATA_RETURN_IF_ERROR(need("index_type", &nlohmann::json::is_string));
  STRATA_RETURN_IF_ERROR(need("metric", &nlohmann::json::is_string));
  STRATA_RETURN_IF_ERROR(need("element_type", &nlohmann::json::is_string));
  STRATA_RETURN_IF_ERROR(need("dim", &nlohmann::json::is_number_unsigned));
  STRATA_RETURN_IF_ERROR(need("num_vectors", &nlohmann::json::is_number_unsigned));
  STRATA_RETURN_IF_ERROR(need("parameters", &nlohmann::json::is_object));
  STRATA_RETURN_IF_ERROR(need("files", &nlohmann::json::is_array));
  m.format_version = j["format_version"].get<std::uint32_t>();
  if (m.format_version > kManifestVersion) {
    return Status::NotSupported(path + ": manifest version " + std::to_string(m.format_version) +
                                " is newer than this build reads (" +
                                std::to_string(kManifestVersion) + ")");
  }
  m.index_type = j["index_type"].get<std::string>();
  auto metric = ParseMetric(j["metric"].get<std::string>());
  if (!metric.ok()) return Status::Corruption(path + ": " + metric.status().message());
  m.metric = *metric;
  auto type = ParseElementType(j["element_type"].get<std::string>());
  if (!type.ok()) return Status::Corruption(path + ": " + type.status().message());
  m.element_type = *type;
  m.dim = j["dim"].get<std::uint32_t>();
  m.num_vectors = j["num_vectors"].get<std::uint64_t>();
  m.parameters = j["parameters"];
  if (j.contains("build") && j["build"].is_object()) m.build = j["build"];
  for (const auto& fj : j["files"]) {
    if (!fj.is_object() || !fj.contains("name") || !fj["name"].is_string() ||
        !fj.contains("bytes") || !fj["bytes"].is_number_unsigned() || !fj.contains("checksum") ||
        !fj["checksum"].is_number_unsigned()) {
      return Status::Corruption(path + ": malformed file entry");
    }
    ManifestFile file{fj["name"].get<std::string>(), fj["bytes"].get<std::uint64_t>(),
                      fj["checksum"].get<std::uint64_t>()};
    struct stat fst;
    const std::string fpath = dir + "/" + file.name;
    if (::stat(fpath.c_str(), &fst) != 0) {
      return Status::Corruption(dir + ": index file " + file.name + " is missing");
    }
    if (static_cast<std::uint64_t>(fst.st_size) != file.bytes) {
      return Status::Corruption(fpath + ": size " + std::to_string(fst.st_size) +
                                " differs from the manifest's " + std::to_string(file.bytes));
    }
    m.files.push_back(std::move(file));
  }
  return m;
}

Status VerifyManifestFiles(const std::string& dir, const Manifest& manifest) {
  for (const auto& f : manifest.files) {
    std::uint64_t bytes = 0, sum = 0;
    STRATA_RETURN_IF_ERROR(ChecksumFile(dir + "/" + f.name, &bytes, &sum));
    if (bytes != f.bytes || sum != f.checksum) {
      return Status::Corruption(dir + "/" + f.name + ": checksum differs from the manifest");
    }
  }
  return Status::OK();
}

}  // namespace strata::format
