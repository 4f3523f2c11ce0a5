// Parsing JSON that arrives from outside (ingest lines, MCP messages, --meta and
// --payload values, stored meta and payloads) with the limits every such input
// gets: nesting is bounded while parsing, so no later recursive copy, dump or
// comparison can exhaust the stack; numbers must be finite doubles.
#ifndef AMEM_COMMON_JSON_PARSE_H_
#define AMEM_COMMON_JSON_PARSE_H_

#include <cstddef>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace amem {

// The deepest nesting of arrays and objects any JSON input may have: a top-level
// object is depth 1, an array inside it depth 2. docs/STORE.md and docs/MCP.md
// state it.
inline constexpr size_t kMaxJsonDepth = 64;
// What the error for input nested deeper than the limit says.
inline constexpr std::string_view kJsonTooDeep = "nested deeper than";

struct JsonParseOptions {
  size_t max_depth = kMaxJsonDepth;
  // A key repeated in the top-level object is an error (it would otherwise
  // silently win over the first).
  bool reject_duplicate_top_keys = false;
  // Non-empty: a member of this name whose value is a number that is not an
  // integer nlohmann keeps exactly (a fraction, an exponent, or an integer beyond
  // 64 bits) is kept as its literal text, stored as a binary value, when it sits
  // in the top-level object or in an object that is an element of a top-level
  // array. JSON-RPC ids are echoed exactly this way (tools/mcp/server.cc).
  std::string_view literal_number_member;
};

// Parses `text` as one JSON document. Errors are InvalidArgument: "<what>: <why>",
// the why without nlohmann's exception prefix; nesting deeper than
// options.max_depth says "nested deeper than N levels".
// JsonT is nlohmann::json or nlohmann::ordered_json.
template <typename JsonT = nlohmann::json>
Result<JsonT> ParseJsonLimited(std::string_view text, std::string_view what,
                               const JsonParseOptions& options = {});

extern template Result<nlohmann::json> ParseJsonLimited(std::string_view, std::string_view,
                                                        const JsonParseOptions&);
extern template Result<nlohmann::ordered_json> ParseJsonLimited(std::string_view,
                                                                std::string_view,
                                                                const JsonParseOptions&);

}  // namespace amem

#endif  // AMEM_COMMON_JSON_PARSE_H_
