#include "tools/mcp/compat.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <thread>
#include <tuple>
#include <utility>

#include "common/json_parse.h"
#include "common/model.h"
#include "common/utf8.h"
#include "snapshot/live.h"
#include "tools/io/ingest_line.h"
#include "tools/mcp/graph_view.h"
#include "tools/mcp/schema.h"
#include "tools/mcp/server.h"
#include "tools/mcp/memory_line.h"

namespace amem::mcp {
namespace {

// Keeps both `entity:NAME` and `obs:NAME#hash` within kMaxKeyBytes.
constexpr size_t kMaxEntityNameBytes = 1000;
constexpr int kMaxCustomRelations = kMaxRelationId - kFirstCustomRelation + 1;

Json EntityJson(const Entity& e) {
  return Json{{"name", e.name}, {"entityType", e.entity_type}, {"observations", e.observations}};
}

Json RelationJson(const Relation& r) {
  return Json{{"from", r.from}, {"to", r.to}, {"relationType", r.relation_type}};
}

Status CheckName(std::string_view name) {
  if (name.size() > kMaxEntityNameBytes) {
    return Status::InvalidArgument("entity name longer than " +
                                   std::to_string(kMaxEntityNameBytes) + " bytes");
  }
  return Status::OK();
}

// Stages compatibility-graph changes into one Batch, reading the store as it goes
// so that the ops of one call see each other (a relation to an entity created by
// the same import, the second copy of a duplicate, ...).
//
// Every read is as of `revision`, and Commit applies the batch only if the store is
// still there (WriteOptions::expected_revision): what the batch holds was decided
// from those reads (a relationTypes list, the next observation number, the edges of
// an entity to delete), so a write by another process in between must not be
// overwritten. Commit is then Aborted; stage the call again on a new GraphWriter
// (GraphWrite, ImportKnowledgeGraph).
class GraphWriter {
 public:
  GraphWriter(Store* store, uint64_t revision)
      : store_(store), revision_(revision), view_(ReadView::AtRevision(revision)) {}

  Result<bool> EntityExists(const std::string& name) {
    auto st = Load(name);
    if (!st.ok()) return st.status();
    return (*st)->exists;
  }

  // Creates the entity unless one of that name exists (then *created = false and,
  // when `merge`, the observations missing from it are added).
  Status CreateEntity(const Entity& e, bool merge, bool* created, size_t* observations_added) {
    AMEM_RETURN_IF_ERROR(CheckName(e.name));
    auto loaded = Load(e.name);
    if (!loaded.ok()) return loaded.status();
    EntityState* st = *loaded;
    *created = !st->exists;
    if (st->exists && !merge) return Status::OK();
    if (!st->exists) {
      NodeInput n;
      n.key = EntityKey(e.name);
      n.type = ParseNodeType(e.entity_type).value_or(NodeType::kEntity);
      n.content = e.name;
      n.meta = DumpLine(Json{{"entityType", e.entity_type}, {"kind", e.entity_type}});
      batch_.PutNode(std::move(n));
      st->exists = true;
    }
    for (const auto& o : e.observations) {
      bool added = false;
      AMEM_RETURN_IF_ERROR(AddObservation(e.name, o, &added));
      *observations_added += added;
    }
    return Status::OK();
  }

  // REQUIRES: the entity exists (checked by the caller with EntityExists).
  Status AddObservation(const std::string& name, const std::string& text, bool* added) {
    auto loaded = LoadObservations(name);
    if (!loaded.ok()) return loaded.status();
    EntityState* st = *loaded;
    std::string key = ObservationKey(name, text);
    *added = st->observations.insert(key).second;
    if (!*added) return Status::OK();
    NodeInput n;
    n.key = key;
    n.type = NodeType::kFact;
    n.content = text;
    n.meta = DumpLine(Json{{"entity", name}, {"seq", std::to_string(st->next_seq++)}});
    batch_.PutNode(std::move(n));
    EdgeInput edge;
    edge.src = key;
    edge.rel = "part_of";
    edge.dst = EntityKey(name);
    batch_.PutEdge(std::move(edge));
    return Status::OK();
  }

  Status DeleteObservation(const std::string& name, const std::string& text, bool* deleted) {
    auto loaded = LoadObservations(name);
    if (!loaded.ok()) return loaded.status();
    std::string key = ObservationKey(name, text);
    *deleted = (*loaded)->observations.erase(key) > 0;
    if (*deleted) {
      DeleteEdgeOnce(key, "part_of", EntityKey(name));
      batch_.DeleteNode(key);
    }
    return Status::OK();
  }

  // Deletes the entity, its observations and every edge touching it.
  Status DeleteEntity(const std::string& name, bool* existed) {
    auto loaded = LoadObservations(name);
    if (!loaded.ok()) return loaded.status();
    EntityState* st = *loaded;
    *existed = st->exists;
    if (!st->exists) return Status::OK();
    std::string key = EntityKey(name);
    for (bool outgoing : {true, false}) {
      auto edges = outgoing ? store_->Out(key, {}, view_) : store_->In(key, {}, view_);
      if (!edges.ok()) return edges.status();
      for (const auto& e : *edges) DeleteEdgeOnce(e.src_key, e.rel_name, e.dst_key);
    }
    for (const auto& obs : st->observations) batch_.DeleteNode(obs);
    batch_.DeleteNode(key);
    st->exists = false;
    st->observations.clear();
    return Status::OK();
  }

