// Delta segments: compile (store change log -> bytes), open (validate), merge
// (base + delta -> the state at H). docs/FORMAT.md §11 is the layout.
#include "snapshot/delta.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

#include "common/coding.h"
#include "common/hash.h"
#include "snapshot/internal/emitter.h"
#include "snapshot/format.h"
#include "snapshot/internal/string_list.h"
#include "snapshot/writer.h"

namespace amem::snapshot {

namespace {

constexpr std::string_view kStubMeta = R"({"stub":"true"})";
constexpr uint32_t kPlacementStub = 1u << 0;
constexpr size_t kPlacementLength = 16;  // base_slot, gap, flags, reserved
constexpr size_t kDeltaEdgeLength = 48;
constexpr size_t kDeltaInfoLength = 40;
constexpr size_t kDeltaKvFixedLength = 16;  // ts i64, gap u32, reserved u32

// Header offsets.
constexpr size_t kVersionAt = 4, kBaseRevisionAt = 8, kHeadRevisionAt = 16,
                 kBaseNodesAt = 24, kBaseEdgesAt = 28, kBaseSizeAt = 32, kIndexAt = 40,
                 kBaseIdentityAt = 48, kHeadIdentityAt = 56;

Status Corrupt(std::string_view what) { return Status::Corruption("delta " + std::string(what)); }

// Where a node stands in a full export's order: (run, key), bytewise.
struct OrderKey {
  std::string_view run, key;
  friend bool operator<(const OrderKey& a, const OrderKey& b) {
    return std::tie(a.run, a.key) < std::tie(b.run, b.key);
  }
};

// The body of one block, built with the writer's Emitter (string lists, fixed ints).
template <typename Fn>
std::string Body(Fn&& fn) {
  std::string s;
  StringSink sink(&s);
  Emitter e(&sink);
  fn(&e);
  (void)e.Flush();  // a StringSink never fails
  return s;
}

void PutBlock(Emitter* out, DeltaTag tag, const std::string& body) {
  out->BeginBlock(static_cast<BlockTag>(tag), body.size());
  out->Append(body);
  out->EndBlock();
}

// The head of an out- or in-list block: list count, entry count, the node of each
// list, the offsets. `info(list)` gives (node, entries).
template <typename Lists, typename Info>
void PutListTable(Emitter* b, const Lists& lists, Info&& info) {
  uint32_t total = 0;
  for (const auto& l : lists) total += static_cast<uint32_t>(info(l).second);
  b->PutFixed32(static_cast<uint32_t>(lists.size()));
  b->PutFixed32(total);
  for (const auto& l : lists) b->PutFixed32(info(l).first);
  uint32_t off = 0;
  b->PutFixed32(0);
  for (const auto& l : lists) {
    off += static_cast<uint32_t>(info(l).second);
    b->PutFixed32(off);
  }
}

// ---------------------------------------------------------------------------
// Compile

struct HeadNode {
  bool present = false;  // live or stub at H
  bool stub = false;
  NodeRecord rec;        // what a full export at H writes for it (stub synthesized)
  std::optional<uint32_t> base;
  enum class Fate : uint8_t { kUnchanged, kRemoved, kInPlace, kInserted } fate = Fate::kUnchanged;
  bool moved = false;  // removed from its base slot and inserted elsewhere
  uint32_t delta = kNoNode;  // index among the delta nodes
};

}  // namespace

// What a compile read from the store, current at revision `head` (DeltaCompiler):
// the records the change log names since the base, and each one's state at `head`
// as read from the store. A change after `head` drops what it touches, so the next
// compile reads from the store only what changed since.
struct DeltaCompiler::State {
  const Reader* base = nullptr;
  uint64_t base_rev = 0, head = 0, head_identity = 0;
  std::set<std::string> node_keys;
  std::set<std::tuple<std::string, std::string, std::string>> edge_keys, kv_keys;
  std::set<std::string> defined;
  // Each named node as the store has it at `head` (present, stub, record, base slot);
  // the fate fields are worked out again by every compile.
  std::map<std::string, HeadNode, std::less<>> heads;
  std::map<std::string, std::vector<EdgeRecord>> out, in;  // Out/In at `head`
  std::map<std::tuple<std::string, std::string, std::string>, std::optional<KvRecord>> kv;
};

namespace {

class Compiler {
 public:
  Compiler(const Store& store, const Reader& base, uint64_t b, uint64_t h, uint64_t max_records,
           DeltaCompiler::State* state)
      : store_(store), base_(base), base_rev_(b), at_(ReadView::AtRevision(h)), head_rev_(h),
        max_records_(max_records), st_(*state), node_keys_(st_.node_keys),
        edge_keys_(st_.edge_keys), kv_keys_(st_.kv_keys), defined_(st_.defined),
        heads_(st_.heads), out_cache_(st_.out), in_cache_(st_.in) {}

  Result<DeltaSummary> Run(std::string* out);

 private:
  Status Collect();
  // The records the change log names so far: nodes, edges, kv entries, relations.
  uint64_t Named() const {
    return node_keys_.size() + edge_keys_.size() + kv_keys_.size() + defined_.size();
  }
  Status ResolveNodes();
  Status ReadHead(const std::string& key, HeadNode* out);
  Result<const std::vector<EdgeRecord>*> Edges(const std::string& key, bool out);
  OrderKey Order(std::string_view key) const;
  uint32_t Ref(std::string_view key) const;  // kNoNode when not a node at H
  uint32_t NodeGap(std::string_view run, std::string_view key) const;
  uint32_t KvGap(const std::string& scope, const std::string& ns, const std::string& key) const;
  void Relations();
  Status BuildLists();
  Status Kv();
  Status RunsAndTotals();
  void Drop(uint32_t b) {
    if (!dropped_source_[b]) {
      dropped_source_[b] = true;
      dropped_list_.push_back(b);
    }
  }
  uint32_t Str(std::string_view s);

  const Store& store_;
  const Reader& base_;
  uint64_t base_rev_;
  ReadView at_;
  uint64_t head_rev_;
  uint64_t max_records_;
  bool over_bound_ = false;

  // What the compile reads and names, kept by a DeltaCompiler between compiles.
  DeltaCompiler::State& st_;
  std::set<std::string>& node_keys_;
  std::set<std::tuple<std::string, std::string, std::string>>& edge_keys_, & kv_keys_;
  std::set<std::string>& defined_;
  std::map<std::string, HeadNode, std::less<>>& heads_;
  std::map<std::string, std::vector<EdgeRecord>>& out_cache_, & in_cache_;

  std::vector<std::string_view> delta_order_;  // keys of delta nodes, (run, key) order
  std::vector<uint32_t> removed_;
  std::vector<bool> dropped_source_;  // base nodes whose base out-range is not used
  std::vector<uint32_t> dropped_list_;  // the same, ascending

  std::string relation_names_[256];
  RelationId base_to_merged_[256] = {};
  std::map<std::string, RelationId, std::less<>> merged_rel_;

  struct OutList {
    uint32_t source;
    std::vector<DeltaEdge> edges;
  };
  std::vector<OutList> out_lists_;
  std::map<std::tuple<std::string, std::string, std::string>, uint32_t> delta_edge_;
  struct InList {
    uint32_t target;
    std::vector<uint32_t> entries;
  };
  std::vector<InList> in_lists_;
  std::vector<std::string> strings_;
  std::unordered_map<std::string, uint32_t> string_ids_;
  std::vector<std::string> edge_runs_;  // runs of delta edges (for the run table)

  std::vector<uint32_t> removed_kv_;
  std::vector<KvRecord> kv_insert_;
  std::vector<uint32_t> kv_gap_;

