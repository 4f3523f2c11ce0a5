#include "tools/mcp/graph_view.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <type_traits>
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

using snapshot::GramIndex;
using snapshot::GramList;
using snapshot::kEntityKeyPrefix;

// What checking a candidate costs, in postings decoded: a memmem over its text,
// or tokenizing its fields (the word rule). A candidate read from the file (block
// 0x07) costs its key, meta and observations' lookups on top.
constexpr size_t kCheckText = 16;
constexpr size_t kCheckWords = 256;
constexpr size_t kReadEntity = 64;
// The substring candidates that make it worth reading every term of the file to
// rule them out (about 20 ms at 2M terms; a candidate read whole costs 1-2 us).
constexpr uint32_t kScanTermsFor = 10000;
std::atomic<uint32_t> scan_terms_for{kScanTermsFor};

// The entity keys Prepare scans for relations at a time, holding the lock a
// page of read_graph waits on.
constexpr size_t kSourcesPerChunk = 4096;

using NameSet = std::set<std::string, std::less<>>;

// Whether `haystack`, ASCII lowered, contains `lowered_needle`: lowered into a
// buffer of the thread's, reused (a search checks thousands of fields).
bool Contains(std::string_view haystack, const std::string& lowered_needle) {
  thread_local std::string lowered;
  lowered.clear();
  snapshot::AppendAsciiLower(haystack, &lowered);
  return lowered.find(lowered_needle) != std::string::npos;
}

// The first position in [0, n) whose key (key_at(i), ascending in i) is not
// below `k`: O(log n) keys read.
template <typename KeyAt>
size_t LowerBoundBy(size_t n, std::string_view k, const KeyAt& key_at) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    const size_t mid = lo + (hi - lo) / 2;
    if (key_at(mid) < k) {
      lo = mid + 1;
    } else {
      hi = mid;
    }
  }
  return lo;
}

// The words of `text` (common/tokenizer.h), sorted and distinct.
std::vector<std::string> SortedWords(std::string_view text) {
  std::vector<std::string> words = Tokenize(text);
  std::sort(words.begin(), words.end());
  words.erase(std::unique(words.begin(), words.end()), words.end());
  return words;
}

// search_nodes' word rule for one field: every word of the query (`words`, sorted,
// not empty) is a word of it, so `write batch` finds `WriteBatch`.
bool HasWords(std::string_view field, const std::vector<std::string>& words) {
  // Each word of a field is a run of its ASCII-lowered bytes (common/tokenizer.h:
  // no stemming): a field missing one as a substring cannot have it as a word,
  // and is not tokenized.
  for (const std::string& w : words) {
    if (!Contains(field, w)) return false;
  }
  const std::vector<std::string> have = SortedWords(field);
  return std::includes(have.begin(), have.end(), words.begin(), words.end());
}

// Whether some text whose every word is a term of `r`'s term index may hold
// `lowered` (ASCII-lowered, no NUL): false only when it cannot. A run of word
// bytes (common/tokenizer.h) with other bytes on both sides of it in `lowered` is
// a whole run of such a text, so a word of it unless shorter than 2 bytes or a
// stop word; the last run, after other bytes, starts a run of the text, so some
// word or stop word starts with it unless it is 1 byte; the first run, before
// other bytes, ends one: it is one, or `ends_with(run)` (a longer run of a text
// ends with it: the gram lists, then the term index read whole, so asked last).
// So `old writer batch` cannot be there when `writer` is no term, nor `go fetch`
// when no term starts with `fetch`, nor `write batch` when none ends with `write`.
bool IsWordByte(unsigned char c) { return tokenizer_internal::kTables.fold[c] != 0; }

template <typename EndsWith>
bool MayBeInTexts(const Reader& r, std::string_view lowered, const EndsWith& ends_with) {
  auto word_byte = [](char c) { return IsWordByte(static_cast<unsigned char>(c)); };
  std::string_view first;  // the first run, when other bytes follow it
  for (size_t a = 0; a < lowered.size();) {
    if (!word_byte(lowered[a])) {
      ++a;
      continue;
    }
    size_t b = a + 1;
    while (b < lowered.size() && word_byte(lowered[b])) ++b;
    const std::string_view run = lowered.substr(a, b - a);
    if (a > 0 && b < lowered.size()) {
      if (run.size() >= 2 && !IsStopWord(run) && !r.FindTerm(run)) return false;
    } else if (a > 0 && run.size() >= 2 && !r.HasTermStartingWith(run) &&
               std::none_of(StopWords().begin(), StopWords().end(),
                            [&](std::string_view w) { return w.starts_with(run); })) {
      return false;
    } else if (a == 0 && b < lowered.size() && run.size() >= 2) {
      first = run;
    }
    a = b;
  }
  return first.empty() || r.FindTerm(first) ||
         std::any_of(StopWords().begin(), StopWords().end(),
                     [&](std::string_view w) { return w.ends_with(first); }) ||
         ends_with(first);
}

