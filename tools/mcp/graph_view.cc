#include "tools/mcp/graph_view.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "common/coding.h"
#include "common/hash.h"
#include "common/tokenizer.h"
#include "snapshot/delta.h"
#include "tools/mcp/common.h"

namespace amem::mcp {
namespace {

using snapshot::Reader;

constexpr std::string_view kEntityPrefix = "entity:";
constexpr std::string_view kObsPrefix = "obs:";
constexpr size_t kHashSuffix = 17;  // "#" + 16 hex digits
// What checking a candidate costs, in postings decoded: a memmem over its text,
// or tokenizing its fields (the word rule).
constexpr size_t kCheckText = 16;
constexpr size_t kCheckWords = 256;

using NameSet = std::set<std::string, std::less<>>;

bool Contains(std::string_view haystack, const std::string& lowered_needle) {
  return AsciiLower(haystack).find(lowered_needle) != std::string::npos;
}

bool EntityMatches(const Entity& e, const std::string& lowered) {
  if (Contains(e.name, lowered) || Contains(e.entity_type, lowered)) return true;
  for (const std::string& o : e.observations) {
    if (Contains(o, lowered)) return true;
  }
  return false;
}

// The words of `text` (common/tokenizer.h), sorted and distinct.
std::vector<std::string> SortedWords(std::string_view text) {
  std::vector<std::string> words = Tokenize(text);
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  return words;
}

// search_nodes' word rule: every word of the query (`words`, sorted, not empty) is
// a word of one field, so `write batch` finds `WriteBatch`.
bool EntityHasWords(const Entity& e, const std::vector<std::string>& words) {
  auto has = [&](std::string_view field) {
    const std::vector<std::string> have = SortedWords(field);
    return std::includes(have.begin(), have.end(), words.begin(), words.end());
  };
  if (has(e.name) || has(e.entity_type)) return true;
  return std::any_of(e.observations.begin(), e.observations.end(), has);
}

void AddSlot(const Reader& r, uint32_t i, std::vector<ObservationSlot>* slots) {
  slots->push_back({ObservationSeq(r.meta(i)), std::string(r.key(i)), std::string(r.content(i))});
}

// The relations of node i's out-edges to entities, i being entity `from`, in a
// full listing's order: (store's relation id, target key), as the store sorts edges.
void AppendRelations(const Reader& r, const RelationOrder& rel_order, uint32_t i,
                     std::string_view from, std::vector<Relation>* out) {
  std::vector<std::tuple<uint16_t, std::string_view, uint32_t>> edges;
  for (uint32_t j = r.out_begin(i); j < r.out_end(i); ++j) {
    std::string_view to;
    if (EntityNameOf(r.key(r.edge_target(j)), &to)) {
      edges.emplace_back(rel_order[r.edge_rel(j)], to, j);
    }
  }
  std::sort(edges.begin(), edges.end());
  for (const auto& [rank, to, j] : edges) {
    for (auto& t : RelationTypesFrom(r.edge_payload(j), r.relation_name(r.edge_rel(j)))) {
      out->push_back({std::string(from), std::string(to), std::move(t)});
    }
  }
}

// One or two bytes: their index among the short grams.
constexpr size_t kShortGrams = 256 + 65536;
size_t ShortGram(const char* p, size_t length) {
  const size_t b = static_cast<uint8_t>(p[0]);
  return length == 1 ? b : 256 + (b << 8 | static_cast<uint8_t>(p[1]));
}

uint32_t Trigram(const char* p) {
  return (uint32_t{static_cast<uint8_t>(p[0])} << 16) |
         (uint32_t{static_cast<uint8_t>(p[1])} << 8) | uint32_t{static_cast<uint8_t>(p[2])};
}

// Ascending entity numbers, as varint gaps.
struct TrigramPostings {
  std::string bytes;
  uint32_t count = 0, last = 0;
  void Add(uint32_t k) {
    PutVarint32(&bytes, count == 0 ? k : k - last);
    last = k;
    ++count;
  }
  std::vector<uint32_t> Decode() const {
    std::vector<uint32_t> out;
    out.reserve(count);
    std::string_view in(bytes);
    uint32_t v = 0, gap = 0;
    while (GetVarint32(&in, &gap)) {
      v = out.empty() ? gap : v + gap;
      out.push_back(v);
    }
    return out;
  }
};

// Trigram -> postings, open addressing over a power-of-two table. The distinct
// trigrams of text number in the tens of thousands, so the table stays in cache
// while the base's text is indexed, one probe per byte (a node-based map made
// indexing several times slower).
class TrigramTable {
 public:
  const TrigramPostings* Find(uint32_t t) const {
    if (keys_.empty()) return nullptr;
    for (size_t i = Slot(t);; i = (i + 1) & mask_) {
      if (keys_[i] == t) return &lists_[index_[i]];
      if (keys_[i] == kEmpty) return nullptr;
    }
  }
  TrigramPostings& Get(uint32_t t) {
    if (2 * (lists_.size() + 1) > keys_.size()) Grow();
    size_t i = Slot(t);
    for (; keys_[i] != t; i = (i + 1) & mask_) {
      if (keys_[i] == kEmpty) {
        keys_[i] = t;
        index_[i] = static_cast<uint32_t>(lists_.size());
        lists_.emplace_back();
        break;
      }
    }
    return lists_[index_[i]];
  }