  std::set<std::string, std::less<>> used_runs_;  // runs of what the delta holds
  // The runs at H as an edit of the base's (0x09).
  std::vector<uint32_t> removed_sessions_;  // base sessions nothing at H uses
  std::vector<std::string_view> new_runs_;  // into used_runs_: runs the base lacks
  std::vector<uint32_t> new_run_gaps_;      // the base session each goes before
  DeltaTotals totals_;
  std::string nodes_file_;
};

// The records the change log since the base names up to the head, read one change
// at a time; stops (over_bound_) as soon as they are more than max_records_, so a
// delta that would be merged costs O(bound) here, whatever the log holds.
Status Compiler::Collect() {
  const Status stop = Status::Aborted("delta: the change log names more records than the bound");
  // From the head of what is kept (the base's revision for a first compile): what
  // a change touches is read again at the new head. A node's record and stub
  // depend on its own changes and those of its edges, an out-list on the edges
  // from it, an in-list on the edges to it (a node's delete leaves its edges).
  Status s = store_.ForEachChangeSinceRevision(st_.head, [&](const Change& ch) {
    if (ch.rev > head_rev_) return stop;
    switch (ch.kind) {
      case Change::Kind::kPutNode:
      case Change::Kind::kDeleteNode:
        node_keys_.insert(ch.key);
        heads_.erase(ch.key);
        break;
      case Change::Kind::kPutEdge:
      case Change::Kind::kDeleteEdge:
        node_keys_.insert(ch.src_key);
        node_keys_.insert(ch.dst_key);
        edge_keys_.emplace(ch.src_key, ch.rel_name, ch.dst_key);
        heads_.erase(ch.src_key);
        heads_.erase(ch.dst_key);
        out_cache_.erase(ch.src_key);
        in_cache_.erase(ch.dst_key);
        break;
      case Change::Kind::kPutKv:
      case Change::Kind::kDeleteKv:
        kv_keys_.emplace(ch.scope, ch.ns, ch.key);
        st_.kv.erase(std::make_tuple(ch.scope, ch.ns, ch.key));
        break;
      case Change::Kind::kDefineRelation:
        defined_.insert(ch.key.empty() ? ch.rel_name : ch.key);
        break;
    }
    if (Named() > max_records_) {
      over_bound_ = true;
      return stop;
    }
    return Status::OK();
  });
  // Aborted is only ever this callback's own stop (at the head, or past the bound).
  if (!s.ok() && !s.IsAborted()) return s;
  over_bound_ = over_bound_ || Named() > max_records_;  // kept names count too
  return Status::OK();
}

Result<const std::vector<EdgeRecord>*> Compiler::Edges(const std::string& key, bool out) {
  auto& cache = out ? out_cache_ : in_cache_;
  auto it = cache.find(key);
  if (it != cache.end()) return &it->second;
  auto edges = out ? store_.Out(key, {}, at_) : store_.In(key, {}, at_);
  if (!edges.ok()) return edges.status();
  return &cache.emplace(key, std::move(*edges)).first->second;
}

Status Compiler::ResolveNodes() {
  for (const std::string& key : node_keys_) {
    auto [it, fresh] = heads_.try_emplace(key);
    HeadNode& h = it->second;
    h.fate = HeadNode::Fate::kUnchanged;
    h.moved = false;
    h.delta = kNoNode;
    if (!fresh) continue;  // kept from the last compile: unchanged since its head
    Status read = ReadHead(key, &h);
    if (!read.ok()) {
      heads_.erase(it);
      return read;
    }
  }
  for (auto& [key, h] : heads_) {
    bool unchanged;
    if (!h.base) {
      unchanged = !h.present;
    } else if (!h.present) {
      unchanged = false;
    } else if (h.stub) {
      unchanged = base_.is_stub(*h.base) && base_.created_ts(*h.base) == h.rec.created_ts;
    } else {
      // The version live at H was written at or before B: the base holds it.
      unchanged = !base_.is_stub(*h.base) && h.rec.rev <= base_rev_;
    }
    if (unchanged) {
      h.fate = HeadNode::Fate::kUnchanged;
    } else if (!h.present) {
      h.fate = HeadNode::Fate::kRemoved;
    } else if (h.base && base_.run(*h.base) == h.rec.run) {
      h.fate = HeadNode::Fate::kInPlace;
    } else {
      h.fate = HeadNode::Fate::kInserted;
      h.moved = h.base.has_value();
    }
  }
  std::vector<std::pair<OrderKey, HeadNode*>> order;
  for (auto& [key, h] : heads_) {
    if (h.base && (h.fate == HeadNode::Fate::kRemoved || h.moved)) removed_.push_back(*h.base);
    if (h.fate == HeadNode::Fate::kInPlace || h.fate == HeadNode::Fate::kInserted) {
      order.emplace_back(OrderKey{h.rec.run, key}, &h);
    }
  }
  std::sort(removed_.begin(), removed_.end());
  std::sort(order.begin(), order.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  delta_order_.reserve(order.size());
  for (uint32_t d = 0; d < order.size(); ++d) {
    delta_order_.push_back(order[d].first.key);
    order[d].second->delta = d;
  }
  return Status::OK();
}

// Node `key` as the store has it at the head: its record, or the stub a full
// export writes for a dangling endpoint, or absent; and its base slot.
Status Compiler::ReadHead(const std::string& key, HeadNode* out) {
  HeadNode& h = *out;
  if (auto b = base_.FindKey(key)) h.base = *b;
  auto rec = store_.GetNode(key, at_);
  if (rec.ok()) {
    h.present = true;
    h.rec = std::move(*rec);
    return Status::OK();
  }
  if (!rec.status().IsNotFound()) return rec.status();
  AMEM_ASSIGN_OR_RETURN(outs, Edges(key, true));
  AMEM_ASSIGN_OR_RETURN(ins, Edges(key, false));
  if (!outs->empty() || !ins->empty()) {
    // A dangling endpoint: the writer's stub, dated by its oldest edge.
    int64_t ts = INT64_MAX;
    for (const auto* list : {outs, ins}) {
      for (const EdgeRecord& e : *list) ts = std::min(ts, e.created_ts);
    }
    h.present = h.stub = true;
    h.rec.id = NodeIdForKey(key);
    h.rec.key = key;
    h.rec.type = NodeType::kEntity;
    h.rec.meta = std::string(kStubMeta);
    h.rec.confidence = 0.0f;
    h.rec.created_ts = h.rec.updated_ts = ts;
  }
  return Status::OK();
}

OrderKey Compiler::Order(std::string_view key) const {
  auto it = heads_.find(key);
  if (it != heads_.end() && it->second.present) return {it->second.rec.run, it->first};
  auto b = base_.FindKey(key);
  return b ? OrderKey{base_.run(*b), key} : OrderKey{{}, key};
}

uint32_t Compiler::Ref(std::string_view key) const {
  auto it = heads_.find(key);
  if (it != heads_.end()) {
    const HeadNode& h = it->second;
    if (!h.present) return kNoNode;
    if (h.fate == HeadNode::Fate::kInserted || h.fate == HeadNode::Fate::kInPlace) {
      return kDeltaNode | h.delta;
    }
    return *h.base;
  }
  auto b = base_.FindKey(key);
  return b ? *b : kNoNode;
}

// The number of base nodes ordered before (run, key): where an inserted node goes.
uint32_t Compiler::NodeGap(std::string_view run, std::string_view key) const {
  uint32_t lo = 0, hi = base_.node_count();
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (OrderKey{base_.run(mid), base_.key(mid)} < OrderKey{run, key}) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

uint32_t Compiler::KvGap(const std::string& scope, const std::string& ns,
                         const std::string& key) const {
  uint32_t lo = 0, hi = base_.kv_count();
  auto want = std::tie(scope, ns, key);
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    KvEntry e = base_.kv(mid);
    if (std::tuple<std::string_view, std::string_view, std::string_view>(e.scope, e.ns, e.key) <
        std::tuple<std::string_view, std::string_view, std::string_view>(std::get<0>(want),
                                                                         std::get<1>(want),
                                                                         std::get<2>(want))) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// Relations at H: the base's plus those defined since, customs renumbered by name.
void Compiler::Relations() {
  std::set<std::string> custom(defined_.begin(), defined_.end());
  for (RelationId r : base_.relations()) {
    if (r >= kFirstCustomRelation) custom.emplace(base_.relation_name(r));
  }
  for (int r = 0; r < kBuiltinRelationCount; ++r) {
    relation_names_[r] = BuiltinRelationName(static_cast<RelationId>(r));
    merged_rel_.emplace(relation_names_[r], static_cast<RelationId>(r));
  }
  int next = kFirstCustomRelation;
  for (const std::string& name : custom) {
    if (ParseBuiltinRelation(name) || next > kMaxRelationId) continue;
    relation_names_[next] = name;
    merged_rel_.emplace(name, static_cast<RelationId>(next));
    ++next;
  }
  for (int r = 0; r <= kMaxRelationId; ++r) {
    auto it = merged_rel_.find(base_.relation_name(static_cast<RelationId>(r)));
    base_to_merged_[r] = it == merged_rel_.end() ? static_cast<RelationId>(r) : it->second;
  }
}

uint32_t Compiler::Str(std::string_view s) {
  auto [it, fresh] = string_ids_.emplace(std::string(s), static_cast<uint32_t>(strings_.size()));
  if (fresh) strings_.emplace_back(s);
  return it->second;
}

Status Compiler::BuildLists() {
  // Whose out-list and in-list are rewritten: the ends of every changed edge, and
  // around a node that moved (its run changed), every neighbour, whose list order
  // follows the moved node's new place.
  std::set<std::string> sources, targets;
  for (const auto& [src, rel, dst] : edge_keys_) {
    sources.insert(src);
    targets.insert(dst);
  }
  for (const auto& [key, h] : heads_) {
    if (!h.moved) continue;
    sources.insert(key);
    targets.insert(key);
    uint32_t b = *h.base;
    for (uint32_t j = base_.out_begin(b); j < base_.out_end(b); ++j) {
      targets.emplace(base_.key(base_.edge_target(j)));
    }
    for (uint32_t k = base_.in_begin(b); k < base_.in_end(b); ++k) {
      sources.emplace(base_.key(base_.in_source(k)));
    }
  }
  auto by_order = [&](const std::set<std::string>& keys) {
    std::vector<std::pair<OrderKey, const std::string*>> order;
    order.reserve(keys.size());
    for (const std::string& k : keys) order.emplace_back(Order(k), &k);
    std::sort(order.begin(), order.end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::reference_wrapper<const std::string>> v;
    v.reserve(order.size());
    for (const auto& o : order) v.emplace_back(*o.second);
    return v;
  };
  auto merged_rel = [&](const EdgeRecord& e) -> Result<RelationId> {
    auto it = merged_rel_.find(e.rel_name);
    if (it == merged_rel_.end()) {
      return Status::Corruption("delta: relation " + e.rel_name + " is not defined at revision " +
                                std::to_string(head_rev_));
    }
    return it->second;
  };
  auto base_edge = [&](uint32_t src, uint32_t dst, const std::string& rel) -> uint32_t {
    if (IsDeltaRef(src) || IsDeltaRef(dst) || src == kNoNode || dst == kNoNode) return kNoNode;
    auto r = base_.FindRelation(rel);
    if (!r) return kNoNode;
    auto j = base_.FindEdge(src, *r, dst);
    return j ? *j : kNoNode;
  };
  // A base slot replaced in place still names its node; moved and removed ones do not.
  auto base_ref = [&](std::string_view key) -> uint32_t {
    auto it = heads_.find(key);
    if (it != heads_.end()) {
      const HeadNode& h = it->second;
      if (!h.base || h.moved || h.fate == HeadNode::Fate::kRemoved) return kNoNode;
      return *h.base;
    }
    auto b = base_.FindKey(key);
    return b ? *b : kNoNode;
  };

  dropped_source_.assign(base_.node_count(), false);
  for (uint32_t b : removed_) Drop(b);
  uint32_t next_edge = 0;
  for (const std::string& s : by_order(sources)) {
    uint32_t source = Ref(s);
    if (source == kNoNode) continue;  // gone at H: its base range is dropped with it
    AMEM_ASSIGN_OR_RETURN(edges, Edges(s, true));
    struct Item {
      RelationId rel;
      OrderKey order;
      const EdgeRecord* e;
    };
    std::vector<Item> items;
    for (const EdgeRecord& e : *edges) {
      AMEM_ASSIGN_OR_RETURN(rel, merged_rel(e));
      items.push_back({rel, Order(e.dst_key), &e});
    }
    std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
      return std::tie(a.rel, a.order) < std::tie(b.rel, b.order);
    });
    OutList list{source, {}};
    uint32_t src_base = base_ref(s);
    if (src_base != kNoNode) Drop(src_base);
    for (const Item& it : items) {
      const EdgeRecord& e = *it.e;
      DeltaEdge d;
      d.target = Ref(e.dst_key);
      if (d.target == kNoNode) {
        return Status::Corruption("delta: edge " + s + " -> " + e.dst_key + " has no target");
      }
      d.rel = it.rel;
      d.weight = e.weight;
      d.created_ts = e.created_ts;
      d.updated_ts = e.updated_ts;
      d.run = e.run;
      d.task = e.task;
      d.payload = e.payload;
      if (e.rev <= base_rev_) d.base_edge = base_edge(src_base, base_ref(e.dst_key), e.rel_name);
      delta_edge_.emplace(std::make_tuple(s, e.rel_name, e.dst_key), next_edge++);
      edge_runs_.push_back(e.run);
      list.edges.push_back(d);
    }
    out_lists_.push_back(std::move(list));
  }

  for (const std::string& t : by_order(targets)) {
    uint32_t target = Ref(t);
    if (target == kNoNode) continue;
    AMEM_ASSIGN_OR_RETURN(edges, Edges(t, false));
    struct Item {
      RelationId rel;
      OrderKey order;
      uint32_t ref;
    };
    std::vector<Item> items;
    for (const EdgeRecord& e : *edges) {
      AMEM_ASSIGN_OR_RETURN(rel, merged_rel(e));
      uint32_t ref;
      auto it = delta_edge_.find(std::make_tuple(e.src_key, e.rel_name, t));
      if (it != delta_edge_.end()) {
        ref = kDeltaNode | it->second;
      } else {
        ref = base_edge(base_ref(e.src_key), base_ref(t), e.rel_name);
        if (ref == kNoNode) {
          return Status::Corruption("delta: unchanged edge " + e.src_key + " -> " + t +
                                    " is missing from the base");
        }
      }
      items.push_back({rel, Order(e.src_key), ref});
    }
    std::sort(items.begin(), items.end(), [](const Item& a, const Item& b) {
      return std::tie(a.rel, a.order) < std::tie(b.rel, b.order);
    });
    InList list{target, {}};
    for (const Item& it : items) list.entries.push_back(it.ref);
    in_lists_.push_back(std::move(list));
  }
  std::sort(dropped_list_.begin(), dropped_list_.end());
  return Status::OK();
}

Status Compiler::Kv() {
  for (const auto& name : kv_keys_) {
    const auto& [scope, ns, key] = name;
    auto [cached, fresh] = st_.kv.try_emplace(name);
    if (fresh) {  // else kept from the last compile: unchanged since its head
      auto rec = store_.GetKv(scope, ns, key, at_);
      if (!rec.ok() && !rec.status().IsNotFound()) {
        st_.kv.erase(cached);
        return rec.status();
      }
      if (rec.ok()) cached->second = std::move(*rec);
    }
    const std::optional<KvRecord>& rec = cached->second;
    auto base = base_.FindKv(scope, ns, key);
    if (rec && base && rec->rev <= base_rev_) continue;  // unchanged since B
    if (base) removed_kv_.push_back(*base);
    if (rec) {
      kv_gap_.push_back(KvGap(scope, ns, key));
      kv_insert_.push_back(*rec);
    }
  }
  std::sort(removed_kv_.begin(), removed_kv_.end());
  return Status::OK();
}

// Runs at H and the totals a full export at H would write.
Status Compiler::RunsAndTotals() {
  std::set<std::string, std::less<>>& used = used_runs_;
  for (const auto& [key, h] : heads_) {
    if (h.delta != kNoNode) used.insert(h.rec.run);
  }
  for (const std::string& r : edge_runs_) used.insert(r);
  for (const KvRecord& kv : kv_insert_) used.insert(kv.run);
  used.insert("");  // session 0 at H, always

  // The runs at H are an edit of the base's, found in O(changes log sessions): a
  // base run goes only when everything of the base that used it is gone and
  // nothing in the delta uses it, so only the runs of removed items are looked at.
  // Which base kv entries are removed, for the two rare walks of every entry.
  const auto removed_kv_mask = [&] {
    std::vector<bool> removed(base_.kv_count(), false);
    for (uint32_t k : removed_kv_) removed[k] = true;
    return removed;
  };
  std::set<std::string_view> lost;
  std::map<uint32_t, uint32_t> removed_per_session;
  for (uint32_t b : removed_) {
    ++removed_per_session[base_.session(b)];
    lost.insert(base_.run(b));
  }
  for (uint32_t b : dropped_list_) {
    for (uint32_t j = base_.out_begin(b); j < base_.out_end(b); ++j) lost.insert(base_.edge_run(j));
  }
  for (uint32_t k : removed_kv_) lost.insert(base_.kv(k).run);
  std::vector<uint32_t> candidates;  // base sessions whose nodes are all gone
  for (std::string_view run : lost) {
    if (run.empty() || used.count(run)) continue;
    const std::optional<uint32_t> s = base_.FindSession(run);
    if (!s) continue;  // not a base run (damaged base): nothing to remove
    const SessionRange range = base_.session_range(*s);
    auto removed = removed_per_session.find(*s);
    if (range.end - range.begin <= (removed == removed_per_session.end() ? 0 : removed->second)) {
      candidates.push_back(*s);
    }
  }
  std::sort(candidates.begin(), candidates.end());
  removed_sessions_.clear();
  if (!candidates.empty()) {
    // Rare (a run's last node went): look for an edge or kv entry still using it.
    const std::vector<bool> removed_kv = removed_kv_mask();
    std::set<std::string_view> left;
    for (uint32_t s : candidates) left.insert(base_.session_run(s));
    for (uint32_t j = 0; j < base_.edge_count() && !left.empty(); ++j) {
      if (!dropped_source_[base_.edge_source(j)]) left.erase(base_.edge_run(j));
    }
    for (uint32_t k = 0; k < base_.kv_count() && !left.empty(); ++k) {
      if (!removed_kv[k]) left.erase(base_.kv(k).run);
    }
    for (uint32_t s : candidates) {
      if (left.count(base_.session_run(s))) removed_sessions_.push_back(s);  // unused
    }
  }
  new_runs_.clear();
  new_run_gaps_.clear();
  for (const std::string& run : used) {  // ascending
    const std::optional<uint32_t> at = base_.SessionLowerBound(run);
    if (!at) return Status::Corruption("delta: the base's runs are not sorted");
    if (*at < base_.session_count() && base_.session_run(*at) == run) continue;  // kept
    new_runs_.push_back(run);
    new_run_gaps_.push_back(*at);
  }

  // Totals.
  uint64_t dropped_edges = 0;
  for (uint32_t b : dropped_list_) dropped_edges += base_.out_degree(b);
  uint32_t delta_edges = 0, delta_nodes_new = 0, delta_stubs = 0;
  for (const OutList& l : out_lists_) delta_edges += static_cast<uint32_t>(l.edges.size());
  int64_t newest = 0;
  bool at_risk = false;
  const int64_t base_newest = base_.newest_timestamp();
  uint32_t base_stubs_gone = 0;
  int64_t doc_change = 0;
  for (const auto& [key, h] : heads_) {
    if (h.delta != kNoNode) {
      if (h.fate == HeadNode::Fate::kInserted) ++delta_nodes_new;
      if (h.stub) ++delta_stubs;
      newest = std::max({newest, h.rec.created_ts, h.rec.updated_ts});
    }
    if (h.base && h.fate != HeadNode::Fate::kUnchanged) {
      uint32_t b = *h.base;
      if (base_.is_stub(b)) ++base_stubs_gone;
      doc_change -= base_.doc_length(b);
      if (base_.created_ts(b) == base_newest || base_.updated_ts(b) == base_newest) at_risk = true;
    }
  }
  for (const OutList& l : out_lists_) {
    for (const DeltaEdge& e : l.edges) newest = std::max({newest, e.created_ts, e.updated_ts});
  }
  for (const KvRecord& kv : kv_insert_) newest = std::max(newest, kv.ts);
  for (uint32_t b : dropped_list_) {
    for (uint32_t j = base_.out_begin(b); j < base_.out_end(b); ++j) {
      if (base_.edge_created_ts(j) == base_newest || base_.edge_updated_ts(j) == base_newest) {
        at_risk = true;
      }
    }
  }
  for (uint32_t k : removed_kv_) {
    if (base_.kv(k).ts == base_newest) at_risk = true;
  }
  if (!at_risk || newest >= base_newest) {
    // Everything at H is a kept base item (at most base_newest) or the delta's own:
    // a delta as new as the base's newest needs no walk of what it kept.
    newest = std::max(newest, base_newest);
  } else {
    // What made the base's newest timestamp is gone: take the newest of what is left.
    std::vector<bool> replaced(base_.node_count(), false);  // removed or replaced in place
    for (const auto& [key, h] : heads_) {
      if (h.base && h.fate != HeadNode::Fate::kUnchanged) replaced[*h.base] = true;
    }
    for (uint32_t i = 0; i < base_.node_count(); ++i) {
      if (!replaced[i]) newest = std::max({newest, base_.created_ts(i), base_.updated_ts(i)});
    }
    for (uint32_t j = 0; j < base_.edge_count(); ++j) {
      if (!dropped_source_[base_.edge_source(j)]) {
        newest = std::max({newest, base_.edge_created_ts(j), base_.edge_updated_ts(j)});
      }
    }
    const std::vector<bool> removed_kv = removed_kv_mask();
    for (uint32_t k = 0; k < base_.kv_count(); ++k) {
      if (!removed_kv[k]) newest = std::max(newest, base_.kv(k).ts);
    }
  }

  totals_.node_count =
      base_.node_count() - static_cast<uint32_t>(removed_.size()) + delta_nodes_new;
  totals_.edge_count = static_cast<uint32_t>(base_.edge_count() - dropped_edges + delta_edges);
  totals_.stub_count = base_.stub_count() - base_stubs_gone + delta_stubs;
  totals_.kv_count = base_.kv_count() - static_cast<uint32_t>(removed_kv_.size()) +
                     static_cast<uint32_t>(kv_insert_.size());
  totals_.session_count = base_.session_count() - static_cast<uint32_t>(removed_sessions_.size()) +
                          static_cast<uint32_t>(new_runs_.size());
  totals_.newest_ts = newest;
  totals_.doc_length_change = doc_change;  // the delta nodes' lengths are added after writing
  return Status::OK();
}

Result<DeltaSummary> Compiler::Run(std::string* out) {
  if (head_rev_ < base_rev_) {
    return Status::InvalidArgument("delta: head revision " + std::to_string(head_rev_) +
                                   " is before the base revision " + std::to_string(base_rev_));
  }
  AMEM_RETURN_IF_ERROR(Collect());
  if (over_bound_) {
    DeltaSummary over;
    over.records = Named();
    over.over_bound = true;
    return over;
  }
  AMEM_RETURN_IF_ERROR(ResolveNodes());
  Relations();
  AMEM_RETURN_IF_ERROR(BuildLists());
  AMEM_RETURN_IF_ERROR(Kv());
  AMEM_RETURN_IF_ERROR(RunsAndTotals());

  // The changed nodes as a snapshot of their own: no edges, content stored raw.
  StoreState nodes;
  nodes.dimension = base_.dimension();
  nodes.revision = head_rev_;
  for (std::string_view key : delta_order_) nodes.nodes.push_back(heads_.find(key)->second.rec);
  WriterOptions wo;
  wo.checksum = false;
  wo.compress = false;
  wo.entity_search = false;  // a delta's entities are read again (tools/mcp/graph_view.h)
  // A delta's few nodes: a second thread for their term index costs more to start
  // than it saves (the bytes are the same for any count).
  wo.threads = 1;
  AMEM_ASSIGN_OR_RETURN(file, BuildSnapshot(nodes, wo));
  AMEM_ASSIGN_OR_RETURN(reader, Reader::OpenBuffer(file));
  if (reader->node_count() != delta_order_.size()) return Corrupt("nodes: count");
  for (uint32_t d = 0; d < delta_order_.size(); ++d) {
    // The embedded file orders by (run, key) too; the placement relies on it.
    if (reader->key(d) != delta_order_[d]) return Corrupt("nodes: order");
    totals_.doc_length_change += reader->doc_length(d);
  }

  std::string& s = *out;
  s.clear();
  StringSink sink(&s);
  Emitter e(&sink);
  char header[kDeltaHeaderLength] = {};
  std::memcpy(header, kDeltaMagic, 4);
  EncodeFixed16(header + kVersionAt, kDeltaVersion);
  EncodeFixed64(header + kBaseRevisionAt, base_rev_);
  EncodeFixed64(header + kHeadRevisionAt, head_rev_);
  EncodeFixed32(header + kBaseNodesAt, base_.node_count());
  EncodeFixed32(header + kBaseEdgesAt, base_.edge_count());
  EncodeFixed64(header + kBaseSizeAt, base_.file_size());
  EncodeFixed64(header + kIndexAt, kDeltaHeaderLength);
  AMEM_ASSIGN_OR_RETURN(base_identity, store_.RevisionIdentity(base_rev_));
  AMEM_ASSIGN_OR_RETURN(head_identity, store_.RevisionIdentity(head_rev_));
  EncodeFixed64(header + kBaseIdentityAt, base_identity);
  EncodeFixed64(header + kHeadIdentityAt, head_identity);
  e.Append(std::string_view(header, sizeof(header)));

  PutBlock(&e, DeltaTag::kInfo, Body([&](Emitter* b) {
             b->PutFixed32(totals_.node_count);
             b->PutFixed32(totals_.edge_count);
             b->PutFixed32(totals_.stub_count);
             b->PutFixed32(totals_.kv_count);
             b->PutFixed32(totals_.session_count);
             b->PutFixed32(0);
             b->PutFixed64(static_cast<uint64_t>(totals_.newest_ts));
             b->PutFixed64(static_cast<uint64_t>(totals_.doc_length_change));
           }));
  PutBlock(&e, DeltaTag::kNodes, file);
  PutBlock(&e, DeltaTag::kPlacement, Body([&](Emitter* b) {
             for (std::string_view key : delta_order_) {
               const HeadNode& h = heads_.find(key)->second;
               bool in_place = h.fate == HeadNode::Fate::kInPlace;
               b->PutFixed32(in_place ? *h.base : kNoNode);
               b->PutFixed32(in_place ? *h.base : NodeGap(h.rec.run, key));
               b->PutFixed32(h.stub ? kPlacementStub : 0);
               b->PutFixed32(0);
             }
           }));
  PutBlock(&e, DeltaTag::kRemoved, Body([&](Emitter* b) {
             b->PutFixed32(static_cast<uint32_t>(removed_.size()));
             for (uint32_t r : removed_) b->PutFixed32(r);
           }));
  uint32_t total_edges = 0;
  for (const OutList& l : out_lists_) total_edges += static_cast<uint32_t>(l.edges.size());
  std::vector<uint32_t> str_idx;  // run, task, payload of each edge, interned in order
  for (const OutList& l : out_lists_) {
    for (const DeltaEdge& d : l.edges) {
      str_idx.push_back(Str(d.run));
      str_idx.push_back(Str(d.task));
      str_idx.push_back(Str(d.payload));
    }
  }
  PutBlock(&e, DeltaTag::kOutLists, Body([&](Emitter* b) {
             PutListTable(b, out_lists_, [](const OutList& l) {
               return std::make_pair(l.source, l.edges.size());
             });
             b->PutFixed32(0);  // 2 + 2 * lists + 1 words so far: 8-align the edges
             size_t k = 0;
             for (const OutList& l : out_lists_) {
               for (const DeltaEdge& d : l.edges) {
                 b->PutFixed32(d.target);
                 b->PutFixed32(d.rel);
                 char w[4];
                 EncodeFloat(w, d.weight);
                 b->Append(std::string_view(w, 4));
                 b->PutFixed32(d.base_edge);
                 b->PutFixed64(static_cast<uint64_t>(d.created_ts));
                 b->PutFixed64(static_cast<uint64_t>(d.updated_ts));
                 b->PutFixed32(str_idx[k++]);
                 b->PutFixed32(str_idx[k++]);
                 b->PutFixed32(str_idx[k++]);
                 b->PutFixed32(0);
               }
             }
           }));
  PutBlock(&e, DeltaTag::kInLists, Body([&](Emitter* b) {
             PutListTable(b, in_lists_, [](const InList& l) {
               return std::make_pair(l.target, l.entries.size());
             });
             for (const InList& l : in_lists_) {
               for (uint32_t r : l.entries) b->PutFixed32(r);
             }
           }));
  PutBlock(&e, DeltaTag::kKv, Body([&](Emitter* b) {
             b->PutFixed32(static_cast<uint32_t>(removed_kv_.size()));
             b->PutFixed32(static_cast<uint32_t>(kv_insert_.size()));
             for (uint32_t r : removed_kv_) b->PutFixed32(r);
             if (removed_kv_.size() % 2 != 0) b->PutFixed32(0);
             for (size_t k = 0; k < kv_insert_.size(); ++k) {
               b->PutFixed64(static_cast<uint64_t>(kv_insert_[k].ts));
               b->PutFixed32(kv_gap_[k]);
               b->PutFixed32(0);
             }
             std::vector<std::string_view> strs;
             for (const KvRecord& kv : kv_insert_) {
               strs.insert(strs.end(), {kv.scope, kv.ns, kv.key, kv.value, kv.run, kv.task});
             }
             PutStringList(b, strs, [](std::string_view v) { return v; });
           }));
  PutBlock(&e, DeltaTag::kRelations, Body([&](Emitter* b) {
             std::vector<std::string_view> names(std::begin(relation_names_),
                                                 std::end(relation_names_));
             PutStringList(b, names, [](std::string_view v) { return v; });
             b->Append(std::string_view(reinterpret_cast<const char*>(base_to_merged_), 256));
           }));
  PutBlock(&e, DeltaTag::kRuns, Body([&](Emitter* b) {
             b->PutFixed32(static_cast<uint32_t>(removed_sessions_.size()));
             b->PutFixed32(static_cast<uint32_t>(new_runs_.size()));
             for (uint32_t r : removed_sessions_) b->PutFixed32(r);
             for (uint32_t g : new_run_gaps_) b->PutFixed32(g);
             if ((removed_sessions_.size() + new_runs_.size()) % 2 != 0) b->PutFixed32(0);
             PutStringList(b, new_runs_, [](std::string_view v) { return v; });
           }));
  PutBlock(&e, DeltaTag::kStrings, Body([&](Emitter* b) {
             PutStringList(b, strings_, [](const std::string& v) -> std::string_view { return v; });
           }));
  uint64_t digest = e.Digest();
  e.BeginBlock(static_cast<BlockTag>(DeltaTag::kChecksum), 8);
  e.PutFixed64(digest);
  e.EndBlock();
  AMEM_RETURN_IF_ERROR(e.Flush());

  DeltaSummary summary;
  summary.nodes = static_cast<uint32_t>(delta_order_.size());
  summary.removed_nodes = static_cast<uint32_t>(removed_.size());
  summary.out_lists = static_cast<uint32_t>(out_lists_.size());
  summary.in_lists = static_cast<uint32_t>(in_lists_.size());
  summary.edges = total_edges;
  summary.bytes = s.size();
  uint64_t dropped_edges = 0, in_entries = 0;
  for (uint32_t b : dropped_list_) dropped_edges += base_.out_degree(b);
  for (const InList& l : in_lists_) in_entries += l.entries.size();
  summary.records = uint64_t{summary.nodes} + summary.removed_nodes + dropped_edges + total_edges +
                    in_entries + removed_kv_.size() + kv_insert_.size();
  return summary;
}

// ---------------------------------------------------------------------------
// Open

class Cursor {
 public:
  explicit Cursor(std::string_view body) : in_(body) {}
  bool U32(uint32_t* v) { return GetFixed32(&in_, v); }
  bool U64(uint64_t* v) { return GetFixed64(&in_, v); }
  bool Bytes(size_t n, const char** p) {
    if (in_.size() < n) return false;
    *p = in_.data();
    in_.remove_prefix(n);
    return true;
  }
  bool U32s(uint32_t n, std::vector<uint32_t>* v) {
    const char* p;
    if (n > in_.size() / 4 || !Bytes(4 * size_t{n}, &p)) return false;
    v->resize(n);
    for (uint32_t k = 0; k < n; ++k) (*v)[k] = DecodeFixed32(p + 4 * k);
    return true;
  }
  std::string_view* rest() { return &in_; }

 private:
  std::string_view in_;
};

bool Ascending(const std::vector<uint32_t>& v, uint32_t limit, bool strict) {
  for (size_t k = 0; k < v.size(); ++k) {
    if (v[k] >= limit) return false;
    if (k > 0 && (strict ? v[k] <= v[k - 1] : v[k] < v[k - 1])) return false;
  }
  return true;
}

Status ReadStrings(std::string_view* in, std::vector<std::string_view>* out, const char* what) {
  StringListView list;
  AMEM_RETURN_IF_ERROR(list.Parse(in));
  if (!list.Monotone()) return Corrupt(std::string(what) + ": offsets");
  out->resize(list.size());
  for (uint32_t k = 0; k < list.size(); ++k) (*out)[k] = list.Get(k);
  return Status::OK();
}

}  // namespace

Result<DeltaSummary> CompileDelta(const Store& store, const Reader& base, uint64_t base_revision,
                                  uint64_t head_revision, std::string* out,
                                  uint64_t max_records) {
  DeltaCompiler::State state;
  state.head = base_revision;
  Compiler c(store, base, base_revision, head_revision, max_records, &state);
  return c.Run(out);
}

DeltaCompiler::DeltaCompiler() = default;
DeltaCompiler::~DeltaCompiler() = default;

Result<DeltaSummary> DeltaCompiler::Compile(const Store& store, const Reader& base,
                                            uint64_t base_revision, uint64_t head_revision,
                                            std::string* out, uint64_t max_records) {
  // What is kept serves only the same base, a head at or after its own, and the
  // same history (a store restored or recreated in place names other commits).
  bool keep = state_ && state_->base == &base && state_->base_rev == base_revision &&
              state_->head <= head_revision;
  if (keep) {
    auto id = store.RevisionIdentity(state_->head);
    keep = id.ok() && *id == state_->head_identity;
  }
  if (!keep) {
    state_ = std::make_unique<State>();
    state_->base = &base;
    state_->base_rev = state_->head = base_revision;
  }
  Compiler c(store, base, base_revision, head_revision, max_records, state_.get());
  auto done = c.Run(out);
  auto head_identity = store.RevisionIdentity(head_revision);
  if (!done.ok() || done->over_bound || !head_identity.ok()) {
    state_.reset();  // half read, or stopped at the bound: the next compile starts over
    return done;
  }
  state_->head = head_revision;
  state_->head_identity = *head_identity;
  return done;
}

void DeltaCompiler::Reset() { state_.reset(); }

Delta::~Delta() = default;

Result<std::unique_ptr<Delta>> Delta::Open(const std::string& path, const Reader& base) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot open " + path);
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Status::IOError("cannot read " + path);
  return OpenBuffer(std::move(data), base);
}

Result<std::unique_ptr<Delta>> Delta::OpenBuffer(std::string_view data, const Reader& base) {
  return OpenBuffer(std::string(data), base);
}

Result<std::unique_ptr<Delta>> Delta::OpenBuffer(std::string&& data, const Reader& base) {
  std::unique_ptr<Delta> d(new Delta());
  d->data_ = std::move(data);  // heap memory: 8-aligned
  AMEM_RETURN_IF_ERROR(d->Parse(base));
  return d;
}

Status Delta::Parse(const Reader& base) {
  std::map<uint32_t, std::string_view> blocks;
  AMEM_RETURN_IF_ERROR(ParseFrame(base, &blocks));
  auto block = [&](DeltaTag t) { return blocks[static_cast<uint32_t>(t)]; };
  AMEM_RETURN_IF_ERROR(ParseInfo(block(DeltaTag::kInfo)));
  AMEM_RETURN_IF_ERROR(ParseNodes(block(DeltaTag::kNodes), base));
  AMEM_RETURN_IF_ERROR(ParsePlacement(block(DeltaTag::kPlacement), base));
  AMEM_RETURN_IF_ERROR(ParseRemoved(block(DeltaTag::kRemoved), base));
  AMEM_RETURN_IF_ERROR(ParseNames(block(DeltaTag::kStrings), block(DeltaTag::kRelations)));
  AMEM_RETURN_IF_ERROR(ParseRuns(block(DeltaTag::kRuns), base));
  AMEM_RETURN_IF_ERROR(ParseOutLists(block(DeltaTag::kOutLists), base));
  AMEM_RETURN_IF_ERROR(ParseInLists(block(DeltaTag::kInLists), base));
  AMEM_RETURN_IF_ERROR(ParseKv(block(DeltaTag::kKv), base));
  return CheckFit(base);
}

// Every reference is in range by now; what remains is that the delta fits its base:
// a layered view maps each of them to a node or an edge at H. Costs the delta's
// size plus the base degrees of the nodes it changes, never a walk of the base.
Status Delta::CheckFit(const Reader& base) const {
  const uint32_t nb = base.node_count();
  // Base nodes that are not at H in their own slot: removed, or replaced in place.
  std::vector<uint32_t> replaced;
  for (uint32_t d = 0; d < node_count(); ++d) {
    if (base_slot(d) != kNoNode) replaced.push_back(base_slot(d));
  }
  if (!std::is_sorted(replaced.begin(), replaced.end()) ||
      std::adjacent_find(replaced.begin(), replaced.end()) != replaced.end()) {
    return Corrupt("placement: a base slot replaced twice or out of order");
  }
  auto in = [](const std::vector<uint32_t>& v, uint32_t x) {
    return std::binary_search(v.begin(), v.end(), x);
  };
  auto is_removed = [&](uint32_t b) { return in(removed_, b); };
  for (uint32_t b : replaced) {
    if (is_removed(b)) return Corrupt("placement: a removed base node is also replaced");
  }
  // A base reference names a base node unchanged at H (changed ones are delta nodes).
  auto kept_ref = [&](uint32_t ref) {
    return IsDeltaRef(ref) || (ref < nb && !is_removed(ref) && !in(replaced, ref));
  };
  // The base slot a node reference stands in (kNoNode: a new node).
  auto slot_of = [&](uint32_t ref) { return IsDeltaRef(ref) ? base_slot(ref & ~kDeltaNode) : ref; };
  std::vector<uint32_t> out_slots = removed_, in_slots = removed_;
  for (uint32_t k = 0; k < out_list_count(); ++k) {
    if (!kept_ref(out_source(k))) return Corrupt("out-lists: a source is not a node at H");
    if (slot_of(out_source(k)) != kNoNode) out_slots.push_back(slot_of(out_source(k)));
  }
  for (uint32_t k = 0; k < in_list_count(); ++k) {
    if (!kept_ref(in_target(k))) return Corrupt("in-lists: a target is not a node at H");
    if (slot_of(in_target(k)) != kNoNode) in_slots.push_back(slot_of(in_target(k)));
  }
  std::sort(out_slots.begin(), out_slots.end());
  std::sort(in_slots.begin(), in_slots.end());
  // Base edges the delta copies: each from a base out-range it replaces.
  // A copy is the same edge: its source and target stand in the base edge's.
  std::vector<uint32_t> copied;
  for (uint32_t k = 0; k < out_list_count(); ++k) {
    for (uint32_t x = out_begin(k); x < out_begin(k + 1); ++x) {
      const char* p = edges_ + size_t{x} * kDeltaEdgeLength;
      if (!kept_ref(DecodeFixed32(p))) return Corrupt("out-lists: a target is not a node at H");
      const uint32_t be = DecodeFixed32(p + 12);
      if (be == kNoNode) continue;
      if (!in(out_slots, base.edge_source(be))) {
        return Corrupt("out-lists: a copied base edge is still in its base out-list");
      }
      if (slot_of(out_source(k)) != base.edge_source(be) ||
          slot_of(DecodeFixed32(p)) != base.edge_target(be)) {
        return Corrupt("out-lists: a copied base edge has other ends");
      }
      copied.push_back(be);
    }
  }
  std::sort(copied.begin(), copied.end());
  // A base edge in a replaced out-range that is not copied is gone: no base in-list
  // kept at H may name it (its target's in-list is the delta's, or removed).
  const uint32_t mb = base.edge_count();
  for (uint32_t s : out_slots) {
    if (base.out_end(s) > mb) return Corrupt("base: an out-list passes the edge count");
    for (uint32_t e = base.out_begin(s); e < base.out_end(s); ++e) {
      if (!in(copied, e) && !in(in_slots, base.edge_target(e))) {
        return Corrupt("in-lists: a kept base in-list names a gone edge");
      }
    }
  }
  // An unchanged base out-range never points at a removed node.
  for (uint32_t t : removed_) {
    if (base.in_end(t) > mb) return Corrupt("base: an in-list passes the edge count");
    for (uint32_t q = base.in_begin(t); q < base.in_end(t); ++q) {
      if (base.in_edge(q) >= mb) return Corrupt("base: an in-list entry names no edge");
      if (!in(out_slots, base.edge_source(base.in_edge(q)))) {
        return Corrupt("out-lists: a kept base edge points at a removed node");
      }
    }
  }
  // Each in-list entry is an edge at H into that list's node.
  for (uint32_t k = 0; k < in_list_count(); ++k) {
    const uint32_t t = in_target(k);
    for (uint32_t q = in_begin(k); q < in_begin(k + 1); ++q) {
      const uint32_t r = in_entry(q);
      bool fits;
      if (IsDeltaRef(r)) {
        fits = DecodeFixed32(edges_ + size_t{r & ~kDeltaNode} * kDeltaEdgeLength) == t;
      } else {
        const bool gone = in(out_slots, base.edge_source(r));
        fits = (!gone || in(copied, r)) && slot_of(t) == base.edge_target(r);
      }
      if (!fits) return Corrupt("in-lists: an entry is not an edge into its node");
    }
  }
  return Status::OK();
}

// The header, the checksum and the block directory: `blocks` by tag.
Status Delta::ParseFrame(const Reader& base, std::map<uint32_t, std::string_view>* blocks) {
  std::string_view file = data_;
  if (file.size() < kDeltaHeaderLength + kBlockHeaderLength + 8) {
    return Corrupt("header: too short");
  }
  const char* h = file.data();
  if (std::memcmp(h, kDeltaMagic, 4) != 0) return Corrupt("header: bad magic");
  if (DecodeFixed16(h + kVersionAt) != kDeltaVersion) return Corrupt("header: unknown version");
  base_revision_ = DecodeFixed64(h + kBaseRevisionAt);
  head_revision_ = DecodeFixed64(h + kHeadRevisionAt);
  base_identity_ = DecodeFixed64(h + kBaseIdentityAt);
  head_identity_ = DecodeFixed64(h + kHeadIdentityAt);
  if (head_revision_ < base_revision_) return Corrupt("header: head before base");
  if (DecodeFixed32(h + kBaseNodesAt) != base.node_count() ||
      DecodeFixed32(h + kBaseEdgesAt) != base.edge_count() ||
      DecodeFixed64(h + kBaseSizeAt) != base.file_size()) {
    return Status::InvalidArgument("delta: compiled against another base file");
  }
  if (DecodeFixed64(h + kIndexAt) != kDeltaHeaderLength) return Corrupt("header: index offset");

  // The checksum block is last: XXH3 of everything before its header.
  const size_t sum_at = file.size() - kBlockHeaderLength - 8;
  if (DecodeFixed32(file.data() + sum_at) != static_cast<uint32_t>(DeltaTag::kChecksum) ||
      DecodeFixed32(file.data() + sum_at + 4) != 8) {
    return Corrupt("checksum: missing");
  }
  if (Hash64(file.data(), sum_at, 0) != DecodeFixed64(file.data() + sum_at + kBlockHeaderLength)) {
    return Corrupt("checksum: mismatch");
  }

  std::string_view rest = file.substr(kDeltaHeaderLength, sum_at - kDeltaHeaderLength);
  uint32_t last = 0;
  while (!rest.empty()) {
    uint32_t tag, len;
    if (!GetFixed32(&rest, &tag) || !GetFixed32(&rest, &len) || len % 8 != 0 ||
        len > rest.size() || tag <= last) {
      return Corrupt("blocks: bad block header");
    }
    (*blocks)[tag] = rest.substr(0, len);
    rest.remove_prefix(len);
    last = tag;
  }
  for (DeltaTag t : {DeltaTag::kInfo, DeltaTag::kNodes, DeltaTag::kPlacement, DeltaTag::kRemoved,
                     DeltaTag::kOutLists, DeltaTag::kInLists, DeltaTag::kKv, DeltaTag::kRelations,
                     DeltaTag::kRuns, DeltaTag::kStrings}) {
    if (!blocks->count(static_cast<uint32_t>(t))) return Corrupt("blocks: a block is missing");
  }

  return Status::OK();
}

bool Delta::ValidNode(const Reader& base, uint32_t ref) const {
  return IsDeltaRef(ref) ? (ref & ~kDeltaNode) < nodes_->node_count() : ref < base.node_count();
}

Status Delta::ParseInfo(std::string_view b) {
  if (b.size() < kDeltaInfoLength) return Corrupt("info: short");
  const char* p = b.data();
  totals_.node_count = DecodeFixed32(p);
  totals_.edge_count = DecodeFixed32(p + 4);
  totals_.stub_count = DecodeFixed32(p + 8);
  totals_.kv_count = DecodeFixed32(p + 12);
  totals_.session_count = DecodeFixed32(p + 16);
  totals_.newest_ts = static_cast<int64_t>(DecodeFixed64(p + 24));
  totals_.doc_length_change = static_cast<int64_t>(DecodeFixed64(p + 32));
  return Status::OK();
}

// A whole .amem of its own, validated by its reader.
Status Delta::ParseNodes(std::string_view b, const Reader& base) {
  auto r = Reader::OpenBuffer(b);
  if (!r.ok()) return Corrupt("nodes: " + r.status().message());
  nodes_ = std::move(*r);
  if (nodes_->dimension() != base.dimension()) return Corrupt("nodes: dimension");
  return Status::OK();
}

Status Delta::ParsePlacement(std::string_view b, const Reader& base) {
  const uint32_t n = nodes_->node_count();
  const uint32_t base_n = base.node_count();
  if (b.size() < size_t{n} * kPlacementLength) return Corrupt("placement: short");
  placement_ = b.data();
  for (uint32_t d = 0; d < n; ++d) {
    uint32_t slot = base_slot(d), g = gap(d);
    uint32_t flags = DecodeFixed32(placement_ + d * kPlacementLength + 8);
    if ((slot != kNoNode && (slot >= base_n || g != slot)) || g > base_n || flags > 1) {
      return Corrupt("placement: out of range");
    }
    if (d > 0 && g < gap(d - 1)) return Corrupt("placement: not in order");
  }
  return Status::OK();
}

Status Delta::ParseRemoved(std::string_view b, const Reader& base) {
  Cursor c(b);
  uint32_t count;
  if (!c.U32(&count) || !c.U32s(count, &removed_) ||
      !Ascending(removed_, base.node_count(), true)) {
    return Corrupt("removed: bad list");
  }
  return Status::OK();
}

// Strings and relation names (needed to check edges).
Status Delta::ParseNames(std::string_view strings, std::string_view relations) {
  AMEM_RETURN_IF_ERROR(ReadStrings(&strings, &strings_, "strings"));
  AMEM_RETURN_IF_ERROR(ReadStrings(&relations, &relation_names_, "relations"));
  if (relation_names_.size() != 256 || relations.size() < 256) return Corrupt("relations: size");
  std::memcpy(base_to_merged_, relations.data(), 256);
  return Status::OK();
}

// The runs at H as an edit of the base's. Checks, in O(new runs) reads of the
// base's runs, that the runs at H are strictly sorted with "" first, as a full
// export's are, and that their count is the totals'.
Status Delta::ParseRuns(std::string_view b, const Reader& base) {
  Cursor c(b);
  uint32_t removed, inserted, pad;
  const uint32_t sessions = base.session_count();
  if (!c.U32(&removed) || !c.U32(&inserted) || !c.U32s(removed, &removed_sessions_) ||
      !Ascending(removed_sessions_, sessions, true)) {
    return Corrupt("runs: removed");
  }
  if (!c.U32s(inserted, &new_run_gaps_) ||
      !Ascending(new_run_gaps_, sessions + 1, false)) {
    return Corrupt("runs: gaps");
  }
  if ((removed + inserted) % 2 != 0 && !c.U32(&pad)) return Corrupt("runs: short");
  AMEM_RETURN_IF_ERROR(ReadStrings(c.rest(), &new_runs_, "runs"));
  if (new_runs_.size() != inserted) return Corrupt("runs: count");
  if (uint64_t{sessions} - removed + inserted != totals_.session_count) {
    return Corrupt("runs: the count differs from the totals");
  }
  for (uint32_t k = 0; k < inserted; ++k) {
    const std::string_view run = new_runs_[k];
    const uint32_t gap = new_run_gaps_[k];
    if ((k > 0 && !(new_runs_[k - 1] < run)) || (gap > 0 && !(base.session_run(gap - 1) < run)) ||
        (gap < sessions && !(run < base.session_run(gap)))) {
      return Corrupt("runs: a new run is out of order");
    }
  }
  // Session 0 at H is "": a new "" (before every base run), or the base's first.
  const bool first_new = inserted > 0 && new_run_gaps_[0] == 0;
  const bool first_ok =
      first_new ? new_runs_[0].empty()
                : sessions > 0 && base.session_run(0).empty() &&
                      (removed == 0 || removed_sessions_[0] != 0);
  if (!first_ok) return Corrupt("runs: entry 0 must be \"\"");
  return Status::OK();
}

Status Delta::ParseOutLists(std::string_view b, const Reader& base) {
  Cursor c(b);
  uint32_t lists, total;
  if (!c.U32(&lists) || !c.U32(&total) || !c.U32s(lists, &out_sources_) ||
      !c.U32s(lists + 1, &out_offsets_)) {
    return Corrupt("out-lists: short");
  }
  uint32_t pad;
  if (!c.U32(&pad)) return Corrupt("out-lists: short");
  if (out_offsets_.front() != 0 || !Ascending(out_offsets_, total + 1, false) ||
      out_offsets_.back() != total) {
    return Corrupt("out-lists: offsets");
  }
  for (uint32_t s : out_sources_) {
    if (!ValidNode(base, s)) return Corrupt("out-lists: source out of range");
  }
  if (total > c.rest()->size() / kDeltaEdgeLength) return Corrupt("out-lists: edges short");
  edges_ = c.rest()->data();
  for (uint32_t e = 0; e < total; ++e) {
    const char* p = edges_ + size_t{e} * kDeltaEdgeLength;
    uint32_t rel = DecodeFixed32(p + 4), base_edge = DecodeFixed32(p + 12);
    if (!ValidNode(base, DecodeFixed32(p)) || rel > kMaxRelationId ||
        relation_names_[rel].empty() || !std::isfinite(DecodeFloat(p + 8)) ||
        (base_edge != kNoNode && base_edge >= base.edge_count())) {
      return Corrupt("out-lists: edge " + std::to_string(e));
    }
    for (int k = 0; k < 3; ++k) {
      if (DecodeFixed32(p + 32 + 4 * k) >= strings_.size()) return Corrupt("out-lists: string");
    }
  }
  return Status::OK();
}

Status Delta::ParseInLists(std::string_view b, const Reader& base) {
  Cursor c(b);
  uint32_t lists, total;
  if (!c.U32(&lists) || !c.U32(&total) || !c.U32s(lists, &in_targets_) ||
      !c.U32s(lists + 1, &in_offsets_) || !c.U32s(total, &in_entries_)) {
    return Corrupt("in-lists: short");
  }
  if (in_offsets_.front() != 0 || !Ascending(in_offsets_, total + 1, false) ||
      in_offsets_.back() != total) {
    return Corrupt("in-lists: offsets");
  }
  for (uint32_t t : in_targets_) {
    if (!ValidNode(base, t)) return Corrupt("in-lists: target out of range");
  }
  for (uint32_t r : in_entries_) {
    bool ok = IsDeltaRef(r) ? (r & ~kDeltaNode) < edge_count() : r < base.edge_count();
    if (!ok) return Corrupt("in-lists: edge reference out of range");
  }
  return Status::OK();
}

Status Delta::ParseKv(std::string_view b, const Reader& base) {
  Cursor c(b);
  uint32_t removed, inserted;
  if (!c.U32(&removed) || !c.U32(&inserted) || !c.U32s(removed, &removed_kv_) ||
      !Ascending(removed_kv_, base.kv_count(), true)) {
    return Corrupt("kv: removed");
  }
  uint32_t pad;
  if (removed % 2 != 0 && !c.U32(&pad)) return Corrupt("kv: short");
  const char* fixed;
  if (inserted > c.rest()->size() / kDeltaKvFixedLength ||
      !c.Bytes(size_t{inserted} * kDeltaKvFixedLength, &fixed)) {
    return Corrupt("kv: short");
  }
  std::vector<std::string_view> strs;
  AMEM_RETURN_IF_ERROR(ReadStrings(c.rest(), &strs, "kv"));
  if (strs.size() != 6 * size_t{inserted}) return Corrupt("kv: string count");
  kv_.resize(inserted);
  for (uint32_t k = 0; k < inserted; ++k) {
    DeltaKvEntry& e = kv_[k];
    e.ts = static_cast<int64_t>(DecodeFixed64(fixed + k * kDeltaKvFixedLength));
    e.gap = DecodeFixed32(fixed + k * kDeltaKvFixedLength + 8);
    if (e.gap > base.kv_count() || (k > 0 && e.gap < kv_[k - 1].gap)) return Corrupt("kv: gap");
    e.scope = strs[6 * k];
    e.ns = strs[6 * k + 1];
    e.key = strs[6 * k + 2];
    e.value = strs[6 * k + 3];
    e.run = strs[6 * k + 4];
    e.task = strs[6 * k + 5];
  }
  return Status::OK();
}

uint32_t Delta::base_slot(uint32_t d) const {
  return DecodeFixed32(placement_ + size_t{d} * kPlacementLength);
}
uint32_t Delta::gap(uint32_t d) const {
  return DecodeFixed32(placement_ + size_t{d} * kPlacementLength + 4);
}
bool Delta::is_stub(uint32_t d) const {
  return (DecodeFixed32(placement_ + size_t{d} * kPlacementLength + 8) & kPlacementStub) != 0;
}

DeltaEdge Delta::edge(uint32_t e) const {
  const char* p = edges_ + size_t{e} * kDeltaEdgeLength;
  DeltaEdge d;
  d.target = DecodeFixed32(p);
  d.rel = static_cast<RelationId>(DecodeFixed32(p + 4));
  d.weight = DecodeFloat(p + 8);
  d.base_edge = DecodeFixed32(p + 12);
  d.created_ts = static_cast<int64_t>(DecodeFixed64(p + 16));
  d.updated_ts = static_cast<int64_t>(DecodeFixed64(p + 24));
  d.run = strings_[DecodeFixed32(p + 32)];
  d.task = strings_[DecodeFixed32(p + 36)];
  d.payload = strings_[DecodeFixed32(p + 40)];
  return d;
}

// ---------------------------------------------------------------------------
// Merged numbering

namespace {

// Base nodes whose base out-range the delta replaces or removes.
std::vector<bool> DroppedSources(const Reader& base, const Delta& delta) {
  std::vector<bool> dropped(base.node_count(), false);
  for (uint32_t b : delta.removed()) dropped[b] = true;
  for (uint32_t k = 0; k < delta.out_list_count(); ++k) {
    // A list replaces its source's base range, also when the source is a delta
    // node placed over a base slot.
    uint32_t s = delta.out_source(k);
    if (IsDeltaRef(s)) s = delta.base_slot(s & ~kDeltaNode);
    if (s != kNoNode) dropped[s] = true;
  }
  return dropped;
}

}  // namespace

Result<MergedSequence> NodeSequence(const Reader& base, const Delta& delta) {
  std::vector<MergedSequence::Range> removed;
  for (uint32_t b : delta.removed()) removed.push_back({b, b + 1});
  std::vector<MergedSequence::Block> blocks;
  for (uint32_t d = 0; d < delta.node_count(); ++d) {
    if (delta.base_slot(d) != kNoNode) removed.push_back({delta.base_slot(d), delta.base_slot(d) + 1});
    blocks.push_back({delta.gap(d), 1});
  }
  return MergedSequence::Make(base.node_count(), std::move(removed), std::move(blocks));
}

Result<MergedSequence> EdgeSequence(const Reader& base, const Delta& delta) {
  const uint32_t n = base.node_count();
  std::vector<bool> dropped = DroppedSources(base, delta);
  std::vector<MergedSequence::Range> removed;
  for (uint32_t b = 0; b < n; ++b) {
    if (dropped[b]) removed.push_back({base.out_begin(b), base.out_end(b)});
  }
  auto edge_gap = [&](uint32_t node) { return node < n ? base.out_begin(node) : base.edge_count(); };
  std::vector<MergedSequence::Block> blocks;
  for (uint32_t k = 0; k < delta.out_list_count(); ++k) {
    uint32_t s = delta.out_source(k);
    uint32_t at = IsDeltaRef(s) ? delta.gap(s & ~kDeltaNode) : s;
    blocks.push_back({edge_gap(at), delta.out_begin(k + 1) - delta.out_begin(k)});
  }
  return MergedSequence::Make(base.edge_count(), std::move(removed), std::move(blocks));
}

// ---------------------------------------------------------------------------
// Merge

Result<StoreState> MergeState(const Reader& base, const Delta& delta) {
  // Every text is copied: a damaged block must fail the merge, not read as "".
  AMEM_RETURN_IF_ERROR(base.DecodeAllContent());
  AMEM_RETURN_IF_ERROR(delta.nodes().DecodeAllContent());
  const uint32_t base_n = base.node_count();
  std::vector<bool> gone(base_n, false);
  for (uint32_t b : delta.removed()) gone[b] = true;
  for (uint32_t d = 0; d < delta.node_count(); ++d) {
    if (delta.base_slot(d) != kNoNode) gone[delta.base_slot(d)] = true;
  }
  const std::vector<bool> dropped = DroppedSources(base, delta);
  auto key_of = [&](uint32_t ref) -> std::string_view {
    return IsDeltaRef(ref) ? delta.nodes().key(ref & ~kDeltaNode) : base.key(ref);
  };

  StoreState st;
  st.dimension = base.dimension();
  st.revision = delta.head_revision();
  for (int r = 0; r <= kMaxRelationId; ++r) {
    if (!delta.relation_name(static_cast<RelationId>(r)).empty()) {
      st.relations.emplace_back(static_cast<RelationId>(r),
                                std::string(delta.relation_name(static_cast<RelationId>(r))));
    }
  }
  auto node_from = [](const Reader& r, uint32_t i) {
    NodeRecord n;
    n.key = r.key(i);
    n.id = NodeIdForKey(n.key);
    n.type = r.type(i);
    n.content = r.content(i);
    n.meta = r.meta(i);
    n.confidence = r.confidence(i);
    n.scope = r.scope(i);
    n.run = r.run(i);
    n.task = r.task(i);
    n.created_ts = r.created_ts(i);
    n.updated_ts = r.updated_ts(i);
    if (const float* v = r.vector(i)) n.vector.assign(v, v + r.dimension());
    return n;
  };
  auto add_edge = [&](std::string_view src, std::string_view dst, RelationId rel,
                      float weight, std::string_view payload, std::string_view run,
                      std::string_view task, int64_t created, int64_t updated) {
    EdgeRecord e;
    e.src_key = src;
    e.dst_key = dst;
    e.src = NodeIdForKey(src);
    e.dst = NodeIdForKey(dst);
    e.rel = rel;
    e.rel_name = delta.relation_name(rel);
    e.weight = weight;
    e.payload = payload;
    e.run = run;
    e.task = task;
    e.created_ts = created;
    e.updated_ts = updated;
    st.edges.push_back(std::move(e));
  };
  auto add_kv = [&](std::string_view scope, std::string_view ns, std::string_view key,
                    std::string_view value, std::string_view run, std::string_view task,
                    int64_t ts) {
    KvRecord r;
    r.scope = scope;
    r.ns = ns;
    r.key = key;
    r.value = value;
    r.run = run;
    r.task = task;
    r.ts = ts;
    st.kv.push_back(std::move(r));
  };
  for (uint32_t i = 0; i < base_n; ++i) {
    if (!gone[i] && !base.is_stub(i)) st.nodes.push_back(node_from(base, i));
  }
  for (uint32_t d = 0; d < delta.node_count(); ++d) {
    if (!delta.is_stub(d)) st.nodes.push_back(node_from(delta.nodes(), d));
  }
  for (uint32_t b = 0; b < base_n; ++b) {
    if (dropped[b]) continue;
    for (uint32_t j = base.out_begin(b); j < base.out_end(b); ++j) {
      uint32_t t = base.edge_target(j);
      if (gone[t] && delta.removed().size() > 0 &&
          std::binary_search(delta.removed().begin(), delta.removed().end(), t)) {
        return Status::Corruption("delta: the unchanged base edge " + std::string(base.key(b)) +
                                  " -> " + std::string(base.key(t)) + " points at a removed node");
      }
      add_edge(base.key(b), base.key(t), delta.merged_relation(base.edge_rel(j)),
               base.edge_weight(j), base.edge_payload(j), base.edge_run(j), base.edge_task(j),
               base.edge_created_ts(j), base.edge_updated_ts(j));
    }
  }
  for (uint32_t k = 0; k < delta.out_list_count(); ++k) {
    std::string_view src = key_of(delta.out_source(k));
    for (uint32_t x = delta.out_begin(k); x < delta.out_begin(k + 1); ++x) {
      DeltaEdge d = delta.edge(x);
      add_edge(src, key_of(d.target), d.rel, d.weight, d.payload, d.run, d.task, d.created_ts,
               d.updated_ts);
    }
  }
  std::vector<bool> kv_gone(base.kv_count(), false);
  for (uint32_t k : delta.removed_kv()) kv_gone[k] = true;
  for (uint32_t k = 0; k < base.kv_count(); ++k) {
    if (kv_gone[k]) continue;
    KvEntry e = base.kv(k);
    add_kv(e.scope, e.ns, e.key, e.value, e.run, e.task, e.ts);
  }
  for (uint32_t k = 0; k < delta.kv_count(); ++k) {
    const DeltaKvEntry& e = delta.kv(k);
    add_kv(e.scope, e.ns, e.key, e.value, e.run, e.task, e.ts);
  }
  return st;
}

}  // namespace amem::snapshot
