// Store records rendered for people (text) and programs (JSON), shared by the CLI
// commands and the MCP server. Field names are stable (README.md, "JSON output").
//
// JSON fields:
//   node:   id (16 hex digits), key, type, content, meta (object), confidence, scope,
//           run, task, created_ts, updated_ts, rev, vector (array, or null)
//   edge:   src, src_id, rel, dst, dst_id, weight, payload, run, task, created_ts,
//           updated_ts, rev
//   kv:     scope, ns, key, value, run, task, ts, rev (+ deleted in histories)
//   change: rev, ts, kind, overwrite, and key | src, rel, dst | scope, ns, key |
//           name (define_relation), run, task
#ifndef AMEM_TOOLS_IO_JSON_RECORDS_H_
#define AMEM_TOOLS_IO_JSON_RECORDS_H_

#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "snapshot/export.h"
#include "store/store.h"

namespace amem::io {

// The shortest decimal text that reads back as the same f32 ("0.9", not
// "0.899999976").
std::string FormatFloat(float v);
// The same value as a JSON number with that short form.
nlohmann::ordered_json FloatJson(float v);

// Meta and payload are stored as canonical JSON text: that text as a JSON value
// (a string if it does not parse).
nlohmann::ordered_json EmbeddedJson(const std::string& text);

// `s` on one line: backslash, newline, carriage return and tab escaped as \\ \n \r \t.
std::string OneLine(std::string_view s);

nlohmann::ordered_json NodeToJson(const NodeRecord& node);
nlohmann::ordered_json EdgeToJson(const EdgeRecord& edge);
nlohmann::ordered_json KvToJson(const KvRecord& kv, bool with_deleted = false);
nlohmann::ordered_json ChangeToJson(const Change& change);
nlohmann::ordered_json StatsToJson(const StoreStats& stats);
nlohmann::ordered_json CompactReportToJson(const CompactReport& report);
// What `amem export` (and the MCP export_snapshot tool) wrote: path, revision,
// revision_ts, nodes, stubs, edges, kv, bytes.
nlohmann::ordered_json ExportResultToJson(const std::string& path,
                                          const snapshot::ExportResult& result);

// "name: value" lines; multi-line content is indented under its label.
void AppendNodeText(const NodeRecord& node, std::string* out);
// One line: "SRC --rel--> DST  weight=W rev=R[ payload=...]".
void AppendEdgeLine(const EdgeRecord& edge, std::string* out);
void AppendKvText(const KvRecord& kv, std::string* out);
// One line: "rev R ts T [run ..] [task ..] VALUE" or "... (deleted)".
void AppendKvVersionLine(const KvRecord& kv, std::string* out);
// One line: "rev R ts T KIND WHAT[ (overwrite)][ run ..][ task ..]".
void AppendChangeLine(const Change& change, std::string* out);
void AppendStatsText(const StoreStats& stats, std::string* out);
void AppendCompactReportText(const CompactReport& report, std::string* out);

}  // namespace amem::io

#endif  // AMEM_TOOLS_IO_JSON_RECORDS_H_