// Whether some entity's field of `r`'s block 0x07 has a word byte right before
// `run` (2 bytes or more): it holds the trigram of that byte and run's first two.
// A run of a field that ends with `run` and is longer has one. O(word bytes x
// log grams): the check before reading every term (Reader::HasTermEndingWith).
bool SomeFieldExtendsLeft(const Reader& r, std::string_view run) {
  for (unsigned c = 0; c < 256; ++c) {
    // Fields are ASCII-lowered: no A-Z byte is in one.
    if (!IsWordByte(static_cast<unsigned char>(c)) || (c >= 'A' && c <= 'Z')) continue;
    const char gram[3] = {static_cast<char>(c), run[0], run[1]};
    if (r.search_gram(snapshot::GramOf(std::string_view(gram, 3))).count > 0) return true;
  }
  return false;
}

// Whether one text of `r` holds every one of `words` (not empty) as a word: in
// its content, or (`field` kMeta) in its meta: the term index's postings of that
// field walked from the shortest list, seeking in the others (as text_search's
// every-term path), until the first node they share. A damaged list reads as
// empty (in ReadStatus()).
bool SomeTextHoldsAll(const Reader& r, const std::vector<std::string>& words, snapshot::Field field) {
  std::vector<snapshot::PostingCursor> lists;
  for (const std::string& w : words) {
    const auto t = r.FindTerm(w);
    if (!t) return false;
    lists.push_back(r.postings_cursor(*t, field));
  }
  auto lead = std::min_element(lists.begin(), lists.end(),
                               [](const auto& a, const auto& b) { return a.size() < b.size(); });
  for (; !lead->done(); lead->Next()) {
    const uint32_t node = lead->node();
    bool all = true;
    for (snapshot::PostingCursor& list : lists) {
      list.Seek(node);
      if (list.done()) return false;  // no later node is in every list
      all = all && list.node() == node;
    }
    if (all) return true;
  }
  return false;
}

// Whether `test` holds for one of an entity's fields: name, type, observations.
template <typename Test>
bool AnyField(const Entity& e, const Test& test) {
  return test(e.name) || test(e.entity_type) ||
         std::any_of(e.observations.begin(), e.observations.end(), test);
}

bool EntityMatches(const Entity& e, const std::string& lowered) {
  return AnyField(e, [&](std::string_view f) { return Contains(f, lowered); });
}

bool EntityHasWords(const Entity& e, const std::vector<std::string>& words) {
  return AnyField(e, [&](std::string_view f) { return HasWords(f, words); });
}

void AddSlot(const Reader& r, uint32_t i, std::vector<ObservationSlot>* slots) {
  slots->push_back({ObservationSeq(r.meta(i)), std::string(r.key(i)), std::string(r.content(i))});
}

// Node i's out-edges to entities, f(edge, target's name), in a full listing's
// order: (store's relation id, target key), as the store sorts edges.
template <typename F>
void ForEachRelationEdge(const Reader& r, const RelationOrder& rel_order, uint32_t i, F&& f) {
  std::vector<std::tuple<uint16_t, std::string_view, uint32_t>> edges;
  for (uint32_t j = r.out_begin(i); j < r.out_end(i); ++j) {
    std::string_view to;
    if (EntityNameOf(r.key(r.edge_target(j)), &to)) {
      edges.emplace_back(rel_order[r.edge_rel(j)], to, j);
    }
  }
  std::sort(edges.begin(), edges.end());
  for (const auto& [rank, to, j] : edges) f(j, to);
}

std::vector<std::string> EdgeRelationTypes(const Reader& r, uint32_t j) {
  return RelationTypesFrom(r.edge_payload(j), r.relation_name(r.edge_rel(j)));
}

// The relations of node i's out-edges to entities, i being entity `from`, in a
// full listing's order.
void AppendRelations(const Reader& r, const RelationOrder& rel_order, uint32_t i,
                     std::string_view from, std::vector<Relation>* out) {
  ForEachRelationEdge(r, rel_order, i, [&](uint32_t j, std::string_view to) {
    for (auto& t : EdgeRelationTypes(r, j)) {
      out->push_back({std::string(from), std::string(to), std::move(t)});
    }
  });
}

// The live observation nodes of entity `name` in file `r` (keys obs:NAME#<hex>),
// by key, from key position `from` (the first key not below "obs:NAME#", or
// node_count() to find it by a search of the keys): a run of the key order.
template <typename F>
void ForEachFileObservation(const Reader& r, std::string_view name, uint32_t from, F&& f) {
  const std::string prefix = snapshot::ObservationKeyPrefix(name);
  if (from == r.node_count()) from = r.KeyLowerBound(prefix);
  for (uint32_t p = from; p < r.node_count(); ++p) {
    const auto node = r.NodeAtKeyRank(p);
    if (!node) return;
    const std::string_view key = r.key(*node);
    if (!key.starts_with(prefix)) return;
    std::string_view owner;  // obs:A#B#<hex> is entity A#B's, not A's
    if (ObservationEntityOf(key, &owner) && owner == name && !r.is_stub(*node)) f(*node);
  }
}

// One per search: the metas are views into the reader's content, which outlives it.
using TypeCache = snapshot::EntityTypeCache;

