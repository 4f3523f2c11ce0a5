// Checks tool arguments against the tool's JSON Schema, so every tool validates its
// input the same way and the schema a model reads is the one that is enforced.
//
// The supported subset (all the tools use): type (one name or a list), properties,
// required, additionalProperties (false or a schema), items, enum, minimum, maximum, minLength,
// maxLength (in characters), minItems, maxItems. Other keywords (description,
// default, ...) are ignored.
#ifndef AMEM_TOOLS_MCP_SCHEMA_H_
#define AMEM_TOOLS_MCP_SCHEMA_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/status.h"
#include "tools/mcp/tool.h"

namespace amem::mcp {

// OK, or InvalidArgument naming the first offending place and what is expected,
// e.g. "entities[2].name: expected a string, got a number".
Status ValidateAgainstSchema(const Json& schema, const Json& value);

// Accessors for validated arguments: the value when present, else `fallback`.
// REQUIRES: the value, when present, has the type the schema declares.
std::string ArgString(const Json& args, std::string_view name, std::string_view fallback = {});
int64_t ArgInt(const Json& args, std::string_view name, int64_t fallback);
double ArgNumber(const Json& args, std::string_view name, double fallback);
bool ArgBool(const Json& args, std::string_view name, bool fallback);
bool HasArg(const Json& args, std::string_view name);

}  // namespace amem::mcp

#endif  // AMEM_TOOLS_MCP_SCHEMA_H_
