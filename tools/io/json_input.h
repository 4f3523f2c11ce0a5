// Reading values that arrive as JSON (command-line --meta/--payload/--vector and
// ingest lines): parse errors and wrong types become InvalidArgument naming `what`.
#ifndef AMEM_TOOLS_IO_JSON_INPUT_H_
#define AMEM_TOOLS_IO_JSON_INPUT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace amem::io {

// Parses `text` as one JSON document within ParseJsonLimited's limits (nesting at
// most kMaxJsonDepth, finite numbers). With `reject_duplicate_keys`, a key repeated
// in the top-level object is an error (it would otherwise silently win).
Result<nlohmann::json> ParseJson(std::string_view text, std::string_view what,
                                 bool reject_duplicate_keys = false);

// `v` as a finite f32 ("confidence", "weight"); NaN, infinities and values outside
// the f32 range are errors.
Result<float> FiniteFloat(double v, std::string_view what);
Result<float> FiniteFloatFromJson(const nlohmann::json& v, std::string_view what);
// A JSON array of finite numbers as f32.
Result<std::vector<float>> VectorFromJson(const nlohmann::json& v, std::string_view what);
// A vector given as JSON text ("[0.1, 0.2]", e.g. --vector): ParseJson, then
// VectorFromJson ("[]" is the empty vector: a node without one). Every front end
// reads vectors through VectorFromJson.
Result<std::vector<float>> VectorFromText(std::string_view text, std::string_view what);
// A JSON integer that fits in i64.
Result<int64_t> Int64FromJson(const nlohmann::json& v, std::string_view what);
// A JSON number as i64 for an argument already checked to be an integer: a float
// truncated, an unsigned value above INT64_MAX clamped to it (never wrapped).
template <typename BasicJson>
int64_t ClampedInt64(const BasicJson& v) {
  if (v.is_number_float()) return static_cast<int64_t>(v.template get<double>());
  if (v.is_number_unsigned()) {
    const uint64_t u = v.template get<uint64_t>();
    return u > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(u);
  }
  return v.template get<int64_t>();
}
// A JSON string.
Result<std::string> StringFromJson(const nlohmann::json& v, std::string_view what);
// A JSON object, as compact JSON text with sorted keys.
Result<std::string> ObjectTextFromJson(const nlohmann::json& v, std::string_view what);

}  // namespace amem::io

#endif  // AMEM_TOOLS_IO_JSON_INPUT_H_