// An entity of a file's entity search block as a search checks it: its fields
// read from the file (views into it; the observations unordered until listed).
struct FileEntity {
  uint32_t node = 0;
  std::string_view name;
  const std::string* type = nullptr;  // in the search's TypeCache
  std::vector<uint32_t> observations;

  // Reads entity k of `r`'s block into this; false when damaged (in r's
  // ReadStatus()). Without `with_observations` only its name and type: a check
  // that no observation can pass reads none.
  bool Read(const Reader& r, uint32_t k, TypeCache* types, bool with_observations = true) {
    const auto e = r.search_entity(k);
    if (!e) return false;
    ReadNode(r, e->node, e->observations, types, with_observations);
    return true;
  }
  // Reads the live entity node `entity` of `r` into this, its observation keys
  // from key position `observations_from` (node_count(): found by a search).
  void ReadNode(const Reader& r, uint32_t entity, uint32_t observations_from, TypeCache* types,
                bool with_observations = true) {
    node = entity;
    EntityNameOf(r.key(entity), &name);
    type = &types->Of(r.meta(entity), r.type(entity));
    observations.clear();
    if (!with_observations) return;
    ForEachFileObservation(r, name, observations_from,
                           [&](uint32_t obs) { observations.push_back(obs); });
  }
  template <typename Test>
  bool AnyField(const Reader& r, const Test& test) const {
    return test(name) || test(*type) ||
           std::any_of(observations.begin(), observations.end(),
                       [&](uint32_t obs) { return test(r.content(obs)); });
  }
  // As a listing shows it: the observations in (seq, key) order.
  Entity ToEntity(const Reader& r) const {
    Entity e{std::string(name), *type, {}};
    std::vector<ObservationSlot> slots;
    for (uint32_t obs : observations) AddSlot(r, obs, &slots);
    SortObservations(&slots, &e);
    return e;
  }
};

