// Query 6, context: the neighbourhood an agent should see, as LLM-ready text or JSON
// within a token budget (docs/QUERIES.md #6).
#ifndef AMEM_QUERY_CONTEXT_H_
#define AMEM_QUERY_CONTEXT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "query/query.h"
#include "query/render.h"

namespace amem::query {

struct ContextOptions {
  uint32_t depth = 2;
  // Estimated tokens the whole rendered output may use (its bytes / 4, rounded up:
  // no tokenizer is assumed); 0: no limit.
  size_t budget_tokens = 2000;
  Format format = Format::kText;  // what the budget is measured on
  size_t max_content_bytes = 400;  // per node, cut on a UTF-8 boundary
  size_t limit = 200;              // nodes collected before the budget is applied
};

struct ContextNode {
  uint32_t node = 0;
  uint32_t depth = 0;
};

struct ContextResult {
  std::vector<uint32_t> seeds;
  std::vector<ContextNode> nodes;  // nearest first (BFS order), within the budget
  std::vector<uint32_t> edges;     // every edge between two of `nodes`
  uint64_t collected_nodes = 0;    // before the budget cut
  uint64_t collected_edges = 0;
  size_t tokens = 0;               // size of the rendered output: ceil(bytes / 4)
  size_t min_tokens = 0;           // size of the output with no node: the skeleton
  bool truncated = false;          // the budget or the limit dropped something
};

// BFS in both directions over every relation from all seeds at once (depth 0), up
// to `depth` hops and `limit` nodes; then nodes are taken nearest-first, each with
// the edges joining it to nodes already taken, while the whole rendered output
// (ContextText, or RenderJson(ContextJson) for Format::kJson) fits the budget.
// The output never exceeds a budget >= min_tokens; a smaller budget cannot hold the
// header and section lines, so it gets the skeleton alone (nodes empty, tokens =
// min_tokens > budget): use BuildContextChecked to have that refused instead.
// REQUIRES: every seed < reader.node_count().
ContextResult BuildContext(const snapshot::Reader& reader, const std::vector<uint32_t>& seeds,
                           const ContextOptions& options);

// BuildContext, except that a budget below the skeleton's min_tokens (other than 0,
// no limit) is InvalidArgument, the message naming that minimum.
Result<ContextResult> BuildContextChecked(const snapshot::Reader& reader,
                                          const std::vector<uint32_t>& seeds,
                                          const ContextOptions& options);

// Structured text:
//   # amem context: N nodes, M edges (depth D, seeds: K1, K2; ~T tokens)
//   ## nodes
//   - KEY (TYPE, CONFIDENCE): "CONTENT"
//   ## edges
//   - KEY --REL--> KEY
// Stored strings cannot break this structure: content is always a quoted,
// JSON-escaped string; a key is written bare only when it has no whitespace,
// control character, quote, backslash or "--", and quoted the same way otherwise.
std::string ContextText(const snapshot::Reader& reader, const ContextResult& result,
                        const ContextOptions& options);
Json ContextJson(const snapshot::Reader& reader, const ContextResult& result,
                 const ContextOptions& options);

// JSON-style double-quoted string: quote, backslash, control characters, DEL and the
// Unicode line/paragraph separators escaped. Exposed for tests.
std::string PromptQuote(std::string_view s);
// `s` bare when that is unambiguous in the structure above, else PromptQuote(s).
std::string PromptKey(std::string_view s);

}  // namespace amem::query

#endif  // AMEM_QUERY_CONTEXT_H_
