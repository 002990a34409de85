// The mapping between Qdrant's REST JSON and Strata's collection types: point
// ids (unsigned or UUID), distances -> Qdrant scores, payload projection,
// filter rewriting and the response envelope. Pure functions, unit tested.
#ifndef STRATA_SERVER_QDRANT_JSON_H_
#define STRATA_SERVER_QDRANT_JSON_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "strata/result.h"
#include "strata/status.h"
#include "strata/types.h"

namespace strata::server {

using json = nlohmann::json;

// Payload key under which a UUID point keeps its original id, so responses
// return the UUID (stripped from returned payloads).
inline constexpr const char* kUuidKey = "__strata_uuid";

struct PointId {
  VectorId id = 0;
  std::optional<std::string> uuid;  // canonical lower-case form, when given as UUID
};

// An unsigned integer, or a UUID string (hex, with or without dashes) mapped
// to 64 bits deterministically: an FNV-1a hash of its 16 bytes. Collisions
// with other ids are possible (2^-64 per pair); the UUID in the payload
// tells them apart on the way out.
Result<PointId> ParsePointId(const json& j);
// The id as a response carries it: the UUID string if any, else the number.
json PointIdJson(VectorId id, const std::string& payload);

// Qdrant's distance names <-> Strata metrics.
Result<Metric> MetricFromQdrant(const std::string& distance);
std::string QdrantDistanceName(Metric metric);
// Strata's distance (ascending) -> Qdrant's score: Cosine similarity, dot
// product, Euclidean distance.
float ScoreFromDistance(Metric metric, float distance);
// Whether `score` passes score_threshold (Euclid: at most it; else at least it).
bool PassesThreshold(Metric metric, float score, float threshold);

// The payload to return for `with_payload` (true/false/[keys]/{include, exclude}),
// without kUuidKey; null when not asked for.
Result<json> ProjectPayload(const json& with_payload, const std::string& payload);
// Whether with_payload asks for any payload.
bool WantsPayload(const json& with_payload);

// The payload JSON text stored for a point: `payload` (object or null) plus
// kUuidKey for a UUID point. InvalidArgument for a non-object payload.
Result<std::string> StoredPayload(const json& payload, const PointId& id);

// Filter JSON ready for PayloadFilter::Parse: UUIDs in has_id replaced by
// their mapped ids. InvalidArgument past `max_depth` levels of nesting.
Result<std::string> PrepareFilter(const json& filter, std::uint32_t max_depth);

// InvalidArgument if the JSON text nests objects/arrays deeper than
// `max_depth`. A scan of the text, before it is parsed: a parsed tree that
// deep would cost memory per level and recursion (dump, compare) per level,
// which a body of brackets could drive past the stack.
Status CheckJsonDepth(std::string_view text, std::uint32_t max_depth);

// A JSON number as a float: InvalidArgument for a non-number, or one outside
// float's finite range (the conversion would be undefined).
Result<float> FloatOf(const json& j, const char* what);

// Whether `j` is a non-negative integer (JSON text gives unsigned numbers,
// code-built JSON signed ones: both count).
bool IsUnsigned(const json& j);

// Qdrant's envelopes.
json OkBody(json result, double seconds);
json ErrorBody(const std::string& message, double seconds);

}  // namespace strata::server

#endif  // STRATA_SERVER_QDRANT_JSON_H_