// The first `max` entities, ascending, that are in every list of `lists`
// (`decode` reads one) and pass `check`. The candidates are the shortest
// list's, checked in order; after checks that cost as much as decoding the next
// list (one check costs about `check_cost` postings), the candidates left are
// intersected with it. So a page of a query that most entities match stops after
// a few checks, and a rare one decodes the lists that narrow it: O(postings
// decoded + candidates checked), each kept near the other, and not O(matches).
template <typename Decode, typename Check>
std::vector<uint32_t> FindBy(std::vector<GramList> lists, const Decode& decode, size_t check_cost,
                             size_t max, const Check& check) {
  std::vector<uint32_t> hits;
  for (const GramList& list : lists) {
    if (list.count == 0) return hits;
  }
  std::sort(lists.begin(), lists.end(),
            [](const GramList& a, const GramList& b) { return a.count < b.count; });
  std::vector<uint32_t> candidates = decode(lists[0]), both;
  size_t next = 1, at = 0, checked = 0;
  while (at < candidates.size() && hits.size() < max) {
    if (next < lists.size() && checked * check_cost >= lists[next].count) {
      const std::vector<uint32_t> more = decode(lists[next++]);
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

// The first `max` entity numbers, ascending, of search_nodes' rules over `count`
// entities: the lowered query as a substring of one field (`text`), or, when
// `words` is not empty, every one of them as a word of one field (`has_words`):
// the first `max` of each rule (FindBy over `lists`' gram lists), merged. A rule
// given `only` (ascending) checks those entities instead: the caller knows that no
// other one can pass. A query that is empty or holds a NUL checks every entity.
template <typename Lists, typename Decode, typename Text, typename Words>
std::vector<uint32_t> FindEntities(uint32_t count, const std::string& lowered,
                                   const std::vector<std::string>& words, size_t max,
                                   size_t check_extra, const Lists& lists, const Decode& decode,
                                   const Text& text, const Words& has_words,
                                   const std::vector<uint32_t>* text_only = nullptr,
                                   const std::vector<uint32_t>* words_only = nullptr) {
  std::vector<uint32_t> hits;
  if (lowered.empty() || lowered.find('\0') != std::string::npos) {
    for (uint32_t k = 0; k < count && hits.size() < max; ++k) {
      if (text(k) || (!words.empty() && has_words(k))) hits.push_back(k);
    }
    return hits;
  }
  auto first_of = [max](const std::vector<uint32_t>& only, const auto& check) {
    std::vector<uint32_t> out;
    for (size_t i = 0; i < only.size() && out.size() < max; ++i) {
      if (check(only[i])) out.push_back(only[i]);
    }
    return out;
  };
  hits = text_only ? first_of(*text_only, text)
                   : FindBy(lists({lowered}), decode, kCheckText + check_extra, max, text);
  if (words.empty()) return hits;
  // The first `max` of both rules are among the first `max` of each.
  const std::vector<uint32_t> by_words =
      words_only ? first_of(*words_only, has_words)
                 : FindBy(lists(words), decode, kCheckWords + check_extra, max, has_words);
  std::vector<uint32_t> both;
  std::set_union(hits.begin(), hits.end(), by_words.begin(), by_words.end(),
                 std::back_inserter(both));
  if (both.size() > max) both.resize(max);
  return both;
}

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

// One full snapshot's compatibility graph. Made in O(1); it reads its entities
// and relations from the file by position, and holds in memory only what the file
// has no block for, made on first use, once: the relations' order, and, without
// the entity search block, the entities' order and the search's text and grams.
struct BaseGraph {
  uint64_t revision = 0;
  std::shared_ptr<const Reader> reader;
  RelationOrder rel_order{};  // of reader

  // The entities: the block's (by name), else `entity_nodes`, the live entity
  // nodes by name, from one scan of the entity keys made on first use.
  mutable std::once_flag entities_once;
  mutable std::vector<uint32_t> entity_nodes;

  // The relations by (from, rel, to): each an edge and which of its relation
  // types, from a scan of the entity keys' out-edges (stub entities, never
  // written, list no entity, but the store keeps their edges, so they are
  // relation sources all the same). The scan goes as far as a reader needs:
  // the first page needs the first sources', a splice the sources' before the
  // ones a delta changed; Prepare scans the rest ahead, a chunk at a time.
  struct RelationRef {
    uint32_t edge;
    uint32_t type;  // the index among RelationTypesFrom's
  };
  mutable std::mutex relations_mu;
  mutable std::vector<RelationRef> relation_refs;  // of the sources scanned
  mutable std::optional<uint32_t> next_source;    // the key position to scan next
  mutable bool relations_done = false;

  // search_nodes' text for a file without block 0x07, made on its first search:
  // each entity, and its lowered name, type and observations, each followed by a
  // NUL (entity k's are [starts[k], starts[k + 1])), and the entities holding each
  // gram of a field (snapshot/entity_search.h: the block's rules).
  mutable std::once_flag search_once;
  mutable std::vector<Entity> entities;
  mutable std::string text;
  mutable std::vector<size_t> starts;
  mutable GramIndex grams;

  // With the block and a term index (format version 2, which holds every token
  // of every content and meta): the entities whose name or type may hold a word
  // that is no word of their node's texts, ascending. Any other entity's node
  // content is its name, and its type stands as it is in its meta (a JSON string,
  // no escapes), so words that no content or meta holds together
  // (SomeTextHoldsAll), or a string no text can hold (MayBeInTexts), are in no
  // field of it. Read from the file's block 0x08 at the first search; a file
  // written before the block has them found by ScanLabels on Prepare's thread,
  // and a search before that checks every candidate's name and type.
  mutable std::vector<uint32_t> odd_labels;
  mutable std::atomic<bool> labels_scanned{false};
  mutable std::once_flag labels_once;
  void ScanLabels(const std::atomic<bool>* stop) const;
  void ScanLabelsOnce(const std::atomic<bool>* stop) const;
  const std::vector<uint32_t>* OddLabels() const {
    if (!labels_scanned.load(std::memory_order_acquire) &&
        (reader->features() & snapshot::kFeatureEntityLabels)) {
      ScanLabels(nullptr);  // the block's list: O(its length)
    }
    return labels_scanned.load(std::memory_order_acquire) ? &odd_labels : nullptr;
  }
  // Whether some term of the file ends with `run` (Reader::HasTermEndingWith,
  // which reads every term), remembered for the base: the last 256 runs asked.
  mutable std::mutex term_ends_mu;
  mutable std::map<std::string, bool, std::less<>> term_ends;
  bool TermEndsWith(std::string_view run) const {
    {
      std::lock_guard<std::mutex> lock(term_ends_mu);
      if (auto it = term_ends.find(run); it != term_ends.end()) return it->second;
    }
    const bool found = reader->HasTermEndingWith(run);
    std::lock_guard<std::mutex> lock(term_ends_mu);
    if (term_ends.size() >= 256) term_ends.clear();
    term_ends.emplace(std::string(run), found);
    return found;
  }

  static std::shared_ptr<const BaseGraph> Build(std::shared_ptr<const Reader> r, uint64_t revision,
                                                const Store& store);
  // Whether the file has the entity search block: search_nodes and the entity
  // listing read it, and nothing is made in memory for them.
  bool indexed() const { return reader->has_entity_search(); }

  size_t EntityCount() const {
    return indexed() ? reader->search_entity_count() : EntityNodes().size();
  }
  // Entity k (< EntityCount()) by name: its name, and all of it as listed. A
  // damaged one reads as empty (in the reader's ReadStatus()).
  std::string_view EntityName(size_t k) const;
  Entity EntityAt(size_t k) const;
  // Without the block: the live entity nodes by name.
  const std::vector<uint32_t>& EntityNodes() const;

  // Whether there is a relation k: the sources scanned up to it.
  bool HasRelation(size_t k) const;
  // The number of relations whose source's name is below `name`.
  size_t RelationLowerBound(std::string_view name) const;
  // Relation k (HasRelation(k)): its source's name, and all of it.
  std::string_view RelationFrom(size_t k) const;
  Relation RelationAt(size_t k) const;
  // Scans the sources (relations_mu held) while `more(next source's name)`.
  template <typename More>
  void ScanRelations(const More& more) const;
  // Scans every source, `chunk` at a time (the lock let go between chunks), until
  // `stop` is set.
  void ScanAllRelations(size_t chunk, const std::atomic<bool>* stop) const;
  std::string_view SourceName(uint32_t edge) const;  // the name of its source entity

  void MakeSearch() const {
    std::call_once(search_once, [this] { BuildSearch(); });
  }
  void BuildSearch() const;
  bool TextContains(uint32_t k, const std::string& lowered) const {
    return ::memmem(text.data() + starts[k], starts[k + 1] - starts[k], lowered.data(),
                    lowered.size()) != nullptr;
  }
};

std::shared_ptr<const BaseGraph> BaseGraph::Build(std::shared_ptr<const Reader> r,
                                                  uint64_t revision, const Store& store) {
  auto g = std::make_shared<BaseGraph>();
  g->revision = revision;
  g->rel_order = StoreRelationOrder(*r, store);
  g->reader = std::move(r);
  return g;
}

namespace {

// The entity nodes of `r` (stubs included) are a run of its key order, by name,
// from KeyLowerBound(kEntityKeyPrefix): the node at key position p, with its
// name, when it is one of them (nullopt past the run, or when damaged).
std::optional<uint32_t> EntityNodeAtRank(const Reader& r, uint32_t p, std::string_view* name) {
  const auto node = p < r.node_count() ? r.NodeAtKeyRank(p) : std::nullopt;
  if (!node || !EntityNameOf(r.key(*node), name)) return std::nullopt;
  return node;
}

// f(node) for each entity node of `r` (stubs included), by name.
template <typename F>
void ForEachEntityNode(const Reader& r, F&& f) {
  std::string_view name;
  for (uint32_t p = r.KeyLowerBound(kEntityKeyPrefix);; ++p) {
    const auto node = EntityNodeAtRank(r, p, &name);
    if (!node) return;
    f(*node);
  }
}

}  // namespace

const std::vector<uint32_t>& BaseGraph::EntityNodes() const {
  std::call_once(entities_once, [this] {
    ForEachEntityNode(*reader, [&](uint32_t i) {
      if (!reader->is_stub(i)) entity_nodes.push_back(i);
    });
  });
  return entity_nodes;
}

std::string_view BaseGraph::EntityName(size_t k) const {
  std::string_view name;
  if (indexed()) {
    const auto e = reader->search_entity(static_cast<uint32_t>(k));
    if (e) EntityNameOf(reader->key(e->node), &name);
  } else {
    EntityNameOf(reader->key(EntityNodes()[k]), &name);
  }
  return name;
}

Entity BaseGraph::EntityAt(size_t k) const {
  TypeCache types;
  FileEntity e;
  if (indexed()) {
    if (!e.Read(*reader, static_cast<uint32_t>(k), &types)) return Entity{};
  } else {
    e.ReadNode(*reader, EntityNodes()[k], reader->node_count(), &types);
  }
  return e.ToEntity(*reader);
}

template <typename More>
void BaseGraph::ScanRelations(const More& more) const {
  if (!next_source) next_source = reader->KeyLowerBound(kEntityKeyPrefix);
  while (!relations_done) {
    const uint32_t p = *next_source;
    std::string_view name;
    const auto node = EntityNodeAtRank(*reader, p, &name);
    if (!node) {
      relations_done = true;
      return;
    }
    if (!more(name)) return;
    ForEachRelationEdge(*reader, rel_order, *node, [&](uint32_t j, std::string_view) {
      const size_t types = EdgeRelationTypes(*reader, j).size();
      for (uint32_t t = 0; t < types; ++t) relation_refs.push_back({j, t});
    });
    next_source = p + 1;
  }
}

bool BaseGraph::HasRelation(size_t k) const {
  std::lock_guard<std::mutex> lock(relations_mu);
  ScanRelations([&](std::string_view) { return relation_refs.size() <= k; });
  return k < relation_refs.size();
}

size_t BaseGraph::RelationLowerBound(std::string_view name) const {
  std::lock_guard<std::mutex> lock(relations_mu);
  ScanRelations([&](std::string_view source) { return source < name; });
  // Every source below `name` is scanned (sources past it may be, by an
  // earlier call).
  return LowerBoundBy(relation_refs.size(), name,
                      [&](size_t k) { return SourceName(relation_refs[k].edge); });
}

std::string_view BaseGraph::SourceName(uint32_t edge) const {
  std::string_view from;
  EntityNameOf(reader->key(reader->edge_source(edge)), &from);
  return from;
}

void BaseGraph::ScanAllRelations(size_t chunk, const std::atomic<bool>* stop) const {
  for (bool done = false; !done && !(stop && stop->load(std::memory_order_relaxed));) {
    std::lock_guard<std::mutex> lock(relations_mu);
    size_t scanned = 0;
    ScanRelations([&](std::string_view) { return scanned++ < chunk; });
    done = relations_done;
  }
}

std::string_view BaseGraph::RelationFrom(size_t k) const {
  std::lock_guard<std::mutex> lock(relations_mu);
  return SourceName(relation_refs[k].edge);
}

Relation BaseGraph::RelationAt(size_t k) const {
  RelationRef ref;
  {
    std::lock_guard<std::mutex> lock(relations_mu);
    ref = relation_refs[k];
  }
  std::string_view to;
  EntityNameOf(reader->key(reader->edge_target(ref.edge)), &to);
  std::vector<std::string> types = EdgeRelationTypes(*reader, ref.edge);
  // The same bytes give the same types: a short list is a damaged read.
  std::string type = ref.type < types.size() ? std::move(types[ref.type]) : std::string();
  return Relation{std::string(SourceName(ref.edge)), std::string(to), std::move(type)};
}

void BaseGraph::ScanLabels(const std::atomic<bool>* stop) const {
  std::call_once(labels_once, [this, stop] { ScanLabelsOnce(stop); });
}

void BaseGraph::ScanLabelsOnce(const std::atomic<bool>* stop) const {
  const Reader& r = *reader;
  if (!indexed() || r.version() < 2 || !r.has_term_index()) return;
  if (r.features() & snapshot::kFeatureEntityLabels) {
    // Damaged (in ReadStatus()): the labels stay unset, never scanned instead.
    std::optional<std::vector<uint32_t>> listed = r.search_odd_labels();
    if (!listed) return;
    odd_labels = std::move(*listed);
    labels_scanned.store(true, std::memory_order_release);
    return;
  }
  TypeCache types;
  const uint32_t count = r.search_entity_count();
  for (uint32_t k = 0; k < count; ++k) {
    // Stopped (the server ends): the labels stay unset, and searches go without.
    if (k % 4096 == 0 && stop && stop->load(std::memory_order_relaxed)) return;
    // A damaged read is odd: never left out of a check (and in ReadStatus()).
    const auto e = r.search_entity(k);
    std::string_view name;
    if (!e || !EntityNameOf(r.key(e->node), &name)) {
      odd_labels.push_back(k);
      continue;
    }
    const std::string_view meta = r.meta(e->node);
    if (!snapshot::LabelsInTexts(name, r.content(e->node), meta, types.Of(meta, r.type(e->node)))) {
      odd_labels.push_back(k);
    }
  }
  labels_scanned.store(true, std::memory_order_release);
}

void BaseGraph::BuildSearch() const {
  const size_t count = EntityCount();
  entities.reserve(count);
  starts.reserve(count + 1);
  for (uint32_t k = 0; k < count; ++k) {
    const Entity& e = entities.emplace_back(EntityAt(k));
    starts.push_back(text.size());
    auto add = [&](std::string_view field) {
      const size_t begin = text.size();
      snapshot::AppendAsciiLower(field, &text);
      grams.AddField(k, std::string_view(text).substr(begin));
      text += '\0';
    };
    add(e.name);
    add(e.entity_type);
    for (const std::string& o : e.observations) add(o);
  }
  starts.push_back(text.size());
}

// The distinct grams each of `parts` (lowered, not empty, no NUL) needs.
std::vector<uint32_t> GramsOf(const std::vector<std::string>& parts) {
  std::vector<uint32_t> grams;
  for (const std::string& part : parts) {
    for (uint32_t g : snapshot::QueryGrams(part)) grams.push_back(g);
  }
  std::sort(grams.begin(), grams.end());
  grams.erase(std::unique(grams.begin(), grams.end()), grams.end());
  return grams;
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
    // The base's, orphans included (an entity a delta made may own them).
    ForEachFileObservation(*bg.reader, name, bg.reader->node_count(),
                           [&](uint32_t obs) { keys.insert(bg.reader->key(obs)); });
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

// A base's list of entities (by name) or relations (by source name), read by
// position: whether item i is in it, its key, and the first position whose key
// is not below `k`.
template <typename T>
bool BaseHas(const BaseGraph& bg, size_t i) {
  if constexpr (std::is_same_v<T, Entity>) {
    return i < bg.EntityCount();
  } else {
    return bg.HasRelation(i);
  }
}
template <typename T>
std::string_view BaseKey(const BaseGraph& bg, size_t i) {
  if constexpr (std::is_same_v<T, Entity>) {
    return bg.EntityName(i);
  } else {
    return bg.RelationFrom(i);
  }
}
template <typename T>
size_t BaseLowerBound(const BaseGraph& bg, std::string_view k) {
  if constexpr (std::is_same_v<T, Entity>) {
    return LowerBoundBy(bg.EntityCount(), k, [&](size_t i) { return bg.EntityName(i); });
  } else {
    return bg.RelationLowerBound(k);
  }
}

// `bg`'s list of entities or relations (sorted by key) less the items whose key
// is in `replaced`, with `inserted` (sorted by key, every key in `replaced`)
// spliced in: runs of base items between the changes, the last open to the
// list's end, found by binary search, O(changes log n) keys read.
template <typename T, typename KeyFn>
SplicedList<T> Splice(const BaseGraph& bg, const std::vector<T>& inserted, const NameSet& replaced,
                      KeyFn key) {
  using Run = typename SplicedList<T>::Run;
  auto lower = [&](std::string_view k) { return BaseLowerBound<T>(bg, k); };
  // Base ranges left out (ascending, disjoint: one per replaced key).
  std::vector<std::pair<size_t, size_t>> gone;
  for (const std::string& k : replaced) {
    const size_t b = lower(k);
    size_t e = b;
    while (BaseHas<T>(bg, e) && BaseKey<T>(bg, e) == k) ++e;
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
  runs.push_back({pos, false, b, SplicedList<T>::kToEnd - pos});  // the rest of the base's
  return SplicedList<T>(&bg, &inserted, std::move(runs));
}

}  // namespace

template <typename T>
const typename SplicedList<T>::Run& SplicedList<T>::RunOf(size_t i) const {
  return *std::partition_point(runs_.begin(), runs_.end(),
                               [i](const Run& r) { return r.start + r.length <= i; });
}

template <typename T>
bool SplicedList<T>::has(size_t i) const {
  if (runs_.empty()) return false;
  const Run& run = RunOf(i);
  return run.inserted || run.start + run.length != kToEnd ||
         BaseHas<T>(*base_, run.first + (i - run.start));
}

template <typename T>
T SplicedList<T>::operator[](size_t i) const {
  const Run& run = RunOf(i);
  const size_t at = run.first + (i - run.start);
  if (run.inserted) return (*inserted_)[at];
  if constexpr (std::is_same_v<T, Entity>) {
    return base_->EntityAt(at);
  } else {
    return base_->RelationAt(at);
  }
}

template <typename T>
size_t SplicedList<T>::size() const
  requires std::is_same_v<T, Entity>
{
  if (runs_.empty()) return 0;
  const Run& tail = runs_.back();
  return tail.start + base_->EntityCount() - tail.first;
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
    all_.entities = Splice(*base_, layered ? combined_->entities : kNoEntities,
                           layered ? combined_->touched : kNone, name);
    all_.relations = Splice(*base_, layered ? combined_->relations : kNoRelations,
                            layered ? combined_->sources : kNone, from);
  });
  return all_;
}

void SetTermScanCandidatesForTesting(uint32_t n) { scan_terms_for = n; }

GraphListing GraphView::Search(std::string_view query, size_t max) const {
  const std::string q = AsciiLower(query);
  // The word rule adds nothing when the query is one word as written.
  std::vector<std::string> words = SortedWords(query);
  if (words.size() == 1 && words[0] == q) words.clear();
  // Whether a level above `from` (or any level: from -1) touched `name`.
  auto touched_above = [&](int from, std::string_view name) {
    for (size_t x = static_cast<size_t>(from + 1); x < overlays_.size(); ++x) {
      if (overlays_[x]->touched.contains(name)) return true;
    }
    return false;
  };
  auto skipped = [&](std::string_view name) { return touched_above(-1, name); };
  // The base's first `max` hits the overlays leave as they are: no later one is
  // among the first `max` of the view.
  GraphListing out;
  const BaseGraph& bg = *base_;
  if (bg.indexed()) {
    // From the file's block: each candidate read from the file once.
    const Reader& file = *bg.reader;
    // Each candidate is read into one scratch entity; the hits again at the end.
    TypeCache types;
    FileEntity scratch;
    auto entity = [&](uint32_t k, bool with_observations = true) -> const FileEntity* {
      return scratch.Read(file, k, &types, with_observations) && !skipped(scratch.name) ? &scratch
                                                                                       : nullptr;
    };
    // The file's term index (format version 2) holds every token of every
    // content and meta, with the word rule's tokenizer. When no content holds
    // every query word, no observation does, so the word rule reads only a
    // candidate's name and type: `write batch` over a million entities whose
    // texts say `writer` read 74,000 of them whole for nothing. When no meta
    // does either, only the base's odd labels (ScanLabels) can: the rule checks
    // just those, once they are known. The same for the substring rule when no
    // text can hold the query (MayBeInTexts).
    bool observations_may = true, labels_may = true, text_may = true;
    if (file.version() >= 2 && file.has_term_index()) {
      if (!words.empty()) {
        observations_may = SomeTextHoldsAll(file, words, snapshot::Field::kContent);
        labels_may = observations_may || SomeTextHoldsAll(file, words, snapshot::Field::kMeta);
      }
      // Whether a field's run may end with the query's first run (which is no
      // term): only when some field has a word byte right before it, and then,
      // since reading every term costs about as much as checking kScanTermsFor
      // candidates, a query with fewer checks them instead.
      auto ends_with = [&](std::string_view run) {
        if (!SomeFieldExtendsLeft(file, run)) return false;
        uint32_t fewest = UINT32_MAX;
        for (uint32_t g : GramsOf({q})) fewest = std::min(fewest, file.search_gram(g).count);
        return fewest < scan_terms_for.load(std::memory_order_relaxed) || bg.TermEndsWith(run);
      };
      text_may = q.find('\0') != std::string::npos || MayBeInTexts(file, q, ends_with);
    }
    const std::vector<uint32_t>* odd = bg.OddLabels();
    auto lists = [&](const std::vector<std::string>& parts) {
      std::vector<GramList> out;
      for (uint32_t g : GramsOf(parts)) out.push_back(file.search_gram(g));
      return out;
    };
    auto decode = [&](const GramList& list) { return file.search_postings(list); };
    const std::vector<uint32_t> found = FindEntities(
        file.search_entity_count(), q, words, max, kReadEntity, lists, decode,
        [&](uint32_t k) {
          const FileEntity* e = entity(k, text_may);
          return e != nullptr && e->AnyField(file, [&](std::string_view f) { return Contains(f, q); });
        },
        [&](uint32_t k) {
          const FileEntity* e = entity(k, observations_may);
          return e != nullptr && e->AnyField(file, [&](std::string_view f) { return HasWords(f, words); });
        },
        text_may ? nullptr : odd, labels_may ? nullptr : odd);
    for (uint32_t k : found) {
      if (entity(k) != nullptr) {
        out.entities.push_back(&out.owned_entities.emplace_back(scratch.ToEntity(file)));
      }
    }
  } else {
    bg.MakeSearch();
    const std::vector<Entity>& all = bg.entities;
    auto lists = [&](const std::vector<std::string>& parts) {
      std::vector<GramList> out;
      for (uint32_t g : GramsOf(parts)) out.push_back(bg.grams.Find(g));
      return out;
    };
    auto decode = [](const GramList& list) {
      std::vector<uint32_t> out;
      snapshot::DecodeGramList(list, UINT32_MAX, &out);
      return out;
    };
    // A query holding a NUL is checked field by field (the text joins them by NULs).
    const bool by_field = q.find('\0') != std::string::npos;
    const std::vector<uint32_t> found = FindEntities(
        static_cast<uint32_t>(all.size()), q, words, max, 0, lists, decode,
        [&](uint32_t k) {
          return !skipped(all[k].name) && (by_field ? EntityMatches(all[k], q) : bg.TextContains(k, q));
        },
        [&](uint32_t k) { return !skipped(all[k].name) && EntityHasWords(all[k], words); });
    for (uint32_t k : found) out.entities.push_back(&all[k]);
  }
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
    if (prepared_.first && prepared_.first->layer_base() != chain.back()) prepared_ = {};
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
    } else if (k == 0 && prepared_.first == level) {
      overlay = std::move(prepared_.second);
      prepared_ = {};
      levels_prepared_.fetch_add(1);
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
                                                         bool prepare,
                                                         const std::atomic<bool>* stop) {
  std::shared_ptr<const BaseGraph> g;
  {
    std::lock_guard<std::mutex> lock(slot_mu_);
    if (!prepare && next_.file == file.get()) {
      current_ = std::move(next_);  // made ahead for this base: Get's from now on
      next_ = Slot();
    }
    if (current_.file == file.get() || next_.file == file.get()) {
      g = (current_.file == file.get() ? current_ : next_).graph;
      if (!prepare) return g;
    } else {
      g = BaseGraph::Build(file, revision, store);  // O(1)
      (prepare ? next_ : current_) = Slot{file.get(), g};
      (prepare ? built_by_prepare_ : built_by_get_).fetch_add(1);
    }
  }
  // Prepare makes what the base holds in memory ahead, on its own thread, for a
  // graph a call made first too, what searches need first: the entities' order
  // and the search's text and grams when the file has no entity search block,
  // the odd labels, then the relations' order. A call that needs the search's
  // text waits for it (call_once); a search goes without the odd labels until
  // they are set; a call that needs relations scans as far as it needs between
  // Prepare's chunks.
  if (prepare) {
    if (!g->indexed()) g->MakeSearch();
    g->ScanLabels(stop);
    g->ScanAllRelations(kSourcesPerChunk, stop);
  }
  return g;
}

void GraphViewCache::Prepare(std::shared_ptr<const Reader> base, uint64_t revision,
                             const Store& store, const std::atomic<bool>* stop) {
  if (base == nullptr || base->layered() || !base->EnsureContent().ok()) return;
  GraphOf(base, revision, store, /*prepare=*/true, stop);
}

void GraphViewCache::PrepareLevel(std::shared_ptr<const Reader> level, const Store& store) {
  if (level == nullptr || !level->layered() || level->layer_base()->layered() ||
      !level->EnsureContent().ok()) {
    return;
  }
  const Reader* file = level->layer_base().get();
  std::shared_ptr<const BaseGraph> bg;
  {
    std::lock_guard<std::mutex> lock(slot_mu_);
    if (current_.file == file) bg = current_.graph;
    if (next_.file == file) bg = next_.graph;
  }
  if (bg == nullptr) return;  // the first Get over its base reads it
  auto overlay = BuildOverlay(*level, StoreRelationOrder(*level, store), *bg, {});
  if (!level->ContentStatus().ok()) return;  // the calls find the damage where they read it
  std::lock_guard<std::mutex> lock(mu_);
  prepared_ = {std::move(level), std::move(overlay)};
}

void GraphViewCache::Clear() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    last_.reset();
    base_.reset();
    levels_.clear();
    prepared_ = {};
  }
  std::lock_guard<std::mutex> lock(slot_mu_);
  current_ = Slot();
  next_ = Slot();
}

// ---- the mapping ----

std::string EntityKey(std::string_view name) {
  return std::string(kEntityKeyPrefix) + std::string(name);
}

std::string ObservationKey(std::string_view entity, std::string_view observation) {
  return snapshot::ObservationKeyPrefix(entity) + FormatHexId(Hash64(observation));
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