  Status CreateRelation(const Relation& r, bool* created) {
    AMEM_RETURN_IF_ERROR(CheckName(r.from));
    AMEM_RETURN_IF_ERROR(CheckName(r.to));
    auto slot = MapRelation(r.relation_type, /*define=*/true);
    if (!slot.ok()) return slot.status();
    if (slot->listed) {
      auto list = LoadList(r.from, r.to);
      if (!list.ok()) return list.status();
      auto& types = (*list)->types;
      *created = std::find(types.begin(), types.end(), r.relation_type) == types.end();
      if (*created) {
        types.push_back(r.relation_type);
        (*list)->dirty = true;
      }
      return Status::OK();
    }
    auto present = DirectEdge(r.from, slot->rel, r.to);
    if (!present.ok()) return present.status();
    *created = !**present;
    if (*created) {
      EdgeInput edge;
      edge.src = EntityKey(r.from);
      edge.rel = slot->rel;
      edge.dst = EntityKey(r.to);
      batch_.PutEdge(std::move(edge));
      **present = true;
    }
    return Status::OK();
  }

  Status DeleteRelation(const Relation& r, bool* deleted) {
    *deleted = false;
    auto slot = MapRelation(r.relation_type, /*define=*/false);
    if (!slot.ok()) return slot.status();
    if (!slot->listed) {
      auto present = DirectEdge(r.from, slot->rel, r.to);
      if (!present.ok()) return present.status();
      if (**present) {
        DeleteEdgeOnce(EntityKey(r.from), slot->rel, EntityKey(r.to));
        **present = false;
        *deleted = true;
      }
    }
    // A custom-looking type may also sit in the related_to list (when the custom
    // relation table was full at the time), so look there as well.
    auto list = LoadList(r.from, r.to);
    if (!list.ok()) return list.status();
    auto& types = (*list)->types;
    auto it = std::find(types.begin(), types.end(), r.relation_type);
    if (it != types.end()) {
      types.erase(it);
      (*list)->dirty = true;
      *deleted = true;
    }
    return Status::OK();
  }

  Result<uint64_t> Commit() {
    for (auto& [ends, list] : lists_) {
      if (!list.dirty) continue;
      std::string src = EntityKey(ends.first), dst = EntityKey(ends.second);
      if (list.types.empty()) {
        if (list.edge_exists) DeleteEdgeOnce(src, "related_to", dst);
        continue;
      }
      Json payload = list.payload.is_object() ? list.payload : Json::object();
      payload["relationTypes"] = list.types;
      EdgeInput edge;
      edge.src = src;
      edge.rel = "related_to";
      edge.dst = dst;
      edge.weight = list.weight;
      edge.payload = DumpLine(payload);
      batch_.PutEdge(std::move(edge));
    }
    WriteOptions w;
    w.expected_revision = revision_;
    return store_->Apply(batch_, w);
  }

 private:
  struct EntityState {
    bool exists = false;
    bool observations_loaded = false;
    std::set<std::string> observations;  // node keys
    int64_t next_seq = 0;
  };
  struct ListState {
    bool edge_exists = false;
    bool dirty = false;
    float weight = 1.0f;
    Json payload = Json::object();
    std::vector<std::string> types;
  };
  struct Slot {
    std::string rel;
    bool listed = false;
  };

  Result<EntityState*> Load(const std::string& name) {
    auto [it, inserted] = entities_.try_emplace(name);
    if (inserted) {
      auto node = store_->GetNode(EntityKey(name), view_);
      if (!node.ok() && !node.status().IsNotFound()) {
        entities_.erase(it);
        return node.status();
      }
      it->second.exists = node.ok();
    }
    return &it->second;
  }

  Result<EntityState*> LoadObservations(const std::string& name) {
    auto loaded = Load(name);
    if (!loaded.ok()) return loaded;
    EntityState* st = *loaded;
    if (st->observations_loaded) return st;
    st->observations_loaded = true;
    if (!st->exists) return st;
    auto edges = store_->In(EntityKey(name), "part_of", view_);
    if (!edges.ok()) return edges.status();
    for (const auto& e : *edges) {
      std::string_view owner;
      if (!ObservationEntityOf(e.src_key, &owner) || owner != name) continue;
      auto obs = store_->GetNode(e.src_key, view_);
      if (!obs.ok()) {
        if (obs.status().IsNotFound()) continue;
        return obs.status();
      }
      st->observations.insert(e.src_key);
      st->next_seq = std::max(st->next_seq, ObservationSeq(obs->meta) + 1);
    }
    return st;
  }

  Result<ListState*> LoadList(const std::string& from, const std::string& to) {
    auto [it, inserted] = lists_.try_emplace({from, to});
    if (inserted) {
      auto edge = store_->GetEdge(EntityKey(from), "related_to", EntityKey(to), view_);
      if (edge.ok()) {
        it->second.edge_exists = true;
        it->second.weight = edge->weight;
        it->second.payload = ParseJsonText(edge->payload);
        it->second.types = RelationTypesFrom(edge->payload, edge->rel_name);
      } else if (!edge.status().IsNotFound()) {
        lists_.erase(it);
        return edge.status();
      }
    }
    return &it->second;
  }

  // Whether entity:from --rel--> entity:to is live (as staged so far).
  Result<bool*> DirectEdge(const std::string& from, const std::string& rel,
                           const std::string& to) {
    auto [it, inserted] = direct_.try_emplace({from, rel, to}, false);
    if (inserted && !defined_.contains(rel)) {
      auto edge = store_->GetEdge(EntityKey(from), rel, EntityKey(to), view_);
      if (!edge.ok() && !edge.status().IsNotFound() && !edge.status().IsInvalidArgument()) {
        direct_.erase(it);
        return edge.status();
      }
      it->second = edge.ok();
    }
    return &it->second;
  }

