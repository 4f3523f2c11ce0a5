// The 16 queries of docs/QUERIES.md as one table that both front ends read: each
// query's name in each front end, its help, every parameter once (name, type,
// range, default, help) and the one function that runs it. `amem traverse NODE
// --depth 2` and the MCP tool call traverse {"node": ..., "depth": 2} become the
// same arguments object and run the same code.
//
// Defaults live in the query's Options struct (query/*.h): a parameter's
// default_text is printed from it, and the run function starts from a
// default-constructed Options and overrides only what the arguments give.
//
// The CLI (tools/cli/cmd_query.cc) turns each Param into a flag or positional
// argument (CLI11 checks types, choices and ranges), collects what was given into a
// JSON object named as MCP names it, and calls run. The MCP server
// (tools/mcp/query_tools.cc) turns each Param into a JSON Schema property
// (tools/mcp/schema.h checks it) and calls run with the tool's arguments.
#ifndef AMEM_TOOLS_IO_QUERY_TABLE_H_
#define AMEM_TOOLS_IO_QUERY_TABLE_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/status.h"
#include "store/store.h"

namespace amem::snapshot {
class Reader;
}  // namespace amem::snapshot

namespace amem::io {

using QueryJson = nlohmann::ordered_json;

enum class FrontEnd { kCli, kMcp };

// The JSON type of a parameter's value.
enum class ParamType {
  kString,   // with `choices`, one of them
  kInteger,  // i64
  kNumber,   // finite double
  kBoolean,  // a CLI flag
  kStrings,  // a list of strings (CLI: repeat, or comma-separate unless kNodes)
  kVector,   // a non-empty list of numbers (CLI: JSON text, e.g. '[0.1, 0.2]')
};

// What a parameter's strings name: it adds to the help (what a node reference
// may be, the built-in relations) and to the MCP schema (the node type names).
enum class ParamRole {
  kPlain,
  kNode,       // kString: a key, a 16-hex-digit id or #N
  kNodes,      // kStrings of node references
  kTypes,      // kStrings of node type names
  kRelations,  // kStrings of relation names or ids
  kWords,      // kString; the CLI takes the words as positional arguments, joined
  kFileText,   // kString of text; the CLI takes a file to read it from (- for stdin)
};

enum class ParamScope { kBoth, kCliOnly, kMcpOnly };

struct Param {
  std::string name{};  // the argument's name, snake_case (MCP's; the CLI's flag by default)
  ParamType type = ParamType::kString;
  ParamRole role = ParamRole::kPlain;
  std::string help{};        // one phrase, no final period; the default is appended
  std::string brief{};       // MCP's help when the CLI's is long: a few words
  std::string default_text{};  // "(default X)"; empty: no default is shown
  std::optional<double> min{}, max{};      // numbers, in both front ends
  std::optional<double> mcp_min{}, mcp_max{};  // MCP only (answer-size caps, e.g. limit)
  std::optional<int> max_items{};          // lists, MCP only
  std::vector<std::string> choices{};      // kString: the accepted values
  // The CLI spelling when not "--" + name with '_' as '-': "--rel", or an upper-case
  // name for a positional argument ("NODE"; with kWords or kStrings it takes many).
  std::string cli{};
  bool required = false;
  ParamScope scope = ParamScope::kBoth;
  // A kString whose empty value means something (scope: the memories with none).
  // Otherwise "" is not accepted by MCP (minLength 1) and counts as not given on
  // the command line (`similar "" --text x` is a text query).
  bool allow_empty = false;
  // A kBoolean that makes the query write: true only on the store's latest state
  // (not with as_of/at, --as-of/--at or --snapshot). Both front ends check it
  // before opening anything.
  bool latest_only = false;
};

// The error for `p` (a latest_only flag) set on an older view or a snapshot file.
Status LatestOnlyError(const Param& p, FrontEnd front_end);

struct QueryDef;

// One call of a query: the snapshot, the arguments (validated by the front end:
// every member is a declared parameter of the declared type and range) and what the
// front end adds.
struct QueryCall {
  const snapshot::Reader& reader;
  const QueryJson& args;
  const QueryDef& def;
  FrontEnd front_end = FrontEnd::kCli;
  // The store, when the reader is a view of it (null for a snapshot file).
  Store* store = nullptr;
  // The reader shows the store's latest state (no as_of/at, no snapshot file).
  bool latest = true;
  // Attribution of what the query writes (consolidate execute).
  WriteOptions write{};
  // The CLI prints the answer as JSON (--json): context cuts its budget on JSON bytes.
  bool json_output = false;
  // Set by UsageError: the arguments do not fit together (the CLI exits 2).
  mutable bool usage_error = false;

