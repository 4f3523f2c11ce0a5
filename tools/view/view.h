// `amem view` (docs/VIEW.md): a query's answer, or a whole small store, drawn as a
// graph. A Subgraph is what every format draws: the nodes the answer names, in the
// order it first names them, each with its record from the snapshot, and every edge
// of the snapshot between two of them. One writer per format turns it into bytes;
// the same subgraph always gives the same bytes (no wall clock, no hashing order).
#ifndef AMEM_TOOLS_VIEW_VIEW_H_
#define AMEM_TOOLS_VIEW_VIEW_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "query/render.h"

namespace amem {
class Store;
}  // namespace amem
namespace amem::snapshot {
class Reader;
}  // namespace amem::snapshot

namespace amem::view {

enum class Format { kHtml, kDot, kMermaid, kGraphml };

// "html", "dot", "mermaid", "graphml"; InvalidArgument naming them otherwise.
Result<Format> ParseFormat(std::string_view name);
const char* FormatName(Format format);
// The format `--out` implies when no --format is given: html for a name ending in
// .html or .htm, mermaid for .mmd, graphml for .graphml, else dot.
Format DefaultFormat(std::string_view out_path);

// The largest store `amem view --all` draws (past it: InvalidArgument saying so).
inline constexpr uint32_t kMaxAllNodes = 2000;
inline constexpr uint32_t kMaxAllEdges = 10000;
// A node's content is cut to this many bytes (on a character boundary) in a view.
inline constexpr size_t kMaxContentBytes = 2000;

// What the header of a view names.
struct Header {
  std::string query;   // "impact"; "" for --all
  std::string args;    // the arguments as given, e.g. "fact:x --depth 2" or "--all"
  std::string source;  // "revision 12, committed 2023-11-14T22:13:20Z" or "snapshot FILE"
};

struct Node {
  uint32_t index = 0;  // in the snapshot
  std::string id, key, type;
  // The answer's field that first named it ("root", "dependents", "added", ...);
  // "node" for --all.
  std::string role;
  std::optional<int64_t> depth;  // the row's "depth", when it has one
  // The row's other scalar fields (score, falls, ...), as text, in answer order.
  std::vector<std::pair<std::string, std::string>> fields;
  std::string content;  // at most kMaxContentBytes, then "…"
  std::string meta;     // flat JSON object
  float confidence = 0;
  std::string run, task, scope;
  int64_t created_ts = 0, updated_ts = 0;
  // The revision of the node's last write as of the view (AddRevisions); none when
  // drawn from a snapshot file, which holds no revisions.
  std::optional<uint64_t> revision;
};

struct Edge {
  uint32_t src = 0, dst = 0;  // positions in Subgraph::nodes
  std::string rel;
  float weight = 0;
  bool in_answer = false;  // the answer names it (a path step, a traversal's via)
};

struct Subgraph {
  Header header;
  std::vector<Node> nodes;
  std::vector<Edge> edges;  // by (src index, rel, dst index) in the snapshot
};

// The subgraph of a query's answer (query/render.h's document conventions: a node
// is an object with index/id/key/type, an edge one with src/rel/dst).
Result<Subgraph> FromAnswer(const snapshot::Reader& reader, const query::Json& answer,
                            Header header);
// Every node and edge of the snapshot; InvalidArgument past kMaxAllNodes or
// kMaxAllEdges.
Result<Subgraph> WholeGraph(const snapshot::Reader& reader, Header header);

// "2023-11-14T22:13:20Z" (UTC) for a timestamp in seconds.
std::string FormatTime(int64_t ts);
// The header's source for revision `rev` of `store`: "revision R, committed T"
// (the revision's commit time, never the clock; without it when the revision's
// log was compacted away).
std::string RevisionSource(const Store& store, uint64_t rev);
// Sets each node's revision: that of its last write in `store` as of revision
// `rev` (the revision the view was read at). A node the store lacks keeps none.
Status AddRevisions(const Store& store, uint64_t rev, Subgraph* g);

// The writers. Identifiers are "n" + the node's index; every label is escaped for
// its format, so no stored string can break the output.
std::string WriteDot(const Subgraph& g);
std::string WriteMermaid(const Subgraph& g);
std::string WriteGraphml(const Subgraph& g);
// NotSupported, saying how to get the library, when the build embedded none.
Result<std::string> WriteHtml(const Subgraph& g);
Result<std::string> Write(const Subgraph& g, Format format);

// The JSON text placed in a <script type="application/json"> block: `<`, `>`, `&`,
// U+2028 and U+2029 written as \u escapes, so no string closes the tag.
std::string ScriptSafeJson(const query::Json& value);

}  // namespace amem::view

#endif  // AMEM_TOOLS_VIEW_VIEW_H_