 private:
  static constexpr uint32_t kEmpty = 0xFFFFFFFFu;  // no trigram: they fit in 24 bits
  size_t Slot(uint32_t t) const { return (t * 0x9E3779B1u) >> shift_ & mask_; }
  void Grow() {
    const size_t capacity = keys_.empty() ? 1024 : 2 * keys_.size();
    std::vector<uint32_t> keys(capacity, kEmpty), index(capacity);
    mask_ = capacity - 1;
    shift_ = 32 - std::countr_zero(capacity);
    for (size_t j = 0; j < keys_.size(); ++j) {
      if (keys_[j] == kEmpty) continue;
      size_t i = Slot(keys_[j]);
      while (keys[i] != kEmpty) i = (i + 1) & mask_;
      keys[i] = keys_[j];
      index[i] = index_[j];
    }
    keys_.swap(keys);
    index_.swap(index);
  }

  std::vector<uint32_t> keys_, index_;
  std::vector<TrigramPostings> lists_;
  size_t mask_ = 0;
  int shift_ = 0;
};

}  // namespace

// The store's id of each of a reader's relation ids. A snapshot renumbers custom
// relations by name (docs/FORMAT.md §4); the store orders edges by its own ids,
// handed out in the order relations were defined, and so does a listing.
RelationOrder StoreRelationOrder(const Reader& r, const Store& store) {
  RelationOrder order{};
  for (int id = 0; id < 256; ++id) order[id] = static_cast<uint16_t>(256 + id);
  for (RelationId id : r.relations()) {
    auto stored = store.LookupRelation(r.relation_name(id));
    if (stored.ok()) order[id] = *stored;
  }
  return order;
}

Result<Entity> EntityFromView(const Reader& r, const RelationOrder& rel_order,
                              const std::string& name, std::vector<Relation>* relations) {
  const std::string key = EntityKey(name);
  auto found = r.FindKey(key);
  if (!found || r.is_stub(*found)) return Status::NotFound("no entity " + name);
  const uint32_t i = *found;
  Entity e{name, EntityTypeFrom(r.meta(i), r.type(i)), {}};
  // The store lists a node's edges by (its relation id, the other end's id).
  auto by_store_order = [&](std::vector<std::tuple<uint16_t, uint64_t, uint32_t>>* edges) {
    std::sort(edges->begin(), edges->end());
  };
  std::vector<std::tuple<uint16_t, uint64_t, uint32_t>> in, out;
  for (uint32_t k = r.in_begin(i); k < r.in_end(i); ++k) {
    const uint32_t j = r.in_edge(k);
    in.emplace_back(rel_order[r.edge_rel(j)], r.id(r.edge_source(j)), j);
  }
  for (uint32_t j = r.out_begin(i); j < r.out_end(i); ++j) {
    out.emplace_back(rel_order[r.edge_rel(j)], r.id(r.edge_target(j)), j);
  }
  by_store_order(&in);
  by_store_order(&out);
  std::vector<ObservationSlot> slots;
  for (const auto& [rank, id, j] : in) {
    const uint32_t src = r.edge_source(j);
    const std::string_view src_key = r.key(src), rel_name = r.relation_name(r.edge_rel(j));
    std::string_view owner, src_name;
    if (rel_name == "part_of" && ObservationEntityOf(src_key, &owner) && owner == name) {
      if (!r.is_stub(src)) AddSlot(r, src, &slots);
      continue;
    }
    if (!EntityNameOf(src_key, &src_name) || src_key == key) continue;
    for (auto& t : RelationTypesFrom(r.edge_payload(j), rel_name)) {
      relations->push_back({std::string(src_name), name, std::move(t)});
    }
  }
  for (const auto& [rank, id, j] : out) {
    std::string_view dst_name;
    if (!EntityNameOf(r.key(r.edge_target(j)), &dst_name)) continue;
    for (auto& t : RelationTypesFrom(r.edge_payload(j), r.relation_name(r.edge_rel(j)))) {
      relations->push_back({name, std::string(dst_name), std::move(t)});
    }
  }
  SortObservations(&slots, &e);
  return e;
}

// One full snapshot's compatibility graph.
struct BaseGraph {
  uint64_t revision = 0;
  std::shared_ptr<const Reader> reader;
  std::vector<Entity> entities;    // live entity nodes, by name
  std::vector<Relation> relations;  // by (from, rel, to)
  // (owner, node) of every live observation node, sorted: an entity's candidates
  // when a delta touches it (its observation may be orphaned in the base).
  std::vector<std::pair<std::string_view, uint32_t>> observations;

