// The manifest of an index directory: `manifest.json`, the first file read at
// open and the last one written at build (its atomic rename publishes the
// index). It records the format version, index type, metric, element type,
// dimension, counts, build parameters and statistics, and every data file with
// its size and XXH3-64 checksum. The JSON carries its own checksum
// ("manifest_checksum", XXH3-64 of the compact dump of every other field), so a
// hand-edited or damaged manifest is reported, not trusted.
#ifndef STRATA_FORMAT_MANIFEST_H_
#define STRATA_FORMAT_MANIFEST_H_

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strata/result.h"
#include "strata/types.h"

namespace strata::format {

inline constexpr std::uint32_t kManifestVersion = 1;
inline constexpr const char* kManifestName = "manifest.json";

struct ManifestFile {
  std::string name;           // relative to the index directory
  std::uint64_t bytes = 0;
  std::uint64_t checksum = 0; // XXH3-64 of the whole file
};

struct Manifest {
  std::uint32_t format_version = kManifestVersion;
  std::string index_type;     // "graph" or "ivf"
  Metric metric = Metric::kL2;
  ElementType element_type = ElementType::kFloat32;
  std::uint32_t dim = 0;
  std::uint64_t num_vectors = 0;
  nlohmann::json parameters = nlohmann::json::object();  // build parameters
  nlohmann::json build = nlohmann::json::object();       // build statistics
  std::vector<ManifestFile> files;

  const ManifestFile* Find(const std::string& name) const;
};

// XXH3-64 and size of a whole file (buffered sequential read).
Status ChecksumFile(const std::string& path, std::uint64_t* bytes, std::uint64_t* checksum);

// Writes `dir`/manifest.json atomically.
Status WriteManifest(const std::string& dir, const Manifest& manifest);

// Reads and validates `dir`/manifest.json: NotFound if there is none (with a
// hint that `dir` is not an index), Corruption on bad JSON, a checksum
// mismatch or missing fields, NotSupported for a newer format version. Also
// checks that every listed file exists with its recorded size.
Result<Manifest> ReadManifest(const std::string& dir);

// Recomputes every file's checksum (reads everything): Corruption naming the
// first file whose checksum differs.
Status VerifyManifestFiles(const std::string& dir, const Manifest& manifest);

}  // namespace strata::format

#endif  // STRATA_FORMAT_MANIFEST_H_
