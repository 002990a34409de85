// Input files and reports of `strata collection` (and `strata info` on a
// collection directory): id lists, payload lines, and CollectionStats as text
// or JSON. Public API only (include/strata/).
#ifndef STRATA_TOOLS_CLI_COLLECTION_IO_H_
#define STRATA_TOOLS_CLI_COLLECTION_IO_H_

#include <cstdint>
#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "strata/collection.h"
#include "strata/dataset.h"
#include "strata/filter.h"
#include "strata/result.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata::cli {

// Reads a list of vector ids from `path`, in file order:
//   .ibin / .ivecs  one column (n x 1) or one row (1 x n) of ids (the
//                   ground-truth layout of strata/dataset.h; ids < 2^32)
//   .npy            a 1-D array, or n x 1 / 1 x n, of int64 ('<i8'), uint64
//                   ('<u8'), int32 ('<i4') or uint32 ('<u4'); C or Fortran
//                   order (the same bytes for these shapes)
//   anything else   text: one unsigned decimal id per line; blank lines and
//                   surrounding white space are ignored
// InvalidArgument naming the file and the entry (row or line) for a negative
// or malformed id, or a shape that is not one column; NotFound / IOError /
// Corruption / NotSupported as the dataset readers report them.
Result<std::vector<VectorId>> ReadIdsFile(const std::string& path);

// Streams payloads from a text file of one line per vector (JSON lines; each
// line is stored as its bytes, without the line end; a trailing '\r' is
// dropped; an empty line means "no payload"). Not thread-safe.
class PayloadReader {
 public:
  // Opens `path` and counts its lines (a last line without '\n' counts).
  static Result<std::unique_ptr<PayloadReader>> Open(const std::string& path);
  std::uint64_t lines() const { return lines_; }
  // Replaces `out` with the next `count` lines; OutOfRange past the end.
  Status Next(std::uint64_t count, std::vector<std::string>* out);

 private:
  PayloadReader(std::string path, std::uint64_t lines);
  std::string path_;
  std::uint64_t lines_ = 0;
  std::uint64_t read_ = 0;
  std::ifstream in_;
};

// The value of a --filter flag: Qdrant filter JSON, or @FILE holding it.
// Errors say "--filter: ..." (NotFound for an unreadable file).
Result<PayloadFilter> ParseFilterArgument(const std::string& arg);

// "1.5 KiB" / "3.2 MiB" / "1.1 GiB".
std::string FormatBytes(std::uint64_t bytes);

// Multi-line text rendering of `stats` for the collection in `dir`, written
// to `out`, each line indented by `indent` spaces after the first.
void PrintCollectionStats(const std::string& dir, const CollectionStats& stats, std::FILE* out,
                          int indent = 2);
// Every field of `stats`, under its C++ name (metric and element type as
// their names).
nlohmann::json CollectionStatsToJson(const CollectionStats& stats);

// The shortest decimal text that reads back as exactly `v` (C++ to_chars).
std::string FloatText(float v);
// `v` as a double holding the float's shortest digits, so JSON prints
// 0.8105941 and not the widened 0.8105941414833069.
double JsonFloat(float v);
// A vector as a JSON array of JsonFloat values.
nlohmann::json VectorJson(std::span<const float> v);
// A vector as space-separated FloatText values.
std::string FormatVector(std::span<const float> v);
// A payload as JSON: parsed when it is valid JSON, else its bytes as a string.
nlohmann::json PayloadJson(const std::string& payload);

// Search hits in the results layout of strata/dataset.h (num_queries x k,
// for WriteGroundTruth and ComputeRecall); a query with fewer than k hits
// has id 2^32-1 and distance FLT_MAX in the missing slots.
GroundTruth HitsToResults(const std::vector<std::vector<SearchHit>>& hits, std::uint32_t k);
// One query's hits as [{id, distance[, payload]}].
nlohmann::json HitsJson(const std::vector<SearchHit>& hits, bool with_payload);

// Opens an existing collection in `dir` with `options` (create_if_missing
// and error_if_exists are forced off). A directory that holds an index and
// not a collection, or no collection at all, gets a message saying so.
Result<std::unique_ptr<Collection>> OpenExistingCollection(const std::string& dir,
                                                           CollectionOptions options);

}  // namespace strata::cli

#endif  // STRATA_TOOLS_CLI_COLLECTION_IO_H_