  bool Has(std::string_view name) const;
  std::string String(std::string_view name, std::string_view fallback = {}) const;
  // An integer argument as T (a field of the query's Options), else `fallback`.
  template <typename T>
  T Int(std::string_view name, T fallback) const {
    return Has(name) ? static_cast<T>(IntValue(name)) : fallback;
  }
  int64_t IntValue(std::string_view name) const;  // REQUIRES: Has(name)
  double Number(std::string_view name, double fallback) const;
  bool Bool(std::string_view name, bool fallback = false) const;
  std::vector<std::string> Strings(std::string_view name) const;
  // The vector argument (empty when absent).
  Result<std::vector<float>> Floats(std::string_view name) const;
  // The node reference argument, resolved in the reader.
  Result<uint32_t> Node(std::string_view name) const;

  // How this front end spells the parameter: NODE or --text (CLI), "node" (MCP).
  std::string Spell(std::string_view name) const;
  // InvalidArgument(message), marked as a usage error.
  Status UsageError(std::string message) const;
};

struct QueryAnswer {
  QueryJson doc{};   // the answer (CLI --json, MCP structuredContent)
  std::string text{};  // when not empty: the text to show instead of rendering doc
  bool wrote = false;  // it changed the store (consolidate execute): not a query
};

struct QueryDef {
  std::string command{};    // CLI subcommand, e.g. "search"
  std::string tool{};       // MCP tool name, e.g. "find_memories"
  std::string cli_help{};   // CLI --help: what it computes, precisely
  std::string example{};    // CLI --help example lines
  std::string title{};      // MCP title
  // What a model reads to choose the tool, and when: tools/list carries `brief` (one or
  // two sentences: every client sends the list with every turn, docs/MCP.md
  // "Profiles"); the full `description` is in the CLI's --help and docs/MCP.md.
  std::string description{};
  std::string brief{};  // MCP description
  std::vector<Param> params{};
  bool writes = false;  // takes write attribution (CLI --ts/--run/--task, MCP run/task/ts)
  // Answers whose nodes[i] and edges[i] are steps of one chain (path): MCP cuts them
  // together when the answer is too long.
  bool chain = false;
  // Parameters of which exactly one must be given (similar: node, text or vector),
  // and of which at least one must be (context: seeds, question or both). Both
  // front ends check them (CheckGiven) before a store or snapshot is opened, so a
  // call missing them is a usage error whatever the store's state.
  std::vector<std::string> exactly_one{};
  std::vector<std::string> at_least_one{};
  std::function<Result<QueryAnswer>(const QueryCall&)> run{};
};

// The longest text a query takes (docs/QUERIES.md, docs/MCP.md), in characters,
// in both front ends: every kString parameter (words, a question, a text, a node
// reference) at most kMaxTextChars, as search_nodes; a kFileText one (a unified
// diff) at most kMaxFileTextChars (an MCP message is at most 8 MiB anyway).
inline constexpr size_t kMaxTextChars = 4096;
inline constexpr size_t kMaxFileTextChars = size_t{8} << 20;
// The cap of `p` (0: none, not a kString).
size_t MaxTextChars(const Param& p);
// The usage error for a text argument longer than its cap, spelled for
// `front_end`; OK otherwise. The MCP schema carries the caps as maxLength.
Status CheckTextLengths(const QueryDef& def, const QueryJson& args, FrontEnd front_end);

// The usage error for arguments that break the entry's exactly_one or
// at_least_one rule, spelled for `front_end`; OK otherwise.
Status CheckGiven(const QueryDef& def, const QueryJson& args, FrontEnd front_end);

// The 16 queries, in docs/QUERIES.md order.
const std::vector<QueryDef>& Queries();
// Whether `command` is the CLI name of one of them.
bool IsQueryCommand(std::string_view command);

// The help of `p` in `front_end`, the default appended: "Maximum hops (default 5)".
std::string ParamHelp(const Param& p, FrontEnd front_end);

// The CLI spelling of `p`: p.cli, else "--" + name with '_' as '-'.
std::string CliSpelling(const Param& p);

// Text forms of defaults, for Param::default_text.
std::string DefaultText(double value);

}  // namespace amem::io

#endif  // AMEM_TOOLS_IO_QUERY_TABLE_H_