  // search_nodes' text, made on the first search: each entity's lowered name, type
  // and observations, each followed by a NUL (entity k's are [starts[k],
  // starts[k + 1])), and the entities holding each trigram of it (none spans a
  // NUL). A query of one or two bytes matches exactly the entities holding it as
  // a byte or a pair: those have lists of their own, indexed directly.
  mutable std::once_flag search_once;
  mutable std::string text;
  mutable std::vector<size_t> starts;
  mutable TrigramTable postings;
  mutable std::vector<TrigramPostings> short_postings;  // byte b: b; pair ab: 256 + ab

  static std::shared_ptr<const BaseGraph> Build(std::shared_ptr<const Reader> r, uint64_t revision,
                                                const Store& store);
  void BuildSearch() const;
  // The first `max` entities, ascending, that match search_nodes' rules (the
  // lowered query as a substring of one field, or, when `words` is not empty,
  // every one of them as a word of one field) and that `skip` does not leave out:
  // the first `max` of each rule (FindBy), merged.
  std::vector<uint32_t> Find(const std::string& lowered, const std::vector<std::string>& words,
                             size_t max, const std::function<bool(uint32_t)>& skip) const;
  // The first `max` entities, ascending, that hold every gram of each of `parts`
  // (lowered, not empty, no NUL) and pass `check`. The candidates are the
  // shortest gram list's, checked in order; after checks that cost as much as
  // decoding the next list (one check costs about `check_cost` postings), the
  // candidates left are intersected with it. So a page of a query that most
  // entities match stops after a few checks, and a rare one decodes the lists
  // that narrow it: O(postings decoded + candidates checked), each kept near the
  // other, and not O(matches).
  std::vector<uint32_t> FindBy(const std::vector<std::string>& parts, size_t check_cost,
                               size_t max, const std::function<bool(uint32_t)>& check) const;
  bool TextContains(uint32_t k, const std::string& lowered) const {
    return ::memmem(text.data() + starts[k], starts[k + 1] - starts[k], lowered.data(),
                    lowered.size()) != nullptr;
  }
};

std::shared_ptr<const BaseGraph> BaseGraph::Build(std::shared_ptr<const Reader> r,
                                                  uint64_t revision, const Store& store) {
  const RelationOrder rel_order = StoreRelationOrder(*r, store);
  auto g = std::make_shared<BaseGraph>();
  g->revision = revision;
  g->reader = r;
  // Stub entities (endpoints never written) list no entity, but the store keeps
  // their edges, so they are relation sources all the same.
  std::vector<std::pair<std::string_view, uint32_t>> live, sources;
  for (uint32_t i = 0; i < r->node_count(); ++i) {
    std::string_view key = r->key(i), name;
    if (EntityNameOf(key, &name)) {
      sources.emplace_back(name, i);
      if (!r->is_stub(i)) live.emplace_back(name, i);
    } else if (ObservationEntityOf(key, &name) && !r->is_stub(i)) {
      g->observations.emplace_back(name, i);
    }
  }
  std::sort(live.begin(), live.end());
  std::sort(sources.begin(), sources.end());
  std::sort(g->observations.begin(), g->observations.end());
  g->entities.reserve(live.size());
  auto obs = g->observations.begin();
  for (const auto& [name, i] : live) {
    Entity e{std::string(name), EntityTypeFrom(r->meta(i), r->type(i)), {}};
    std::vector<ObservationSlot> slots;
    while (obs != g->observations.end() && obs->first < name) ++obs;
    for (; obs != g->observations.end() && obs->first == name; ++obs) AddSlot(*r, obs->second, &slots);
    SortObservations(&slots, &e);
    g->entities.push_back(std::move(e));
  }
  for (const auto& [name, i] : sources) AppendRelations(*r, rel_order, i, name, &g->relations);
  return g;
}

void BaseGraph::BuildSearch() const {
  starts.reserve(entities.size() + 1);
  short_postings.resize(kShortGrams);
  auto add_once = [](TrigramPostings& list, uint32_t k) {
    if (list.count == 0 || list.last != k) list.Add(k);
  };
  for (uint32_t k = 0; k < entities.size(); ++k) {
    const Entity& e = entities[k];
    const size_t begin = text.size();
    starts.push_back(begin);
    auto add = [&](std::string_view field) {
      text += AsciiLower(field);
      text += '\0';
    };
    add(e.name);
    add(e.entity_type);
    for (const std::string& o : e.observations) add(o);
    // Each gram starting at p, the field's NUL ending them all (the text ends in one).
    for (size_t p = begin; p < text.size(); ++p) {
      if (text[p] == '\0') continue;
      add_once(short_postings[ShortGram(text.data() + p, 1)], k);
      if (text[p + 1] == '\0') continue;
      add_once(short_postings[ShortGram(text.data() + p, 2)], k);
      if (text[p + 2] == '\0') continue;
      add_once(postings.Get(Trigram(text.data() + p)), k);
    }
  }
  starts.push_back(text.size());
}

std::vector<uint32_t> BaseGraph::FindBy(const std::vector<std::string>& parts,
                                        size_t check_cost, size_t max,
                                        const std::function<bool(uint32_t)>& check) const {
  std::vector<const TrigramPostings*> lists;
  for (const std::string& part : parts) {
    if (part.size() < 3) {
      lists.push_back(&short_postings[ShortGram(part.data(), part.size())]);
      continue;
    }
    for (size_t p = 0; p + 3 <= part.size(); ++p) {
      const TrigramPostings* list = postings.Find(Trigram(part.data() + p));
      if (list == nullptr) return {};
      lists.push_back(list);
    }
  }
  std::sort(lists.begin(), lists.end(),
            [](const TrigramPostings* a, const TrigramPostings* b) { return a->count < b->count; });
  lists.erase(std::unique(lists.begin(), lists.end()), lists.end());
  std::vector<uint32_t> candidates = lists[0]->Decode(), both, hits;
  size_t next = 1, at = 0, checked = 0;
  while (at < candidates.size() && hits.size() < max) {
    if (next < lists.size() && checked * check_cost >= lists[next]->count) {
      const std::vector<uint32_t> more = lists[next++]->Decode();
      both.clear();
      std::set_intersection(candidates.begin() + static_cast<ptrdiff_t>(at), candidates.end(),
                            more.begin(), more.end(), std::back_inserter(both));
      candidates.swap(both);
      at = checked = 0;
      continue;
    }
    const uint32_t k = candidates[at++];
    ++checked;
    if (check(k)) hits.push_back(k);
  }
  return hits;
}

std::vector<uint32_t> BaseGraph::Find(const std::string& lowered,
                                      const std::vector<std::string>& words, size_t max,
                                      const std::function<bool(uint32_t)>& skip) const {
  std::call_once(search_once, [this] { BuildSearch(); });
  std::vector<uint32_t> hits;
  if (lowered.empty() || lowered.find('\0') != std::string::npos) {
    // Every entity: the empty query, or one that could span fields (checked field
    // by field).
    for (uint32_t k = 0; k < entities.size() && hits.size() < max; ++k) {
      if (!skip(k) && (EntityMatches(entities[k], lowered) ||
                       (!words.empty() && EntityHasWords(entities[k], words)))) {
        hits.push_back(k);
      }
    }
    return hits;
  }
  hits = FindBy({lowered}, kCheckText, max,
                [&](uint32_t k) { return !skip(k) && TextContains(k, lowered); });
  if (words.empty()) return hits;
  // The first `max` of both rules are among the first `max` of each.
  const std::vector<uint32_t> by_words = FindBy(
      words, kCheckWords, max, [&](uint32_t k) { return !skip(k) && EntityHasWords(entities[k], words); });
  std::vector<uint32_t> both;
  std::set_union(hits.begin(), hits.end(), by_words.begin(), by_words.end(),
                 std::back_inserter(both));
  if (both.size() > max) both.resize(max);
  return both;
}

// What one delta changed, read again from the view it makes. A live view may be a
// stack of deltas (snapshot/live.h): a GraphView then holds one Overlay per level,
// each against the level below it, and a level's Overlay is kept while the level
// is, so a view after a write reads again only what its own delta touched.
struct GraphView::Overlay {
  NameSet touched;  // entities whose entity or observation nodes changed
  NameSet sources;  // relation sources whose out-edges may have changed
  std::vector<Entity> entities;     // the touched ones live in the view, by name
  std::vector<Relation> relations;  // the relations of `sources`, by (from, rel, to)
  // The observation keys this delta holds, by entity: an entity touched by a
  // later level finds its observations in the base graph and these.
  std::map<std::string, std::vector<std::string>, std::less<>> new_observations;
};

namespace {

using Overlays = std::vector<std::shared_ptr<const GraphView::Overlay>>;

std::shared_ptr<const GraphView::Overlay> BuildOverlay(const Reader& view,
                                                       const RelationOrder& rel_order,
                                                       const BaseGraph& bg,
                                                       const Overlays& lower) {
  auto o = std::make_shared<GraphView::Overlay>();
  const Reader& base = *view.layer_base();
  const snapshot::Delta& delta = *view.layer_delta();
  const Reader& changed = delta.nodes();
  auto& new_observations = o->new_observations;
  auto note = [&](std::string_view key, bool changed_node) {
    std::string_view name;
    if (EntityNameOf(key, &name)) {
      o->touched.emplace(name);
    } else if (ObservationEntityOf(key, &name)) {
      o->touched.emplace(name);
      if (changed_node) {
        auto it = new_observations.find(name);
        if (it == new_observations.end()) it = new_observations.emplace(std::string(name), 0).first;
        it->second.emplace_back(key);
      }
    }
  };
  for (uint32_t d = 0; d < changed.node_count(); ++d) note(changed.key(d), true);
  for (uint32_t b : delta.removed()) note(base.key(b), false);
  for (uint32_t k = 0; k < delta.out_list_count(); ++k) {
    const uint32_t ref = delta.out_source(k);
    std::string_view key = snapshot::IsDeltaRef(ref) ? changed.key(ref & ~snapshot::kDeltaNode)
                                                     : base.key(ref);
    if (std::string_view name; EntityNameOf(key, &name)) o->sources.emplace(name);
  }
  o->sources.insert(o->touched.begin(), o->touched.end());

  for (const std::string& name : o->touched) {
    auto node = view.FindKey(EntityKey(name));
    if (!node || view.is_stub(*node)) continue;
    Entity e{name, EntityTypeFrom(view.meta(*node), view.type(*node)), {}};
    std::set<std::string_view> keys;
    auto it = std::lower_bound(bg.observations.begin(), bg.observations.end(),
                               std::pair<std::string_view, uint32_t>(name, 0));
    for (; it != bg.observations.end() && it->first == name; ++it) {
      keys.insert(bg.reader->key(it->second));
    }
    for (const auto& level : lower) {
      if (auto n = level->new_observations.find(name); n != level->new_observations.end()) {
        keys.insert(n->second.begin(), n->second.end());
      }
    }
    if (auto n = new_observations.find(name); n != new_observations.end()) {
      keys.insert(n->second.begin(), n->second.end());
    }
    std::vector<ObservationSlot> slots;
    for (std::string_view key : keys) {
      auto obs = view.FindKey(key);
      if (obs && !view.is_stub(*obs)) AddSlot(view, *obs, &slots);
    }
    SortObservations(&slots, &e);
    o->entities.push_back(std::move(e));
  }
  for (const std::string& name : o->sources) {
    if (auto node = view.FindKey(EntityKey(name))) {
      AppendRelations(view, rel_order, *node, name, &o->relations);
    }
  }
  return o;
}

// `base` (sorted by key) less the items whose key is in `replaced`, with
// `inserted` (sorted by key, every key in `replaced`) spliced in: runs of base
// items between the changes, found by binary search, O(changes log n).
template <typename T, typename KeyFn>
SplicedList<T> Splice(const std::vector<T>& base, const std::vector<T>& inserted,
                      const NameSet& replaced, KeyFn key) {
  using Run = typename SplicedList<T>::Run;
  auto lower = [&](std::string_view k) {
    return static_cast<size_t>(
        std::partition_point(base.begin(), base.end(), [&](const T& x) { return key(x) < k; }) -
        base.begin());
  };
  // Base ranges left out (ascending, disjoint: one per replaced key).
  std::vector<std::pair<size_t, size_t>> gone;
  for (const std::string& k : replaced) {
    const size_t b = lower(k);
    size_t e = b;
    while (e < base.size() && key(base[e]) == k) ++e;
    if (e > b) gone.emplace_back(b, e);
  }
  std::vector<Run> runs;
  size_t pos = 0, b = 0, g = 0;
  auto base_run = [&](size_t end) {
    if (end > b) {
      runs.push_back({pos, false, b, end - b});
      pos += end - b;
      b = end;
    }
  };
  for (size_t o = 0; o < inserted.size(); ++o) {
    const size_t at = lower(key(inserted[o]));
    for (; g < gone.size() && gone[g].first < at; ++g) {
      base_run(gone[g].first);
      b = gone[g].second;
    }
    base_run(at);
    if (!runs.empty() && runs.back().inserted && runs.back().first + runs.back().length == o) {
      ++runs.back().length;
    } else {
      runs.push_back({pos, true, o, 1});
    }
    ++pos;
  }
  for (; g < gone.size(); ++g) {
    base_run(gone[g].first);
    b = gone[g].second;
  }
  base_run(base.size());
  return SplicedList<T>(&base, &inserted, std::move(runs), pos);
}

}  // namespace

template <typename T>
const T& SplicedList<T>::operator[](size_t i) const {
  auto run = std::partition_point(runs_.begin(), runs_.end(),
                                  [i](const Run& r) { return r.start + r.length <= i; });
  const size_t at = run->first + (i - run->start);
  return run->inserted ? (*inserted_)[at] : (*base_)[at];
}
template class SplicedList<Entity>;
template class SplicedList<Relation>;

namespace {

// The overlays of a stack as one against the base: each entity and relation
// group from the highest level that touched it (read_graph; O(their sizes)).
std::shared_ptr<const GraphView::Overlay> Combine(const Overlays& levels) {
  if (levels.size() == 1) return levels[0];
  auto o = std::make_shared<GraphView::Overlay>();
  for (const auto& level : levels) {
    o->touched.insert(level->touched.begin(), level->touched.end());
    o->sources.insert(level->sources.begin(), level->sources.end());
  }
  // An item of level k stands unless a level above k touched it.
  auto above = [&](size_t k, const std::string& name, NameSet GraphView::Overlay::*set) {
    for (size_t x = k + 1; x < levels.size(); ++x) {
      if (((*levels[x]).*set).contains(name)) return true;
    }
    return false;
  };
  for (size_t k = 0; k < levels.size(); ++k) {
    for (const Entity& e : levels[k]->entities) {
      if (!above(k, e.name, &GraphView::Overlay::touched)) o->entities.push_back(e);
    }
    for (const Relation& r : levels[k]->relations) {
      if (!above(k, r.from, &GraphView::Overlay::sources)) o->relations.push_back(r);
    }
  }
  std::stable_sort(o->entities.begin(), o->entities.end(),
                   [](const Entity& a, const Entity& b) { return a.name < b.name; });
  // A group's relations stay in their level's order; groups by source.
  std::stable_sort(o->relations.begin(), o->relations.end(),
                   [](const Relation& a, const Relation& b) { return a.from < b.from; });
  return o;
}

}  // namespace

GraphView::~GraphView() = default;

const GraphSplice& GraphView::All() const {
  std::call_once(all_once_, [this] {
    auto name = [](const Entity& e) -> const std::string& { return e.name; };
    auto from = [](const Relation& r) -> const std::string& { return r.from; };
    static const std::vector<Entity> kNoEntities;
    static const std::vector<Relation> kNoRelations;
    static const NameSet kNone;
    const bool layered = !overlays_.empty();
    if (layered) combined_ = Combine(overlays_);
    all_.entities = Splice(base_->entities, layered ? combined_->entities : kNoEntities,
                           layered ? combined_->touched : kNone, name);
    all_.relations = Splice(base_->relations, layered ? combined_->relations : kNoRelations,
                            layered ? combined_->sources : kNone, from);
  });
  return all_;
}

GraphListing GraphView::Search(std::string_view query, size_t max) const {
  const std::string q = AsciiLower(query);
  // The word rule adds nothing when the query is one word as written.
  std::vector<std::string> words = SortedWords(query);
  if (words.size() == 1 && words[0] == q) words.clear();
  // Whether a level above `from` (or any level: from -1) touched `name`.
  auto touched_above = [&](int from, const std::string& name) {
    for (size_t x = static_cast<size_t>(from + 1); x < overlays_.size(); ++x) {
      if (overlays_[x]->touched.contains(name)) return true;
    }
    return false;
  };
  // The base's first `max` hits the overlays leave as they are: no later one is
  // among the first `max` of the view.
  const std::vector<uint32_t> found = base_->Find(
      q, words, max, [&](uint32_t k) { return touched_above(-1, base_->entities[k].name); });
  GraphListing out;
  for (uint32_t k : found) out.entities.push_back(&base_->entities[k]);
  if (!overlays_.empty()) {
    for (size_t level = 0; level < overlays_.size(); ++level) {
      for (const Entity& e : overlays_[level]->entities) {
        if (touched_above(static_cast<int>(level), e.name)) continue;
        if (EntityMatches(e, q) || (!words.empty() && EntityHasWords(e, words))) {
          out.entities.push_back(&e);
        }
      }
    }
    std::sort(out.entities.begin(), out.entities.end(),
              [](const Entity* a, const Entity* b) { return a->name < b->name; });
    if (out.entities.size() > max) out.entities.resize(max);
  }
  return out;
}

void GraphView::AddRelationsTouching(GraphListing* hits) const {
  const Reader& r = *reader_;
  std::vector<uint32_t> edges;
  for (const Entity* e : hits->entities) {
    auto node = r.FindKey(EntityKey(e->name));
    if (!node) continue;
    std::string_view other;
    for (uint32_t j = r.out_begin(*node); j < r.out_end(*node); ++j) {
      if (EntityNameOf(r.key(r.edge_target(j)), &other)) edges.push_back(j);
    }
    for (uint32_t k = r.in_begin(*node); k < r.in_end(*node); ++k) {
      if (EntityNameOf(r.key(r.in_source(k)), &other)) edges.push_back(r.in_edge(k));
    }
  }
  std::sort(edges.begin(), edges.end());
  edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
  auto order = [&](uint32_t j) {
    return std::make_tuple(r.key(r.edge_source(j)), rel_order_[r.edge_rel(j)],
                           r.key(r.edge_target(j)));
  };
  std::sort(edges.begin(), edges.end(), [&](uint32_t a, uint32_t b) { return order(a) < order(b); });
  for (uint32_t j : edges) {
    std::string_view from, to;
    EntityNameOf(r.key(r.edge_source(j)), &from);
    EntityNameOf(r.key(r.edge_target(j)), &to);
    for (auto& t : RelationTypesFrom(r.edge_payload(j), r.relation_name(r.edge_rel(j)))) {
      hits->owned_relations.push_back({std::string(from), std::string(to), std::move(t)});
    }
  }
  for (const Relation& rel : hits->owned_relations) hits->relations.push_back(&rel);
}

Result<std::shared_ptr<const GraphView>> GraphViewCache::Get(
    std::shared_ptr<const Reader> reader, uint64_t revision, const Store& store) {
  std::lock_guard<std::mutex> lock(mu_);
  if (last_ != nullptr && last_revision_ == revision) return last_;
  AMEM_RETURN_IF_ERROR(reader->EnsureContent());
  // The views down to the file: reader, its layer_base(), ..., the base file.
  std::vector<std::shared_ptr<const Reader>> chain{reader};
  while (chain.back()->layered()) chain.push_back(chain.back()->layer_base());
  const bool layered = chain.size() > 1;
  const uint64_t base_revision =
      layered ? chain[chain.size() - 2]->layer_delta()->base_revision() : revision;
  if (base_ == nullptr || base_->reader != chain.back()) {
    // The old graph is let go first: a store's graph is held once, not twice
    // (unless Prepare built the new one ahead); on a thread, since its last
    // reference to the old base unmaps that.
    using Old = std::tuple<std::shared_ptr<const GraphView>, std::shared_ptr<const BaseGraph>,
                           decltype(levels_)>;
    retirer_.Retire(std::make_shared<Old>(std::move(last_), std::move(base_), std::move(levels_)));
    last_.reset();
    base_.reset();
    levels_.clear();
    base_ = GraphOf(chain.back(), base_revision, store, /*prepare=*/false);
  }
  std::shared_ptr<GraphView> view(new GraphView());
  view->base_ = base_;
  view->rel_order_ = StoreRelationOrder(*reader, store);
  // One overlay per level, bottom up; a level kept since the last view keeps its own.
  std::vector<std::pair<std::shared_ptr<const Reader>, std::shared_ptr<const GraphView::Overlay>>>
      levels;
  for (size_t k = 0; k + 1 < chain.size(); ++k) {
    const std::shared_ptr<const Reader>& level = chain[chain.size() - 2 - k];
    std::shared_ptr<const GraphView::Overlay> overlay;
    if (k < levels_.size() && levels_[k].first == level) {
      overlay = levels_[k].second;
    } else {
      overlay = BuildOverlay(*level, view->rel_order_, *view->base_, view->overlays_);
    }
    view->overlays_.push_back(overlay);
    levels.emplace_back(level, std::move(overlay));
  }
  levels_ = std::move(levels);
  AMEM_RETURN_IF_ERROR(reader->ContentStatus());
  view->reader_ = std::move(reader);
  last_ = view;
  last_revision_ = revision;
  return std::shared_ptr<const GraphView>(std::move(view));
}

std::shared_ptr<const BaseGraph> GraphViewCache::GraphOf(const std::shared_ptr<const Reader>& file,
                                                         uint64_t revision, const Store& store,
                                                         bool prepare) {
  std::promise<std::shared_ptr<const BaseGraph>> promise;
  std::shared_future<std::shared_ptr<const BaseGraph>> built;
  {
    std::lock_guard<std::mutex> lock(slot_mu_);
    if (!prepare && next_.file == file.get()) {
      current_ = std::move(next_);  // made ahead for this base: Get's from now on
      next_ = Slot();
    }
    if (current_.file == file.get()) {
      built = current_.graph;
    } else if (next_.file == file.get()) {
      built = next_.graph;
    } else {
      // Claimed before it is built, so that nobody builds it twice.
      (prepare ? next_ : current_) = Slot{file.get(), promise.get_future().share()};
    }
  }
  if (built.valid()) return prepare ? nullptr : built.get();  // waits while it is built
  auto g = BaseGraph::Build(file, revision, store);
  // Prepare builds the search index too; Get leaves it to the first search.
  if (prepare) std::call_once(g->search_once, [&] { g->BuildSearch(); });
  (prepare ? built_by_prepare_ : built_by_get_).fetch_add(1);
  promise.set_value(g);
  return g;
}

void GraphViewCache::Prepare(std::shared_ptr<const Reader> base, uint64_t revision,
                             const Store& store) {
  if (base == nullptr || base->layered() || !base->EnsureContent().ok()) return;
  GraphOf(base, revision, store, /*prepare=*/true);
}

void GraphViewCache::Clear() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_.reset();
    base_.reset();
    levels_.clear();
  }
  std::lock_guard<std::mutex> lock(slot_mu_);
  current_ = Slot();
  next_ = Slot();
}

