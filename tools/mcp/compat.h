// Compatibility with the official MCP memory server (@modelcontextprotocol/server-
// memory): its knowledge graph of entities, relations and observations mapped
// losslessly onto amem's store, its nine tools with the same names and argument
// shapes, and the import of its memory.jsonl file. docs/MCP.md "Compatibility"
// states the mapping:
//
//   entity NAME of type T   node `entity:NAME`, type T when T names a node type
//                           (decision, file, ...) else entity; meta {"entityType":T,
//                           "kind":T}; content NAME
//   observation TEXT of E   fact node `obs:E#<16 hex digits of XXH3(TEXT)>`, content
//                           TEXT, meta {"entity":E,"seq":N} (N orders them), and an
//                           edge obs --part_of--> entity:E
//   relation A -R-> B       edge entity:A --R--> entity:B when R is a built-in relation
//                           name or a valid custom one (defined on first use); any
//                           other R (and related_to) is listed in the payload of
//                           entity:A --related_to--> entity:B: {"relationTypes":[R,...]}
//
// Like the official server's zod schemas, the tools and the importer ignore fields
// they do not know (OpenObjectSchema). Writes read the store as of one revision and
// apply with WriteOptions::expected_revision, staged again when another process
// wrote in between (RetryOnConflict), so concurrent writers lose nothing.
#ifndef AMEM_TOOLS_MCP_COMPAT_H_
#define AMEM_TOOLS_MCP_COMPAT_H_

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/store.h"
#include "tools/mcp/common.h"

namespace amem::mcp {

struct Entity {
  std::string name;
  std::string entity_type;
  std::vector<std::string> observations;  // in the order they were added
};

struct Relation {
  std::string from, to, relation_type;
  bool operator==(const Relation&) const = default;
};

struct KnowledgeGraph {
  std::vector<Entity> entities;     // by name
  std::vector<Relation> relations;  // by (from, to), then as stored
};

std::string EntityKey(std::string_view name);
std::string ObservationKey(std::string_view entity, std::string_view observation);

// The whole compatibility graph as of `view`.
Result<KnowledgeGraph> ReadKnowledgeGraph(const Store& store, const ReadView& view);
// One entity as of `view` read from the store, with the relations touching it
// (in-edges, then out-edges, in the store's order); NotFound when there is none.
// open_nodes reads the live view instead (EntityFromView); tests compare the two.
Result<Entity> ReadEntity(const Store& store, const std::string& name, const ReadView& view,
                          std::vector<Relation>* relations);

// Parses a memory.jsonl file of the official server: one {"type":"entity",...} or
// {"type":"relation",...} object per line. InvalidArgument "line N: ..." otherwise.
Result<KnowledgeGraph> ParseMemoryJsonl(std::string_view text);

struct ImportReport {
  size_t entities_created = 0, entities_merged = 0;
  size_t observations_added = 0;
  size_t relations_created = 0;
  uint64_t revision = 0;
};
// Writes `graph` into the store in one transaction (read-modify-write with
// expected_revision, retried on a conflict). Existing entities keep their type and
// gain the missing observations; relations may name missing entities (the official
// file allows it; the store keeps such edges and counts them).
Result<ImportReport> ImportKnowledgeGraph(Store* store, const KnowledgeGraph& graph);

// A long-lived server's per-base work off the calls' path (amem mcp calls it once,
// after BuildRegistry, with LiveOptions::background_merge set): each base a
// background merge makes is warmed (Reader::Warm) and what its compatibility graph
// keeps in memory built on the merge's thread before the calls read it
// (LiveOptions::warm_base, prepare_base; tools/mcp/graph_view.h), and the live base
// at start the same on a thread of its own (ctx->startup), so that a first call
// waits only for what is left of it; a server that ends first stops that thread's
// warming at its next step instead of waiting for all of it. Sets ctx->graphs.
void StartLiveBaseWork(ToolContext* ctx);

// create_entities, create_relations, add_observations, delete_entities,
// delete_observations, delete_relations, read_graph, search_nodes, open_nodes.
void AddCompatTools(ToolRegistry* registry, ToolContext* ctx);

}  // namespace amem::mcp

#endif  // AMEM_TOOLS_MCP_COMPAT_H_