  // Where a relation type lives. With `define`, a valid custom name that is not yet
  // known is defined (while the custom relation table has room).
  Result<Slot> MapRelation(const std::string& type, bool define) {
    if (type == "related_to") return Slot{"related_to", true};
    if (ParseBuiltinRelation(type)) return Slot{type, false};
    if (IsValidRelationName(type)) {
      if (defined_.contains(type) || store_->LookupRelation(type).ok()) return Slot{type, false};
      if (define) {
        auto stats = store_->Stats();
        if (!stats.ok()) return stats.status();
        if (stats->custom_relations + defined_.size() < kMaxCustomRelations) {
          batch_.DefineRelation(type);
          defined_.insert(type);
          return Slot{type, false};
        }
      }
    }
    return Slot{"related_to", true};
  }

  void DeleteEdgeOnce(const std::string& src, const std::string& rel, const std::string& dst) {
    if (deleted_edges_.insert({src, rel, dst}).second) batch_.DeleteEdge(src, rel, dst);
  }

  Store* store_;
  uint64_t revision_;
  ReadView view_;
  Batch batch_;
  std::map<std::string, EntityState> entities_;
  std::map<std::pair<std::string, std::string>, ListState> lists_;
  std::map<std::tuple<std::string, std::string, std::string>, bool> direct_;
  std::set<std::tuple<std::string, std::string, std::string>> deleted_edges_;
  std::set<std::string> defined_;
};

// ---- reads ----

// One entity with its observations, and the relations touching it; NotFound if
// there is no such entity.
// ---- tool plumbing ----

std::vector<std::string> StringArray(const Json& a) {
  std::vector<std::string> out;
  for (const auto& s : a) out.push_back(s.get<std::string>());
  return out;
}

// Fields other than these are ignored (OpenObjectSchema), as the official server does.
Entity EntityFromJson(const Json& j) {
  return Entity{j["name"].get<std::string>(), j["entityType"].get<std::string>(),
                StringArray(j["observations"])};
}

Relation RelationFromJson(const Json& j) {
  return Relation{j["from"].get<std::string>(), j["to"].get<std::string>(),
                  j["relationType"].get<std::string>()};
}

Json EntitySchema() {
  return OpenObjectSchema(Json::parse(R"({
    "name": {"type": "string", "description": "Entity name"},
    "entityType": {"type": "string", "description": "Entity type"},
    "observations": {"type": "array", "items": {"type": "string"},
                     "description": "Observations"}
  })"), {"name", "entityType", "observations"});
}

Json RelationSchema() {
  return OpenObjectSchema(Json::parse(R"({
    "from": {"type": "string", "description": "Source entity"},
    "to": {"type": "string", "description": "Target entity"},
    "relationType": {"type": "string", "description": "Relation type"}
  })"), {"from", "to", "relationType"});
}

constexpr int kDefaultGraphLimit = 1000;
constexpr int kMaxGraphLimit = 10000;
constexpr size_t kSeparator = 2;  // a comma between items, in both copies

// The entity from observation `from` on. Part of an entity (from > 0, or cut by
// EntityPart) says so: truncated, observationCount (all of them), observationOffset
// (the index of the first one listed).
Json EntityFrom(const Entity& e, size_t from) {
  if (from == 0) return EntityJson(e);
  Json rest = Json::array();
  for (size_t i = from; i < e.observations.size(); ++i) rest.push_back(e.observations[i]);
  Json j{{"name", e.name}, {"entityType", e.entity_type}, {"observations", std::move(rest)}};
  j["truncated"] = true;
  j["observationCount"] = e.observations.size();
  j["observationOffset"] = from;
  return j;
}

// The longest prefix of `text` (cut on a character boundary, "…" appended) whose
// ResultCost stays within `room`.
std::string CutToCost(const std::string& text, size_t room) {
  auto cut = [&](size_t n) { return std::string(Utf8Prefix(text, n)) + "…"; };
  return cut(LargestFitting(0, text.size(),
                            [&](size_t n) { return ResultCost(Json(cut(n))) <= room; }));
}

// Part of an entity too big for what is left of a page (`room`): the observations
// from `from` on that fit, at least one. One observation too big on its own is cut
// ("…" at the end) and listed under truncatedObservations with its length and its
// node key, which get_memory reads in full (content_offset). *next: the first
// observation not listed.
Json EntityPart(const Entity& e, size_t from, size_t room, size_t* next) {
  Json j{{"name", e.name}, {"entityType", e.entity_type}, {"observations", Json::array()}};
  j["truncated"] = true;
  j["observationCount"] = e.observations.size();
  j["observationOffset"] = from;
  size_t cost = ResultCost(j), k = from;
  for (; k < e.observations.size(); ++k) {
    size_t c = ResultCost(Json(e.observations[k])) + kSeparator;
    if (cost + c > room) break;
    j["observations"].push_back(e.observations[k]);
    cost += c;
  }
  if (k == from && k < e.observations.size()) {
    const std::string& text = e.observations[k];
    Json note{{"index", k}, {"bytes", text.size()}, {"key", ObservationKey(e.name, text)}};
    j["truncatedObservations"] = Json::array({note});
    size_t fixed = ResultCost(j) + kSeparator;
    j["observations"].push_back(CutToCost(text, room > fixed ? room - fixed : 0));
    ++k;
  }
  *next = k;
  ShrinkToFit(&j, room);  // a header alone over budget (a huge entityType)
  return j;
}

// A page of a graph listing: entities first, then relations, from `start`. Items
// are added while the page's ResultCost stays within ResultBudget() and at most
// `limit` items are listed. An entity that does not fit in a whole page is split:
// its part on this page (EntityPart) and the cursor resumes at its next observation
// (PageStart::sub), so every observation is listed once, in order.
template <typename Listing>
ToolResult GraphPage(const Listing& g, const Json& args, const PageStart& start,
                     uint64_t revision) {
  const size_t limit = static_cast<size_t>(ArgInt(args, "limit", kDefaultGraphLimit));
  const size_t budget = ResultBudget();
  const size_t n_entities = g.entity_count();
  // Whether there is an item i: the relations are not counted ahead.
  auto has = [&](size_t i) { return i < n_entities || g.has_relation(i - n_entities); };
  Json entities = Json::array(), relations = Json::array();
  size_t i = start.offset, sub = i < n_entities ? start.sub : 0, taken = 0, used = 0;
  if (i < n_entities && sub >= g.entity(i).observations.size() && sub > 0) {
    ++i;  // a cursor past the entity's last observation: it is done
    sub = 0;
  }
  while (has(i) && taken < limit) {
    if (i >= n_entities) {
      Json item = RelationJson(g.relation(i - n_entities));
      size_t c = ResultCost(item) + kSeparator;
      if (used + c > budget) {
        if (taken > 0) break;
        ShrinkToFit(&item, budget - kSeparator);  // a relation type of 60 KiB
        c = ResultCost(item) + kSeparator;
      }
      used += c;
      relations.push_back(std::move(item));
      ++taken;
      ++i;
      continue;
    }
    const Entity& e = g.entity(i);
    Json item = EntityFrom(e, sub);
    size_t c = ResultCost(item) + kSeparator;
    if (used + c <= budget) {
      used += c;
      entities.push_back(std::move(item));
      ++taken;
      ++i;
      sub = 0;
      continue;
    }
    // It does not fit in what is left. Start it on the next page when it fits in a
    // whole one (or little is left here); else list what fits and go on from there.
    if (taken > 0 && (c <= budget || budget - used < budget / 4)) break;
    size_t next = sub;
    Json part = EntityPart(e, sub, budget - used - kSeparator, &next);
    used += ResultCost(part) + kSeparator;
    entities.push_back(std::move(part));
    ++taken;
    if (next >= e.observations.size()) {
      ++i;
      sub = 0;
    } else {
      sub = next;
    }
    break;  // the page is full
  }
  ToolResult r;
  r.structured["entities"] = std::move(entities);
  r.structured["relations"] = std::move(relations);
  if (has(i)) {
    r.structured["nextCursor"] = MakeCursor(revision, i, sub);
    r.structured["truncated"] = true;
  }
  return r;
}

}  // namespace

struct StartupWork {
  std::thread thread;
  // Set when the server ends: the warming stops at its next step (what it did not
  // reach is checked when read), and no graph is prepared for nobody.
  std::atomic<bool> stop{false};
  ~StartupWork() {
    stop = true;
    if (thread.joinable()) thread.join();
  }
};

void StartLiveBaseWork(ToolContext* ctx) {
  if (ctx->graphs == nullptr) ctx->graphs = std::make_shared<GraphViewCache>();
  ctx->live_options.warm_base = true;
  ctx->live_options.prepare_base = [graphs = ctx->graphs](
                                       const Store& store,
                                       const std::shared_ptr<const snapshot::Reader>& base,
                                       uint64_t revision) { graphs->Prepare(base, revision, store); };
  ctx->live_options.prepare_level = [graphs = ctx->graphs](
                                        const Store& store,
                                        const std::shared_ptr<const snapshot::Reader>& level) {
    graphs->PrepareLevel(level, store);
  };
  // Only a base the store already has: a store without one (new, or its cache
  // removed) gets it from the first call, as before, and a server started and
  // closed at once writes nothing in the store's directory.
  std::error_code ec;
  if (!std::filesystem::exists(ctx->store->path() + "/current.rev", ec)) return;
  auto work = std::make_shared<StartupWork>();
  work->thread = std::thread([ctx, stop = &work->stop] {
    // What the first call would do: the live view (the base mapped, under the
    // cache's lock, which a call waits on), then, with the lock released, the base
    // checked whole and warmed and its graph built (the calls meanwhile check what
    // they read; a search_nodes waits for that graph, never builds it).
    auto live = snapshot::OpenLive(*ctx->store, ReadView::Latest(), ctx->live_options,
                                   ctx->live.get());
    if (!live.ok()) return;  // the first call says why
    // A view answered from memory says so once, here: the calls reuse it.
    snapshot::PrintNote(*live, "amem mcp");
    std::shared_ptr<const snapshot::Reader> base = live->reader;
    while (base->layered()) base = base->layer_base();
    // A damaged base: the calls find it where they read it. A server that ends
    // meanwhile stops at the next step of either.
    if (!base->Warm(stop).ok() || *stop) return;
    ctx->graphs->Prepare(base, live->base_revision, *ctx->store, stop);
  });
  ctx->startup = std::move(work);
}

namespace {

// read_graph (query null) or search_nodes on the live view (snapshot/live.h) at
// the cursor's revision, else as_of/at, else the latest (another process's writes
// included: OpenLive checks the store's revision).
ToolResult ListGraph(ToolContext* ctx, const Json& args, const std::string* query) {
  const char* what = query ? "search_nodes" : "read_graph";
  if (ctx->store == nullptr) return ToolError(std::string(what) + " reads a store; none is open");
  auto start = PageStartFromArgs(args);
  if (!start.ok()) return ToolError(start.status().message());
  auto view = PageViewFromArgs(args, *start);
  if (!view.ok()) return ToolError(view.status().message());
  // The page of the live view's graph; a damaged cache, found opening the view,
  // building the graph or reading the page (the base's entities and relations,
  // and its entity search block, are read from the file where the page needs
  // them), is discarded with the graphs made from it, and read again.
  const auto limit = static_cast<size_t>(ArgInt(args, "limit", kDefaultGraphLimit));
  Result<snapshot::LiveView> live = Status::NotFound("not read yet");
  Result<std::shared_ptr<const GraphView>> graph = Status::NotFound("not read yet");
  ToolResult page;
  for (int attempt = 0; attempt < 2; ++attempt) {
    live = snapshot::OpenLive(*ctx->store, *view, ctx->live_options, ctx->live.get());
    if (live.ok()) {
      if (ctx->graphs == nullptr) ctx->graphs = std::make_shared<GraphViewCache>();
      graph = ctx->graphs->Get(live->reader, live->revision, *ctx->store);
    }
    if (live.ok() && graph.ok()) {
      if (query != nullptr) {
        // A page lists at most `limit` items from the offset on: one entity past
        // them says there are more (the relations after the entities are not
        // needed yet).
        const size_t wanted =
            start->offset < SIZE_MAX - limit - 1 ? start->offset + limit + 1 : SIZE_MAX;
        GraphListing hits = (*graph)->Search(*query, wanted);
        if (hits.entities.size() <= start->offset + limit) (*graph)->AddRelationsTouching(&hits);
        page = GraphPage(hits, args, *start, live->revision);
      } else {
        page = GraphPage((*graph)->All(), args, *start, live->revision);
      }
      if (Status read = live->reader->ContentStatus(); !read.ok()) graph = read;
    }
    const Status failed = live.ok() ? graph.status() : live.status();
    if (failed.ok() || attempt > 0 ||
        !DiscardBadLiveCache(ctx, what, failed, live.ok() ? &*live : nullptr)) {
      break;
    }
    if (ctx->graphs != nullptr) ctx->graphs->Clear();
  }
  if (!live.ok()) return ToolErrorFromStatus(what, live.status());
  snapshot::PrintNote(*live, "amem mcp");
  if (!graph.ok()) return ToolErrorFromStatus(what, graph.status());
  return page;
}

// Stages one compatibility write on a GraphWriter at the store's latest revision:
// `stage` returns the result, or a tool error (then nothing is written). When
// another process wrote in between, the write is staged again on the new state
// (RetryOnConflict), so nothing it wrote is overwritten.
ToolResult GraphWrite(Store* store, std::string_view what,
                      const std::function<ToolResult(GraphWriter*)>& stage) {
  return RetryOnConflict(store, what, [&](uint64_t revision) -> Result<ToolResult> {
    GraphWriter w(store, revision);
    ToolResult r = stage(&w);
    if (r.is_error) return r;
    auto committed = w.Commit();
    if (!committed.ok()) return committed.status();
    return r;
  });
}

// The result of a write that echoes what it did (created entities, relations,
// added observations): the echo in full when it fits the budget, else its first
// items with truncated: true and total (how many there are in all).
ToolResult Echo(const char* field, std::vector<Json> items, std::string_view what) {
  ToolResult r;
  const size_t total = items.size();
  BoundedList list(total, ResultBudget() - (1 << 10));
  for (auto& item : items) {
    if (!list.Add(std::move(item))) break;
  }
  bool cut = list.full();  // set when an item was refused or cut
  size_t shown = list.size();
  r.structured[field] = list.Take();
  if (cut) {
    r.structured["truncated"] = true;
    r.structured["total"] = total;
    r.structured["note"] = "all " + std::to_string(total) + " " + std::string(what) +
                           "; the first " + std::to_string(shown) +
                           " are listed (read_graph or open_nodes shows them all)";
  }
  return r;
}

ToolResult SuccessMessage(std::string message) {
  ToolResult r;
  r.structured["success"] = true;
  r.structured["message"] = message;
  r.text = std::move(message);
  return r;
}

}  // namespace

Result<KnowledgeGraph> ReadKnowledgeGraph(const Store& store, const ReadView& view) {
  auto state = store.ReadState(view);
  if (!state.ok()) return state.status();
  KnowledgeGraph g;
  std::map<std::string, size_t, std::less<>> index;
  for (const auto& n : state->nodes) {
    std::string_view name;
    if (!EntityNameOf(n.key, &name)) continue;
    index.emplace(std::string(name), g.entities.size());
    g.entities.push_back(Entity{std::string(name), EntityTypeFrom(n.meta, n.type), {}});
  }
  std::vector<std::vector<ObservationSlot>> slots(g.entities.size());
  for (const auto& n : state->nodes) {
    std::string_view owner;
    if (!ObservationEntityOf(n.key, &owner)) continue;
    auto it = index.find(owner);
    if (it == index.end()) continue;
    slots[it->second].push_back({ObservationSeq(n.meta), n.key, n.content});
  }
  for (size_t i = 0; i < slots.size(); ++i) SortObservations(&slots[i], &g.entities[i]);
  for (const auto& e : state->edges) {
    std::string_view from, to;
    if (!EntityNameOf(e.src_key, &from) || !EntityNameOf(e.dst_key, &to)) continue;
    for (auto& t : RelationTypesFrom(e.payload, e.rel_name)) {
      g.relations.push_back({std::string(from), std::string(to), std::move(t)});
    }
  }
  return g;
}

Result<Entity> ReadEntity(const Store& store, const std::string& name, const ReadView& view,
                          std::vector<Relation>* relations) {
  std::string key = EntityKey(name);
  auto node = store.GetNode(key, view);
  if (!node.ok()) return node.status();
  Entity e{name, EntityTypeFrom(node->meta, node->type), {}};
  auto in = store.In(key, {}, view);
  if (!in.ok()) return in.status();
  std::vector<ObservationSlot> slots;
  for (const auto& edge : *in) {
    std::string_view owner, src_name;
    if (edge.rel_name == "part_of" && ObservationEntityOf(edge.src_key, &owner) && owner == name) {
      auto obs = store.GetNode(edge.src_key, view);
      if (obs.ok()) slots.push_back({ObservationSeq(obs->meta), obs->key, obs->content});
      continue;
    }
    if (!EntityNameOf(edge.src_key, &src_name) || edge.src_key == key) continue;
    for (auto& t : RelationTypesFrom(edge.payload, edge.rel_name)) relations->push_back({std::string(src_name), name, t});
  }
  auto out = store.Out(key, {}, view);
  if (!out.ok()) return out.status();
  for (const auto& edge : *out) {
    std::string_view dst_name;
    if (!EntityNameOf(edge.dst_key, &dst_name)) continue;
    for (auto& t : RelationTypesFrom(edge.payload, edge.rel_name)) relations->push_back({name, std::string(dst_name), t});
  }
  SortObservations(&slots, &e);
  return e;
}

Result<KnowledgeGraph> ParseMemoryJsonl(std::string_view text) {
  KnowledgeGraph g;
  size_t line_no = 0;
  // Lines go through the fast parser first (tools/mcp/memory_line.h), in place while
  // the text has its padding after them, else from a padded copy.
  FastMemoryLineParser fast;
  std::string padded;
  const char* const text_end = text.data() + text.size();
  while (!text.empty()) {
    ++line_no;
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (fast.Add(io::PaddedLine(line, text_end, &padded), line.size(), &g)) continue;
    auto fail = [&](std::string_view what) {
      return Status::InvalidArgument("line " + std::to_string(line_no) + ": " + std::string(what));
    };
    Result<Json> parsed = ParseJsonLimited<Json>(line, "not valid JSON");
    if (!parsed.ok()) return fail(parsed.status().message());
    Json j = std::move(*parsed);
    if (!j.is_object()) return fail("expected a JSON object");
    auto type_it = j.find("type");
    if (type_it == j.end() || !type_it->is_string()) return fail("missing \"type\"");
    std::string type = *type_it;
    j.erase("type");
    Status s;
    if (type == "entity") {
      s = ValidateAgainstSchema(EntitySchema(), j);
      if (s.ok()) g.entities.push_back(EntityFromJson(j));
    } else if (type == "relation") {
      s = ValidateAgainstSchema(RelationSchema(), j);
      if (s.ok()) g.relations.push_back(RelationFromJson(j));
    } else {
      return fail("\"type\" must be \"entity\" or \"relation\"");
    }
    if (!s.ok()) return fail(s.message());
  }
  return g;
}

Result<ImportReport> ImportKnowledgeGraph(Store* store, const KnowledgeGraph& graph) {
  WriteTurn turn(*store);
  Status last;
  for (int attempt = 0; attempt < kMaxWriteAttempts; ++attempt) {
    auto at = store->ResolveRevision(ReadView::Latest());
    if (!at.ok()) return at.status();
    GraphWriter w(store, *at);
    ImportReport report;
    for (const auto& e : graph.entities) {
      bool created = false;
      AMEM_RETURN_IF_ERROR(w.CreateEntity(e, /*merge=*/true, &created, &report.observations_added)
                               .WithContext("entity " + e.name));
      (created ? report.entities_created : report.entities_merged)++;
    }
    for (const auto& r : graph.relations) {
      bool created = false;
      AMEM_RETURN_IF_ERROR(w.CreateRelation(r, &created)
                               .WithContext("relation " + r.from + " -" + r.relation_type + "-> " + r.to));
      report.relations_created += created;
    }
    auto rev = w.Commit();
    if (rev.ok()) {
      report.revision = *rev;
      return report;
    }
    last = rev.status();
    if (!last.IsAborted()) break;  // another process wrote meanwhile: stage it again
  }
  return last;
}

namespace {

// The official server's answer when an entity does not exist.
ToolResult EntityNotFound(const std::string& name) {
  return ToolError("Entity with name " + Preview(name, 200) + " not found");
}

Tool CreateEntitiesTool(ToolContext* ctx) {
  Store* store = ctx->store;
  Tool t;
  t.name = "create_entities";
  t.title = "Create Entities";
  t.description =
      "Create multiple new entities in the knowledge graph; existing names are skipped.";
  t.input_schema = OpenObjectSchema(
      Json{{"entities", ArrayOf(EntitySchema(), "Entities to create")}}, {"entities"});
  t.handler = [store](const Json& args) {
    return GraphWrite(store, "create_entities", [&](GraphWriter* w) {
      std::vector<Json> created;
      for (const auto& j : args["entities"]) {
        Entity e = EntityFromJson(j);
        bool is_new = false;
        size_t added = 0;
        if (Status s = w->CreateEntity(e, /*merge=*/false, &is_new, &added); !s.ok()) {
          return ToolErrorFromStatus("create_entities: entity " + Preview(e.name, 200), s);
        }
        if (is_new) created.push_back(EntityJson(e));
      }
      return Echo("entities", std::move(created), "entities created");
    });
  };
  return t;
}

Tool CreateRelationsTool(ToolContext* ctx) {
  Store* store = ctx->store;
  Tool t;
  t.name = "create_relations";
  t.title = "Create Relations";
  t.description =
      "Create multiple new relations between existing entities, in active voice; existing "
      "ones are skipped.";
  t.input_schema = OpenObjectSchema(
      Json{{"relations", ArrayOf(RelationSchema(), "Relations to create")}}, {"relations"});
  t.handler = [store](const Json& args) {
    return GraphWrite(store, "create_relations", [&](GraphWriter* w) {
      std::vector<Json> created;
      for (const auto& j : args["relations"]) {
        Relation r = RelationFromJson(j);
        for (const auto* end : {&r.from, &r.to}) {
          auto exists = w->EntityExists(*end);
          if (!exists.ok()) return ToolErrorFromStatus("create_relations", exists.status());
          if (!*exists) return EntityNotFound(*end);
        }
        bool is_new = false;
        if (Status s = w->CreateRelation(r, &is_new); !s.ok()) {
          return ToolErrorFromStatus("create_relations", s);
        }
        if (is_new) created.push_back(RelationJson(r));
      }
      return Echo("relations", std::move(created), "relations created");
    });
  };
  return t;
}

Tool AddObservationsTool(ToolContext* ctx) {
  Store* store = ctx->store;
  Tool t;
  t.name = "add_observations";
  t.title = "Add Observations";
  t.description =
      "Add new observations to existing entities; ones already there are skipped.";
  t.input_schema = OpenObjectSchema(
      Json{{"observations",
            ArrayOf(OpenObjectSchema(Json::parse(R"({
              "entityName": {"type": "string", "description": "Entity name"},
              "contents": {"type": "array", "items": {"type": "string"}, "description": "Observations to add"}
            })"), {"entityName", "contents"}), "Observations to add, per entity")}},
      {"observations"});
  t.handler = [store](const Json& args) {
    return GraphWrite(store, "add_observations", [&](GraphWriter* w) {
      std::vector<Json> results;
      size_t count = 0;
      for (const auto& j : args["observations"]) {
        std::string name = j["entityName"];
        auto exists = w->EntityExists(name);
        if (!exists.ok()) return ToolErrorFromStatus("add_observations", exists.status());
        if (!*exists) return EntityNotFound(name);
        Json added = Json::array();
        for (const auto& c : j["contents"]) {
          bool is_new = false;
          if (Status s = w->AddObservation(name, c, &is_new); !s.ok()) {
            return ToolErrorFromStatus("add_observations", s);
          }
          if (is_new) added.push_back(c);
        }
        count += added.size();
        results.push_back(Json{{"entityName", name}, {"addedObservations", std::move(added)}});
      }
      ToolResult r = Echo("results", std::move(results), "entities given observations");
      if (r.structured.contains("truncated")) r.structured["observationsAdded"] = count;
      return r;
    });
  };
  return t;
}

Tool DeleteEntitiesTool(ToolContext* ctx) {
  Store* store = ctx->store;
  Tool t;
  t.name = "delete_entities";
  t.title = "Delete Entities";
  t.description =
      "Delete multiple entities and their relations (history keeps them: as_of).";
  t.input_schema = OpenObjectSchema(
      Json{{"entityNames", ArrayOf(Json{{"type", "string"}}, "An array of entity names to delete")}},
      {"entityNames"});
  t.destructive = true;
  t.idempotent = true;
  t.handler = [store](const Json& args) {
    std::vector<std::string> names;
    std::set<std::string> seen;
    for (auto& name : StringArray(args["entityNames"])) {
      if (seen.insert(name).second) names.push_back(std::move(name));
    }
    return GraphWrite(store, "delete_entities", [&](GraphWriter* w) {
      std::vector<std::string> missing;
      size_t deleted = 0;
      for (const auto& name : names) {
        bool existed = false;
        if (Status s = w->DeleteEntity(name, &existed); !s.ok()) {
          return ToolErrorFromStatus("delete_entities", s);
        }
        deleted += existed;
        if (!existed) missing.push_back(name);
      }
      return SuccessMessage(missing.empty()
                                ? "Entities deleted successfully"
                                : "Deleted " + std::to_string(deleted) + " of " +
                                      std::to_string(names.size()) +
                                      " entities. Not found: " + JoinNames(missing));
    });
  };
  return t;
}

Tool DeleteObservationsTool(ToolContext* ctx) {
  Store* store = ctx->store;
  Tool t;
  t.name = "delete_observations";
  t.title = "Delete Observations";
  t.description = "Delete specific observations from entities in the knowledge graph.";
  t.input_schema = OpenObjectSchema(
      Json{{"deletions",
            ArrayOf(OpenObjectSchema(Json::parse(R"({
              "entityName": {"type": "string", "description": "Entity name"},
              "observations": {"type": "array", "items": {"type": "string"}, "description": "Observations to delete"}
            })"), {"entityName", "observations"}), "Observations to delete, per entity")}},
      {"deletions"});
  t.destructive = true;
  t.idempotent = true;
  t.handler = [store](const Json& args) {
    return GraphWrite(store, "delete_observations", [&](GraphWriter* w) {
      std::vector<std::string> missing;
      size_t requested = 0, deleted = 0;
      for (const auto& j : args["deletions"]) {
        std::string name = j["entityName"];
        requested += j["observations"].size();
        auto exists = w->EntityExists(name);
        if (!exists.ok()) return ToolErrorFromStatus("delete_observations", exists.status());
        if (!*exists) {
          missing.push_back(name);
          continue;
        }
        for (const auto& o : j["observations"]) {
          bool gone = false;
          if (Status s = w->DeleteObservation(name, o, &gone); !s.ok()) {
            return ToolErrorFromStatus("delete_observations", s);
          }
          deleted += gone;
        }
      }
      std::string message = deleted == requested
                                 ? "Observations deleted successfully"
                                 : "Deleted " + std::to_string(deleted) + " of " +
                                       std::to_string(requested) + " observations.";
      if (!missing.empty()) message += " Entities not found: " + JoinNames(missing);
      return SuccessMessage(message);
    });
  };
  return t;
}

Tool DeleteRelationsTool(ToolContext* ctx) {
  Store* store = ctx->store;
  Tool t;
  t.name = "delete_relations";
  t.title = "Delete Relations";
  t.description = "Delete multiple relations from the knowledge graph.";
  t.input_schema = OpenObjectSchema(
      Json{{"relations", ArrayOf(RelationSchema(), "An array of relations to delete")}},
      {"relations"});
  t.destructive = true;
  t.idempotent = true;
  t.handler = [store](const Json& args) {
    return GraphWrite(store, "delete_relations", [&](GraphWriter* w) {
      size_t deleted = 0, requested = args["relations"].size();
      for (const auto& j : args["relations"]) {
        bool gone = false;
        if (Status s = w->DeleteRelation(RelationFromJson(j), &gone); !s.ok()) {
          return ToolErrorFromStatus("delete_relations", s);
        }
        deleted += gone;
      }
      return SuccessMessage(deleted == requested
                                ? "Relations deleted successfully"
                                : "Deleted " + std::to_string(deleted) + " of " +
                                      std::to_string(requested) +
                                      " relations. The rest matched nothing.");
    });
  };
  return t;
}

// The paging arguments of read_graph, search_nodes and open_nodes.
Json GraphPageProperties() {
  return Merge(PageProperties(kDefaultGraphLimit, kMaxGraphLimit), AsOfProperties());
}

Tool ReadGraphTool(ToolContext* ctx) {
  Tool t;
  t.name = "read_graph";
  t.title = "Read Graph";
  t.description =
      "Read the knowledge graph, in pages (nextCursor). Prefer search_nodes or open_nodes.";
  t.input_schema = OpenObjectSchema(GraphPageProperties());
  t.read_only = true;
  t.idempotent = true;
  t.handler = [ctx](const Json& args) { return ListGraph(ctx, args, nullptr); };
  return t;
}

Tool SearchNodesTool(ToolContext* ctx) {
  Tool t;
  t.name = "search_nodes";
  t.title = "Search Nodes";
  t.description =
      "Search entities whose name, type or an observation contains the query, with their "
      "relations; in pages (nextCursor).";
  t.input_schema = OpenObjectSchema(
      Merge(Json{{"query",
                  {{"type", "string"},
                   {"maxLength", 2048},
                   {"description",
                    "The search query to match against entity names, types, and observation "
                    "content"}}}},
            GraphPageProperties()),
      {"query"});
  t.read_only = true;
  t.idempotent = true;
  t.handler = [ctx](const Json& args) {
    std::string q = args["query"];
    return ListGraph(ctx, args, &q);
  };
  return t;
}

Tool OpenNodesTool(ToolContext* ctx) {
  Tool t;
  t.name = "open_nodes";
  t.title = "Open Nodes";
  t.description =
      "Open entities by name, with their observations and relations; in pages (nextCursor).";
  t.input_schema = OpenObjectSchema(
      Merge(Json{{"names", Merge(ArrayOf(Json{{"type", "string"}},
                                         "An array of entity names to retrieve"),
                                 Json{{"maxItems", 1000}})}},
            GraphPageProperties()),
      {"names"});
  t.read_only = true;
  t.idempotent = true;
  t.handler = [ctx](const Json& args) {
    if (ctx->store == nullptr) return ToolError("open_nodes needs a store");
    auto start = PageStartFromArgs(args);
    if (!start.ok()) return ToolError(start.status().message());
    auto view = PageViewFromArgs(args, *start);
    if (!view.ok()) return ToolError(view.status().message());
    // The live view (base + delta) at the call's revision, as read_graph reads it;
    // a damaged cache found opening or reading it is discarded and read again.
    auto read = [&](snapshot::LiveView* live) -> Result<KnowledgeGraph> {
      AMEM_ASSIGN_OR_RETURN(opened, snapshot::OpenLive(*ctx->store, *view, ctx->live_options,
                                                       ctx->live.get()));
      *live = opened;
      snapshot::PrintNote(opened, "amem mcp");
      const snapshot::Reader& reader = *live->reader;
      const RelationOrder rel_order = StoreRelationOrder(reader, *ctx->store);
      // The entities in the order asked for, then their relations (each once).
      KnowledgeGraph g;
      std::set<std::string> seen_names;
      std::set<std::tuple<std::string, std::string, std::string>> seen_relations;
      for (const auto& j : args["names"]) {
        std::string name = j;
        if (!seen_names.insert(name).second) continue;
        std::vector<Relation> rels;
        auto e = EntityFromView(reader, rel_order, name, &rels);
        if (!e.ok() && !e.status().IsNotFound()) {
          AMEM_RETURN_IF_ERROR(reader.ContentStatus());
          return e.status();
        }
        if (!e.ok()) continue;
        g.entities.push_back(std::move(*e));
        for (auto& r : rels) {
          if (seen_relations.insert({r.from, r.to, r.relation_type}).second) {
            g.relations.push_back(std::move(r));
          }
        }
      }
      AMEM_RETURN_IF_ERROR(reader.ContentStatus());
      return g;
    };
    snapshot::LiveView live;
    auto g = read(&live);
    if (!g.ok() && DiscardBadLiveCache(ctx, "open_nodes", g.status(), live.reader ? &live : nullptr)) {
      live = {};
      g = read(&live);
    }
    if (!g.ok()) return ToolErrorFromStatus("open_nodes", g.status());
    return GraphPage(ListingOf(*g), args, *start, live.revision);
  };
  return t;
}

}  // namespace

void AddCompatTools(ToolRegistry* registry, ToolContext* ctx) {
  registry->Add(CreateEntitiesTool(ctx));
  registry->Add(CreateRelationsTool(ctx));
  registry->Add(AddObservationsTool(ctx));
  registry->Add(DeleteEntitiesTool(ctx));
  registry->Add(DeleteObservationsTool(ctx));
  registry->Add(DeleteRelationsTool(ctx));
  registry->Add(ReadGraphTool(ctx));
  registry->Add(SearchNodesTool(ctx));
  registry->Add(OpenNodesTool(ctx));
}

}  // namespace amem::mcp