// ---- the mapping ----

std::string EntityKey(std::string_view name) {
  return std::string(kEntityPrefix) + std::string(name);
}

std::string ObservationKey(std::string_view entity, std::string_view observation) {
  return std::string(kObsPrefix) + std::string(entity) + "#" + FormatHexId(Hash64(observation));
}

bool EntityNameOf(std::string_view key, std::string_view* name) {
  if (!key.starts_with(kEntityPrefix)) return false;
  *name = key.substr(kEntityPrefix.size());
  return true;
}

bool ObservationEntityOf(std::string_view key, std::string_view* entity) {
  if (!key.starts_with(kObsPrefix) || key.size() < kObsPrefix.size() + kHashSuffix) return false;
  if (key[key.size() - kHashSuffix] != '#') return false;
  *entity = key.substr(kObsPrefix.size(), key.size() - kObsPrefix.size() - kHashSuffix);
  return true;
}

int64_t ObservationSeq(std::string_view meta_text) {
  Json meta = ParseJsonText(meta_text);
  int64_t seq = 0;
  if (auto it = meta.find("seq"); it != meta.end() && it->is_string()) {
    const std::string& s = it->get_ref<const std::string&>();
    std::from_chars(s.data(), s.data() + s.size(), seq);
  }
  return seq;
}

