// One renderer shared by every query (docs/QUERIES.md): a query builds its answer as an
// ordered JSON document with stable field names, and Render() turns that document
// into either the `--json` output (one JSON document) or plain text for people.
//
// Document conventions every query follows, so that the text form reads well:
//   - the first field is "query": the CLI name ("traverse", "path", ...);
//   - a node is an object with the NodeRow fields index, id, key, type, preview
//     (NodeRowJson); extra per-row fields (depth, score, ...) sit beside them;
//   - an edge is an object {"src": key, "rel": name, "dst": key, ...} (EdgeJson);
//   - lists of rows are arrays; summary values are scalars.
// Field order is insertion order (ordered_json), so output never depends on hashing.
#ifndef AMEM_QUERY_RENDER_H_
#define AMEM_QUERY_RENDER_H_

#include <cstdint>
#include <string>
#include <string_view>

// Only the declarations: the documents are built in query/json/ (and by the front
// ends), which include <nlohmann/json.hpp> themselves. Parsing the whole header
// cost each query source two thirds of its compile time.
#include <nlohmann/json_fwd.hpp>

#include "query/query.h"

namespace amem::query {

using Json = nlohmann::ordered_json;

enum class Format : uint8_t { kText, kJson };

// {"index", "id" (16 hex digits: a u64 does not fit a JSON double), "key", "type",
// "preview"}.
Json NodeRowJson(const NodeRow& row);

// {"src": src_key, "rel": rel_name, "dst": dst_key, "weight": weight}.
Json EdgeJson(std::string_view src_key, std::string_view rel, std::string_view dst_key,
              float weight);

// The same for node `index` / edge number `edge` of a snapshot.
// REQUIRES: index < reader.node_count(), edge < reader.edge_count().
Json NodeJson(const snapshot::Reader& reader, uint32_t index);
Json EdgeJson(const snapshot::Reader& reader, uint32_t edge);

// The whole answer, newline-terminated. Json: compact one-line document (invalid
// UTF-8, which a validated snapshot never holds, is replaced rather than thrown).
// Text: "name: value" lines for scalars, a "name (N):" header then one indented line
// per element for arrays; a node renders as `key (type #index) "preview"`, an edge
// as `src --rel--> dst`, other fields as `name=value`.
std::string Render(const Json& doc, Format format);
std::string RenderText(const Json& doc);
std::string RenderJson(const Json& doc);

}  // namespace amem::query

#endif  // AMEM_QUERY_RENDER_H_