std::string EntityTypeFrom(std::string_view meta_text, NodeType type) {
  Json meta = ParseJsonText(meta_text);
  for (const char* field : {"entityType", "kind"}) {
    if (auto it = meta.find(field); it != meta.end() && it->is_string()) return *it;
  }
  return NodeTypeName(type) ? NodeTypeName(type) : "entity";
}

std::vector<std::string> RelationTypesFrom(std::string_view payload_text,
                                           std::string_view rel_name) {
  Json payload = ParseJsonText(payload_text);
  if (payload.is_object()) {
    auto it = payload.find("relationTypes");
    if (it != payload.end() && it->is_array() && !it->empty()) {
      std::vector<std::string> types;
      for (const auto& t : *it) {
        if (t.is_string()) types.push_back(t);
      }
      return types;
    }
  }
  return {std::string(rel_name)};
}

std::string AsciiLower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

bool ObservationSlot::operator<(const ObservationSlot& o) const {
  return std::tie(seq, key) < std::tie(o.seq, o.key);
}

void SortObservations(std::vector<ObservationSlot>* slots, Entity* e) {
  std::sort(slots->begin(), slots->end());
  for (auto& s : *slots) e->observations.push_back(std::move(s.text));
}

GraphListing ListingOf(const KnowledgeGraph& g) {
  GraphListing out;
  for (const Entity& e : g.entities) out.entities.push_back(&e);
  for (const Relation& r : g.relations) out.relations.push_back(&r);
  return out;
}

}  // namespace amem::mcp
