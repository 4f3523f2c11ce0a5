#include "snapshot/writer.h"

#include <fcntl.h>
#include <lz4frame.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cassert>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <future>
#include <memory>
#include <random>
#include <thread>
#include <tuple>

#include "common/coding.h"
#include "common/free_vector.h"
#include "common/hash.h"
#include "common/huge_pages.h"
#include "common/model.h"
#include "snapshot/entity_search.h"
#include "snapshot/internal/emitter.h"
#include "snapshot/format.h"
#include "snapshot/internal/string_list.h"
#include "snapshot/internal/term_index.h"

namespace amem::snapshot {

static_assert(std::endian::native == std::endian::little,
              "the vector block is copied from host floats");

namespace {

// How many records ahead a pass over the nodes prefetches their strings.
constexpr size_t kLookahead = 8;

constexpr std::string_view kStubMeta = R"({"stub":"true"})";
constexpr std::string_view kEmptyMeta = "{}";

// One node as written: a live store node or a stub for a dangling edge endpoint.
struct WNode {
  std::string_view key;
  uint64_t id = 0;
  uint8_t type = 0;
  uint32_t session = 0;
  float confidence = 1.0f;
  int64_t created_ts = 0, updated_ts = 0;
  std::string_view content, meta;
  uint32_t scope = 0, task = 0;  // indexes into the labels ("" is 0)
  const char* vector = nullptr;  // dimension little-endian floats, unaligned
  bool stub = false;
  // A live node's index in state.nodes; a stub's is input_count + its rank
  // among the stubs. Also its text's index in the TermIndex.
  uint32_t input = 0;
};

struct WEdge {
  uint32_t src = 0, dst = 0;
  uint32_t input = 0;  // its index in the state's edges
  RelationId rel = 0;
};

// The state's edges in its order: its EdgeViews, or its EdgeRefs decoded where
// a field is read (the export: Store::VisitState with edge_refs, so that 3M
// edges cost 72 MB rather than 480). The positions and relation need no decoding.
class EdgeSource {
 public:
  explicit EdgeSource(const StoreStateView& state)
      : views_(state.edges.data()),
        refs_(state.edge_refs.empty() ? nullptr : state.edge_refs.data()),
        size_(state.edge_refs.empty() ? state.edges.size() : state.edge_refs.size()) {}
  size_t size() const { return size_; }
  uint32_t src_node(size_t j) const { return refs_ ? refs_[j].src_node : views_[j].src_node; }
  uint32_t dst_node(size_t j) const { return refs_ ? refs_[j].dst_node : views_[j].dst_node; }
  RelationId rel(size_t j) const { return refs_ ? refs_[j].rel : views_[j].rel; }
  // Edge j; a decoded ref is put in *scratch. Its string_views outlive scratch
  // (they point into the store's pages, or the state's).
  const EdgeView& Get(size_t j, EdgeView* scratch) const {
    if (refs_ == nullptr) return views_[j];
    *scratch = DecodeEdgeRef(refs_[j]);
    return *scratch;
  }
  std::string_view src_key(size_t j) const {
    EdgeView scratch;
    return Get(j, &scratch).src_key;
  }
  std::string_view dst_key(size_t j) const {
    EdgeView scratch;
    return Get(j, &scratch).dst_key;
  }
  // Starts fetching edge j's record, to be read a few edges later.
  void Prefetch(size_t j) const {
    if (refs_ != nullptr) {
      __builtin_prefetch(refs_[j].value);
    } else {
      __builtin_prefetch(&views_[j].created_ts);
    }
  }

 private:
  const EdgeView* views_;
  const EdgeRef* refs_;  // null: views_
  size_t size_;
};

// string -> u32 by open addressing over Hash64: the runs and labels, and the keys
// of edge endpoints the store gave no position for. std::unordered_map's
// per-entry nodes made these lookups a sixth of the export. The table's order
// never reaches the output.
class StringIndex {
 public:
  // Maps s to v unless s is present; returns s's value slot either way.
  uint32_t* Insert(std::string_view s, uint32_t v) {
    if (2 * (size_ + 1) > slots_.size()) Rehash(std::max<size_t>(64, 2 * slots_.size()));
    const uint64_t h = Hash64(s);
    Slot& slot = slots_[Probe(s, h)];
    if (!slot.used) {
      slot = {h, s, v, true};
      ++size_;
    }
    return &slot.value;
  }
  // nullptr when s is absent.
  const uint32_t* Find(std::string_view s) const {
    if (slots_.empty()) return nullptr;
    const Slot& slot = slots_[Probe(s, Hash64(s))];
    return slot.used ? &slot.value : nullptr;
  }
  void Reserve(size_t n) {
    if (2 * n > slots_.size()) Rehash(std::bit_ceil(std::max<size_t>(64, 2 * n)));
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    std::string_view key;
    uint32_t value = 0;
    bool used = false;
  };
  // The slot holding s, or the empty slot where it belongs.
  size_t Probe(std::string_view s, uint64_t h) const {
    const size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      const Slot& slot = slots_[i];
      if (!slot.used || (slot.hash == h && slot.key == s)) return i;
    }
  }
  void Rehash(size_t slot_count) {
    std::vector<Slot> old(slot_count);
    old.swap(slots_);
    for (const Slot& slot : old) {
      if (slot.used) slots_[Probe(slot.key, slot.hash)] = slot;
    }
  }

  std::vector<Slot> slots_;  // a power of two, at most half full
  size_t size_ = 0;
};

// Sorted distinct strings with "" at index 0. Add() numbers each string the
// first time it is seen and keeps a copy of it; once sealed, Rank() turns that
// number into the string's index in sorted order, which is what the file holds.
// The writer keeps the numbers, so no record's string is looked at twice, and the
// table compares against its own copies: the records' strings are views into the
// store's pages, where each comparison past the cache costs a miss. Neighbouring
// records mostly share a run or task, and labels alternate between a node's scope
// and its task, so the two strings seen last skip the hash.
class Dictionary {
 public:
  Dictionary() {
    index_.Insert(std::string_view(), 0);
    seen_.push_back(std::string_view());
  }
  uint32_t Add(std::string_view s) {
    for (const Recent& r : recent_) {
      if (r.s == s) return r.number;
    }
    const uint32_t* found = index_.Find(s);
    const uint32_t number = found ? *found : static_cast<uint32_t>(seen_.size());
    if (!found) {  // the table keeps a copy, not the view into the record
      const std::string_view copy = copies_.emplace_back(s);
      index_.Insert(copy, number);
      seen_.push_back(copy);
    }
    recent_[1] = recent_[0];
    recent_[0] = {seen_[number], number};
    return number;
  }
  void Seal() {
    std::vector<uint32_t> order(seen_.size());
    for (uint32_t k = 0; k < order.size(); ++k) order[k] = k;
    std::sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return seen_[a] < seen_[b]; });
    items_.resize(order.size());
    rank_.resize(order.size());
    for (uint32_t k = 0; k < order.size(); ++k) {
      items_[k] = seen_[order[k]];
      rank_[order[k]] = k;
    }
  }
  // REQUIRES: Seal(); `number` came from Add().
  uint32_t Rank(uint32_t number) const { return rank_[number]; }
  const std::vector<std::string_view>& items() const { return items_; }

 private:
  struct Recent {
    std::string_view s;
    uint32_t number = 0;  // "" is 0
  };
  std::deque<std::string> copies_;  // stable addresses
  StringIndex index_;                // keys: views into copies_
  std::vector<std::string_view> seen_;  // by number, into copies_
  std::vector<std::string_view> items_;  // sorted
  std::vector<uint32_t> rank_;           // by number
  Recent recent_[2];
};

std::string_view Identity(std::string_view s) { return s; }

// An index block whose length is known before its bytes are: the file's layout
// is fixed first, then every block is streamed straight into the output.
struct PendingBlock {
  BlockTag tag;
  uint64_t length;  // body bytes before padding
  std::function<void(Emitter*)> emit;
};

Status AddBlock(std::vector<PendingBlock>* blocks, BlockTag tag, uint64_t length,
                std::function<void(Emitter*)> emit) {
  if (AlignUp(length, kBlockAlignment) > UINT32_MAX) {
    return Status::InvalidArgument(BlockName(static_cast<uint32_t>(tag)) + ": larger than 4 GiB");
  }
  blocks->push_back({tag, length, std::move(emit)});
  return Status::OK();
}

// Same for a block that is one StringList.
template <typename Container, typename Fn>
Status AddStringListBlock(std::vector<PendingBlock>* blocks, BlockTag tag, const Container& items,
                          Fn get) {
  Result<uint64_t> length = StringListLength(items, get);
  if (!length.ok()) return length.status();
  return AddBlock(blocks, tag, *length,
                  [&items, get](Emitter* out) { PutStringList(out, items, get); });
}

// Compresses the concatenation of the pieces `for_each_piece` visits (raw_size
// bytes in all) into one LZ4 frame, without building the concatenation: the
// pieces are copied a block at a time into a staging buffer, and each full block
// is handed to LZ4F_compressUpdate whole. The frame is the one LZ4F_compressFrame
// makes of the concatenation with the same preferences, byte for byte: 64 KB
// independent blocks, so that a query showing a few texts decodes a few 64 KB
// blocks (docs/FORMAT.md §6).
template <typename ForEachPiece>
Status Compress(uint64_t raw_size, ForEachPiece for_each_piece, std::string* out) {
  auto failed = [](size_t code) {
    return Status::InvalidArgument(std::string("content: LZ4 compression failed: ") +
                                   LZ4F_getErrorName(code));
  };
  LZ4F_preferences_t prefs;
  std::memset(&prefs, 0, sizeof(prefs));
  const size_t block_size = size_t{64} << 10;
  prefs.frameInfo.blockSizeID = LZ4F_max64KB;
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  prefs.frameInfo.contentChecksumFlag = LZ4F_contentChecksumEnabled;
  // Each block's XXH32, so a reader that decodes one block at a time still finds
  // any changed byte in it (docs/FORMAT.md §6).
  prefs.frameInfo.blockChecksumFlag = LZ4F_blockChecksumEnabled;
  prefs.frameInfo.contentSize = raw_size;
  prefs.compressionLevel = 0;
  LZ4F_cctx* raw_cctx = nullptr;
  if (size_t rc = LZ4F_createCompressionContext(&raw_cctx, LZ4F_VERSION); LZ4F_isError(rc)) {
    return failed(rc);
  }
  std::unique_ptr<LZ4F_cctx, decltype(&LZ4F_freeCompressionContext)> cctx(
      raw_cctx, &LZ4F_freeCompressionContext);
  ReserveHuge(out, LZ4F_compressFrameBound(raw_size, &prefs));
  // Grows *out to room for `need` more bytes past `used` (capacity is reserved:
  // no reallocation) and returns where they go.
  size_t used = 0;
  auto room = [&](size_t need) {
    if (out->size() < used + need) out->resize(used + need);
    return out->data() + used;
  };
  const size_t header_bound = 19;  // LZ4F_HEADER_SIZE_MAX
  size_t n = LZ4F_compressBegin(cctx.get(), room(header_bound), header_bound, &prefs);
  if (LZ4F_isError(n)) return failed(n);
  used += n;
  std::unique_ptr<char[]> block(new char[block_size]);
  size_t filled = 0;
  size_t error = 0;
  auto compress_block = [&] {
    const size_t bound = LZ4F_compressBound(filled, &prefs);
    const size_t k = LZ4F_compressUpdate(cctx.get(), room(bound), bound, block.get(), filled, nullptr);
    if (LZ4F_isError(k)) {
      error = k;
    } else {
      used += k;
    }
    filled = 0;
  };
  for_each_piece([&](std::string_view piece) {
    while (!piece.empty() && error == 0) {
      const size_t k = std::min(piece.size(), block_size - filled);
      std::memcpy(block.get() + filled, piece.data(), k);
      filled += k;
      piece.remove_prefix(k);
      if (filled == block_size) compress_block();
    }
  });
  if (filled > 0 && error == 0) compress_block();
  if (error != 0) return failed(error);
  const size_t end_bound = LZ4F_compressBound(0, &prefs);
  n = LZ4F_compressEnd(cctx.get(), room(end_bound), end_bound, nullptr);
  if (LZ4F_isError(n)) return failed(n);
  out->resize(used + n);
  return Status::OK();
}

// Whether every 4-byte little-endian float in `bytes` is finite: an exponent of
// all ones is an infinity or a NaN. Branch-free, without an early exit: the
// vectors are checked as they are copied to the file, and a failure is rare.
bool AllFinite(std::string_view bytes) {
  uint32_t non_finite = 0;
  for (size_t at = 0; at + 4 <= bytes.size(); at += 4) {
    uint32_t bits;
    std::memcpy(&bits, bytes.data() + at, 4);
    non_finite |= static_cast<uint32_t>((bits & 0x7f800000u) == 0x7f800000u);
  }
  return non_finite == 0;
}

Status CheckNode(const NodeView& n) {
  auto bad = [&n](const char* what) {
    return Status::InvalidArgument("node " + std::string(n.key) + what);
  };
  if (!IsValidNodeType(static_cast<uint32_t>(n.type))) return bad(": unknown type");
  if (!std::isfinite(n.confidence) || n.confidence < 0.0f || n.confidence > 1.0f) {
    return bad(": confidence outside 0..1");
  }
  if (n.key.empty()) return Status::InvalidArgument("node with an empty key");
  return Status::OK();
}

// A file that will be fsynced (`write_behind`) has its pages handed to the disk
// in steps as it is written (AtomicFile::Append: sync_file_range, at most two
// steps queued), so the disk works while the rest of the file is laid out and
// the final fsync finds little left to write: 0.4-0.5 s of a 1.2 GB export's
// fsync otherwise.
// A ByteSink onto an AtomicFile.
class FileSink : public ByteSink {
 public:
  explicit FileSink(AtomicFile* file) : file_(file) {}
  Status Append(std::string_view bytes) override { return file_->Append(bytes); }

 private:
  AtomicFile* file_;
};

std::string EdgeName(const EdgeSource& edges, size_t j) {
  return "edge " + std::string(edges.src_key(j)) + " -> " + std::string(edges.dst_key(j));
}

// ---- nodes sorted by key; dangling edge endpoints become stubs ----
struct NodeInputs {
  std::vector<const NodeView*> live;  // state.nodes in key order
  // Keys are looked up only for endpoints whose position the store did not give
  // (EdgeView::src_node): a 1M-node table is past the cache, and lookups of three
  // million edges' keys in it were a tenth of the export.
  bool lookup_keys = false;
  StringIndex key_index;  // key -> position in live; later key -> dense number
  // (key, created_ts) of every edge endpoint that names no live node, sorted.
  std::vector<std::pair<std::string_view, int64_t>> stub_refs;
  std::vector<uint32_t> stub_first;  // each stub's first entry in stub_refs
  uint32_t stub_count = 0;
  uint32_t input_count = 0;  // state.nodes.size()
};

// The live nodes in key order; no key twice.
Status SortNodes(const StoreStateView& state, NodeInputs* in) {
  std::vector<const NodeView*>& live = in->live;
  live.resize(state.nodes.size());
  for (size_t k = 0; k < live.size(); ++k) live[k] = &state.nodes[k];
  auto key_less = [](const auto* a, const auto* b) { return a->key < b->key; };
  // Store::ReadState hands the nodes over in key order; checking costs one pass.
  if (!std::is_sorted(live.begin(), live.end(), key_less)) {
    std::sort(live.begin(), live.end(), key_less);
  }
  for (size_t k = 1; k < live.size(); ++k) {
    if (live[k]->key == live[k - 1]->key) {
      return Status::InvalidArgument("duplicate node key " + std::string(live[k]->key));
    }
  }
  return Status::OK();
}

// The edge endpoints that name no live node: each distinct key becomes a stub.
Status FindStubs(const StoreStateView& state, const EdgeSource& edges, NodeInputs* in) {
  for (size_t j = 0; j < edges.size() && !in->lookup_keys; ++j) {
    in->lookup_keys =
        edges.src_node(j) == EdgeView::kUnknownNode || edges.dst_node(j) == EdgeView::kUnknownNode;
  }
  if (in->lookup_keys) {
    in->key_index.Reserve(in->live.size());
    for (uint32_t k = 0; k < in->live.size(); ++k) in->key_index.Insert(in->live[k]->key, k);
  }
  auto is_live = [&](std::string_view key) { return in->key_index.Find(key) != nullptr; };
  std::vector<std::pair<std::string_view, int64_t>>& stub_refs = in->stub_refs;
  // An endpoint whose position the store gave is live (EdgeView::src_node).
  const uint32_t input_count = in->input_count = static_cast<uint32_t>(state.nodes.size());
  EdgeView scratch;
  for (size_t j = 0; j < edges.size(); ++j) {
    auto out_of_range = [&](uint32_t p) { return p != EdgeView::kUnknownNode && p >= input_count; };
    const uint32_t src = edges.src_node(j), dst = edges.dst_node(j);
    if (out_of_range(src) || out_of_range(dst)) {
      return Status::InvalidArgument(EdgeName(edges, j) + ": endpoint position out of range");
    }
    if (src != EdgeView::kUnknownNode && dst != EdgeView::kUnknownNode) continue;
    const EdgeView& e = edges.Get(j, &scratch);
    if (src == EdgeView::kUnknownNode && !is_live(e.src_key)) {
      stub_refs.emplace_back(e.src_key, e.created_ts);
    }
    if (dst == EdgeView::kUnknownNode && !is_live(e.dst_key)) {
      stub_refs.emplace_back(e.dst_key, e.created_ts);
    }
  }
  std::sort(stub_refs.begin(), stub_refs.end());
  for (uint32_t k = 0; k < stub_refs.size(); ++k) {
    if (k == 0 || stub_refs[k].first != stub_refs[k - 1].first) in->stub_first.push_back(k);
  }
  in->stub_count = static_cast<uint32_t>(in->stub_first.size());
  return Status::OK();
}

// Every field but the key and the vectors' floats: checked once the term
// index's thread is busy, before anything is written. The floats (half a
// gigabyte at 1M nodes, in the store's order rather than the file's) are checked
// by StreamFile as it copies them, so they are read once; an export that fails
// there leaves no file (WriteFileAtomic), and BuildSnapshot returns no bytes.
Status CheckLiveNodes(const std::vector<const NodeView*>& live, uint32_t dim) {
  for (const NodeView* v : live) {
    AMEM_RETURN_IF_ERROR(CheckNode(*v));
    if (!v->vector_bytes.empty() && v->vector_bytes.size() != dim * sizeof(float)) {
      return Status::InvalidArgument("node " + std::string(v->key) + ": vector dimension mismatch");
    }
  }
  return Status::OK();
}

// ---- the term index, on a second thread while the rest is laid out ----
// Tokenizing every content is a quarter of the export and needs nothing but
// the texts, so it starts as soon as the stubs are known: texts in input order
// (state.nodes, then the stubs in key order, whose meta is indexed too). The
// same thread then waits for the file's node order (text_of, set by PlaceTerms
// once the nodes are numbered) and lays the postings out in it
// (TermIndex::Place), without waiting for the writer to reach the term index's
// blocks. With one thread, both steps run on the writer's, each where the other
// thread would start it. The bytes are the same on any number of threads.
struct TermWork {
  bool enabled = false;   // options.term_index
  bool threaded = false;  // Tokenize and Place run on `worker`
  TermIndex terms;
  Status tokenized;
  std::vector<std::string_view> contents, metas;
  std::vector<uint32_t> text_of;  // dense node -> text (Place's order)
  std::future<void> tokenize_done;  // the worker's Tokenize has returned
  std::jthread worker;  // declared after what it uses: joined before they go
  // Declared after the worker: if the writer returns before the order is known,
  // the promise goes first and the waiting worker stops (broken promise).
  std::promise<void> order_known;

  // Tokenize is done with the texts.
  void ReleaseTexts() {
    FreeVector(&contents);
    FreeVector(&metas);
  }
  // Waits for the worker's Place (the blocks' bytes need it).
  void Join() {
    if (worker.joinable()) worker.join();
  }
};

void StartTermIndex(const StoreStateView& state, const WriterOptions& options, uint32_t stub_count,
                    TermWork* tw) {
  tw->enabled = options.term_index;
  tw->threaded = options.term_index && options.threads >= 2;
  if (!tw->enabled) return;
  tw->contents.resize(state.nodes.size() + stub_count);
  tw->metas.resize(state.nodes.size() + stub_count);
  for (size_t k = 0; k < state.nodes.size(); ++k) {
    tw->contents[k] = state.nodes[k].content;
    tw->metas[k] = state.nodes[k].meta == kEmptyMeta ? std::string_view() : state.nodes[k].meta;
  }
  std::fill(tw->metas.begin() + static_cast<ptrdiff_t>(state.nodes.size()), tw->metas.end(), kStubMeta);
  const uint32_t embedding_dim = options.embeddings ? state.dimension : 0;
  if (!tw->threaded) {
    tw->tokenized = tw->terms.Tokenize(tw->contents, tw->metas, embedding_dim);
    tw->ReleaseTexts();
    return;
  }
  std::promise<void> tokenize_promise;
  tw->tokenize_done = tokenize_promise.get_future();
  tw->worker = std::jthread([tw, embedding_dim, tokenize_promise = std::move(tokenize_promise),
                             order = tw->order_known.get_future()]() mutable {
    tw->tokenized = tw->terms.Tokenize(tw->contents, tw->metas, embedding_dim);
    tw->ReleaseTexts();
    tokenize_promise.set_value();
    if (!tw->tokenized.ok()) return;
    try {
      order.get();
    } catch (const std::future_error&) {
      return;  // the writer stopped before numbering the nodes
    }
    tw->terms.Place(tw->text_of);
  });
}

// The file's node order is known (input_dense: text -> dense node): the worker,
// waiting for it, lays the postings out; with one thread, this does.
void PlaceTerms(const std::vector<uint32_t>& input_dense, TermWork* tw) {
  if (!tw->enabled) return;
  const uint32_t n = static_cast<uint32_t>(input_dense.size());
  tw->text_of.resize(n);
  for (uint32_t k = 0; k < n; ++k) tw->text_of[input_dense[k]] = k;
  if (tw->threaded) {
    tw->order_known.set_value();
  } else if (tw->tokenized.ok()) {
    tw->terms.Place(tw->text_of);
  }
}

// ---- sessions (runs) and labels (scopes, tasks) ----
struct NodeLabels {
  uint32_t run, scope, task;
};
struct RecordLabels {
  uint32_t run, task;
};
// What the file needs of an edge's record beyond its endpoints and relation,
// read in the one pass that decodes each edge in the store's order: the blocks
// that list edges in the file's order then read no record (a ref decoded in
// that order costs a cache and TLB miss in the store's map each: +2 s at 3M).
struct EdgeFacts {
  int64_t created_ts, updated_ts;
  const char* payload;  // into the store's pages or the state's
  uint32_t payload_size;
  uint32_t run, task;  // Dictionary numbers
  float weight;
};
// Each record's run and labels by their Dictionary numbers, in input order.
struct Attribution {
  Dictionary runs, labels;
  std::vector<NodeLabels> nodes;
  std::vector<EdgeFacts> edges;
  std::vector<RecordLabels> kv;
  uint32_t session_count = 0;  // runs, "" included
  int64_t edge_newest = 0;      // the newest created or updated ts of an edge, if any
  uint64_t payload_bytes = 0;  // the edges' payloads
};

void CollectLabels(const StoreStateView& state, const EdgeSource& edges, Attribution* a) {
  Dictionary& runs = a->runs;
  Dictionary& labels = a->labels;
  a->nodes.resize(state.nodes.size());
  a->edges.resize(edges.size());
  a->kv.resize(state.kv.size());
  for (size_t k = 0; k < state.nodes.size(); ++k) {
    // The nodes are in key order, their records all over the store's map: the
    // strings a few nodes ahead are fetched while these are compared.
    if (k + kLookahead < state.nodes.size()) __builtin_prefetch(state.nodes[k + kLookahead].run.data());
    const NodeView& v = state.nodes[k];
    a->nodes[k] = {runs.Add(v.run), labels.Add(v.scope), labels.Add(v.task)};
  }
  EdgeView scratch;
  int64_t newest = INT64_MIN;
  for (size_t j = 0; j < edges.size(); ++j) {
    if (j + kLookahead < edges.size()) edges.Prefetch(j + kLookahead);
    const EdgeView& e = edges.Get(j, &scratch);
    a->edges[j] = {e.created_ts,    e.updated_ts,     e.payload.data(),
                   static_cast<uint32_t>(std::min<size_t>(e.payload.size(), UINT32_MAX)),
                   runs.Add(e.run), labels.Add(e.task), e.weight};
    newest = std::max({newest, e.created_ts, e.updated_ts});
    a->payload_bytes += e.payload.size();
  }
  a->edge_newest = newest;
  for (size_t k = 0; k < state.kv.size(); ++k) {
    a->kv[k] = {runs.Add(state.kv[k].run), labels.Add(state.kv[k].task)};
  }
  runs.Seal();
  labels.Seal();
  a->session_count = static_cast<uint32_t>(runs.items().size());
}

// ---- the nodes as written: live ones and stubs, numbered densely ----
WNode LiveNode(const StoreStateView& state, const Attribution& a, const NodeView* v) {
  WNode w;
  w.key = v->key;
  w.id = v->id;
  w.type = static_cast<uint8_t>(v->type);
  const NodeLabels& nl = a.nodes[v - state.nodes.data()];
  w.session = a.runs.Rank(nl.run);
  w.confidence = v->confidence;
  w.created_ts = v->created_ts;
  w.updated_ts = v->updated_ts;
  w.content = v->content;
  w.meta = v->meta;
  w.scope = a.labels.Rank(nl.scope);
  w.task = a.labels.Rank(nl.task);
  if (!v->vector_bytes.empty()) w.vector = v->vector_bytes.data();
  w.input = static_cast<uint32_t>(v - state.nodes.data());
  return w;
}

WNode StubNode(const NodeInputs& in, uint32_t stub) {
  WNode w;
  w.input = in.input_count + stub;
  w.key = in.stub_refs[in.stub_first[stub]].first;
  w.id = NodeIdForKey(w.key);
  w.type = static_cast<uint8_t>(NodeType::kEntity);
  w.confidence = 0.0f;
  // The smallest created_ts of its edges (the pairs are sorted).
  w.created_ts = w.updated_ts = in.stub_refs[in.stub_first[stub]].second;
  w.meta = kStubMeta;  // session 0 and labels 0: ""
  w.stub = true;
  return w;
}

struct DenseNodes {
  uint32_t n = 0;
  std::vector<uint32_t> session_start;  // session s is the nodes [start[s], start[s+1])
  std::vector<uint32_t> by_key;         // dense numbers in key order
  std::vector<WNode> nodes;             // in dense order
  std::vector<uint32_t> input_dense;    // WNode::input -> dense number
};

// Dense order: (session, key), so each session is one node range (session
// index): a stable counting sort by session of the nodes in key order, which
// is the merge of the two lists.
Status NumberNodes(const StoreStateView& state, const NodeInputs& in, const Attribution& a,
                   DenseNodes* d) {
  const std::vector<const NodeView*>& live = in.live;
  const uint32_t stub_count = in.stub_count;
  if (live.size() + stub_count > UINT32_MAX - 1) return Status::InvalidArgument("too many nodes");
  const uint32_t n = d->n = static_cast<uint32_t>(live.size() + stub_count);
  std::vector<uint32_t>& session_start = d->session_start;
  session_start.assign(static_cast<size_t>(a.session_count) + 1, 0);
  for (const NodeView* v : live) ++session_start[a.runs.Rank(a.nodes[v - state.nodes.data()].run) + 1];
  session_start[1] += stub_count;
  for (uint32_t s = 0; s < a.session_count; ++s) session_start[s + 1] += session_start[s];
  d->by_key.resize(n);
  ReserveHuge(&d->nodes, n);
  d->nodes.resize(n);
  d->input_dense.resize(n);
  std::vector<uint32_t> fill(session_start.begin(), session_start.end() - 1);
  size_t live_at = 0;
  uint32_t stub_at = 0;
  for (uint32_t k = 0; k < n; ++k) {
    const bool take_live = stub_at == stub_count ||
                           (live_at < live.size() &&
                            live[live_at]->key < in.stub_refs[in.stub_first[stub_at]].first);
    const WNode w = take_live ? LiveNode(state, a, live[live_at++]) : StubNode(in, stub_at++);
    d->by_key[k] = fill[w.session]++;
    d->nodes[d->by_key[k]] = w;
    d->input_dense[w.input] = d->by_key[k];
  }
  return Status::OK();
}

// An edge endpoint's dense number: by the store's position, else by its key.
template <typename KeyFn>
uint32_t DenseOf(const DenseNodes& d, const StringIndex& key_index, uint32_t input, KeyFn key) {
  return input != EdgeView::kUnknownNode ? d.input_dense[input] : *key_index.Find(key());
}

// ---- relations and edges ----
struct Relations {
  std::vector<std::string> names;  // by file id, kRelationSlots of them
  std::vector<uint16_t> file_rel;  // file_rel[store id] = file id; 0xFFFF: undefined
};

// Custom relations are renumbered 64 + rank in bytewise name order, so the file
// does not depend on the order in which the store defined them (FORMAT.md §5).
Status MapRelations(const StoreStateView& state, Relations* rels) {
  std::vector<std::string>& rel_names = rels->names;
  rel_names.resize(kRelationSlots);
  for (int r = 0; r < kBuiltinRelationCount; ++r) {
    rel_names[r] = BuiltinRelationName(static_cast<RelationId>(r));
  }
  std::vector<std::pair<std::string_view, RelationId>> custom;  // (name, store id)
  std::vector<bool> seen(kRelationSlots);
  for (const auto& [id, name] : state.relations) {
    if (id >= kBuiltinRelationCount && id < kFirstCustomRelation) {
      return Status::InvalidArgument("relation id " + std::to_string(id) + " is reserved");
    }
    if (id < kFirstCustomRelation) continue;
    if (name.empty() || seen[id]) {
      return Status::InvalidArgument("relation id " + std::to_string(id) +
                                     (name.empty() ? " has no name" : " defined twice"));
    }
    seen[id] = true;
    custom.emplace_back(name, id);
  }
  std::sort(custom.begin(), custom.end());
  std::vector<uint16_t>& file_rel = rels->file_rel;
  file_rel.assign(kRelationSlots, 0xFFFF);
  for (int r = 0; r < kBuiltinRelationCount; ++r) file_rel[r] = static_cast<uint16_t>(r);
  for (size_t k = 0; k < custom.size(); ++k) {
    if (k > 0 && custom[k].first == custom[k - 1].first) {
      return Status::InvalidArgument("relation " + std::string(custom[k].first) +
                                     " defined twice");
    }
    // At most 192 distinct store ids exist in 64..255, so the rank fits.
    const size_t file_id = kFirstCustomRelation + k;
    rel_names[file_id] = custom[k].first;
    file_rel[custom[k].second] = static_cast<uint16_t>(file_id);
  }
  return Status::OK();
}

struct DenseEdges {
  uint32_t m = 0;
  std::vector<uint32_t> out_start;  // (n+1): the OutIndex block
  std::vector<WEdge> edges;         // sorted by (src, rel, dst)
};

// Sorted by (src, rel, dst): a counting sort by source, whose bucket bounds are
// the OutIndex block, then each source's run by (rel, dst).
Status SortEdges(const EdgeSource& source, const Attribution& a, const Relations& rels,
                 const DenseNodes& d, const StringIndex& key_index, DenseEdges* de) {
  if (source.size() > UINT32_MAX - 1) return Status::InvalidArgument("too many edges");
  const uint32_t n = d.n;
  const uint32_t m = de->m = static_cast<uint32_t>(source.size());
  std::vector<uint32_t>& out_start = de->out_start;
  out_start.assign(static_cast<size_t>(n) + 1, 0);
  // Two passes over the store's edges: sources and counts, then the records.
  std::vector<uint32_t> edge_src(m);
  for (uint32_t j = 0; j < m; ++j) {
    const RelationId rel = source.rel(j);
    if (rels.file_rel[rel] == 0xFFFF) {
      return Status::InvalidArgument(EdgeName(source, j) + ": undefined relation " +
                                     std::to_string(rel));
    }
    if (!std::isfinite(a.edges[j].weight)) {
      return Status::InvalidArgument(EdgeName(source, j) + ": weight not finite");
    }
    // Edges of one source usually come together (Store::VisitState groups them).
    const uint32_t src_node = source.src_node(j);
    const bool same_src = j > 0 && (src_node != EdgeView::kUnknownNode
                                        ? src_node == source.src_node(j - 1)
                                        : source.src_key(j) == source.src_key(j - 1));
    edge_src[j] = same_src ? edge_src[j - 1]
                           : DenseOf(d, key_index, src_node, [&] { return source.src_key(j); });
    ++out_start[edge_src[j] + 1];
  }
  for (uint32_t i = 0; i < n; ++i) out_start[i + 1] += out_start[i];
  std::vector<WEdge>& edges = de->edges;
  ReserveHuge(&edges, m);
  edges.resize(m);
  {
    std::vector<uint32_t> fill(out_start.begin(), out_start.end() - 1);
    for (uint32_t j = 0; j < m; ++j) {
      const uint32_t dst =
          DenseOf(d, key_index, source.dst_node(j), [&] { return source.dst_key(j); });
      edges[fill[edge_src[j]]++] = {edge_src[j], dst, j,
                                    static_cast<RelationId>(rels.file_rel[source.rel(j)])};
    }
  }
  FreeVector(&edge_src);
  for (uint32_t i = 0; i < n; ++i) {
    std::sort(edges.begin() + out_start[i], edges.begin() + out_start[i + 1],
              [](const WEdge& a, const WEdge& b) { return std::tie(a.rel, a.dst) < std::tie(b.rel, b.dst); });
  }
  for (size_t k = 1; k < edges.size(); ++k) {
    if (edges[k].src == edges[k - 1].src && edges[k].rel == edges[k - 1].rel &&
        edges[k].dst == edges[k - 1].dst) {
      return Status::InvalidArgument("duplicate " + EdgeName(source, edges[k].input));
    }
  }
  return Status::OK();
}

// ---- content block: every content, then every non-empty meta ----
bool HasMeta(std::string_view meta) { return !meta.empty() && meta != kEmptyMeta; }

struct Content {
  uint64_t raw_size = 0;       // uncompressed bytes
  uint64_t content_bytes = 0;  // the contents' part of them (the metas follow)
  bool any_vector = false;
  int64_t newest = 0;  // every created/updated ts of nodes and edges and kv ts; 0 if none
  std::string stored;  // the block's bytes: an LZ4 frame, or raw_size raw bytes
};

// The content section's size, whether any node has a vector, and the newest
// ts. The node records are made as they are streamed (NodeRecords).
Status LayOutContent(const StoreStateView& state, const Attribution& a, const DenseNodes& d,
                     Content* c) {
  const std::vector<WNode>& nodes = d.nodes;
  int64_t newest = 0;
  bool have_ts = false;
  auto see_ts = [&](int64_t ts) {
    newest = have_ts ? std::max(newest, ts) : ts;
    have_ts = true;
  };
  uint64_t content_bytes = 0, meta_bytes = 0;
  for (const WNode& w : nodes) {
    content_bytes += w.content.size();
    if (HasMeta(w.meta)) meta_bytes += w.meta.size();
    c->any_vector = c->any_vector || w.vector != nullptr;
    see_ts(w.created_ts);
    see_ts(w.updated_ts);
  }
  if (content_bytes + meta_bytes > UINT32_MAX) {
    return Status::InvalidArgument("content: larger than 4 GiB");
  }
  c->content_bytes = content_bytes;
  c->raw_size = content_bytes + meta_bytes;
  if (!a.edges.empty()) see_ts(a.edge_newest);  // CollectLabels' pass saw the edges' ts
  for (const KvView& kv : state.kv) see_ts(kv.ts);
  c->newest = newest;
  return Status::OK();
}

// The content section's bytes, compressed or not.
Status StoreContent(const DenseNodes& d, const WriterOptions& options, Content* c) {
  const uint32_t n = d.n;
  const std::vector<WNode>& nodes = d.nodes;
  // The content section in file order, where StreamFile's node records point.
  auto for_each_piece = [&](auto&& fn) {
    for (uint32_t i = 0; i < n; ++i) {
      if (i + kLookahead < n) __builtin_prefetch(nodes[i + kLookahead].content.data());
      fn(nodes[i].content);
    }
    for (uint32_t i = 0; i < n; ++i) {
      if (i + kLookahead < n) __builtin_prefetch(nodes[i + kLookahead].meta.data());
      if (HasMeta(nodes[i].meta)) fn(nodes[i].meta);
    }
  };
  if (options.compress) return Compress(c->raw_size, for_each_piece, &c->stored);
  ReserveHuge(&c->stored, c->raw_size);
  for_each_piece([&](std::string_view piece) { c->stored.append(piece); });
  return Status::OK();
}

// ---- header, records, content, vectors ----
Header MakeHeader(uint32_t n, uint32_t m, uint32_t dim, uint32_t session_count, const Content& c,
                  const WriterOptions& options, bool entity_search, bool entity_labels) {
  Header h;
  h.flags = static_cast<uint16_t>((c.any_vector ? kFlagHasVectors : 0) | kFlagHasIndexes |
                                  (options.compress ? kFlagCompressed : 0));
  h.node_count = n;
  h.edge_count = m;
  h.dimension = static_cast<uint16_t>(dim);
  h.session_count = static_cast<uint16_t>(std::min<uint32_t>(session_count, 0xFFFF));
  h.content_offset = Header::kEncodedLength + static_cast<uint64_t>(n) * NodeEntry::kEncodedLength +
                     static_cast<uint64_t>(m) * EdgeEntry::kEncodedLength;
  h.content_length = c.stored.size();
  h.content_uncompressed = static_cast<uint32_t>(c.raw_size);
  h.vector_offset = AlignUp(h.content_offset + c.stored.size(), kVectorAlignment);
  const uint64_t vector_bytes =
      c.any_vector ? static_cast<uint64_t>(n) * dim * sizeof(float) : 0;
  h.index_offset = AlignUp(h.vector_offset + vector_bytes, kBlockAlignment);
  h.features = (options.term_index ? kFeatureTermIndex | kFeatureDocLengths : 0) |
               (options.extensions ? kFeatureExtensions : 0) |
               (options.checksum ? kFeatureChecksum : 0) |
               (options.checksum && options.page_checksums ? kFeaturePageChecksums : 0) |
               (options.term_index && options.embeddings ? kFeatureEmbeddings : 0) |
               (entity_search ? kFeatureEntitySearch : 0) |
               (entity_labels ? kFeatureEntityLabels : 0);
  // Without the term blocks no word is written: the seed's version, which a
  // seed-spec reader accepts (docs/FORMAT.md §3).
  h.version = options.term_index ? kFormatVersion : kSeedFormatVersion;
  return h;
}

// ---- the memory server's entities (0x07, snapshot/entity_search.h) ----
struct EntitySearch {
  std::vector<uint32_t> entities;  // dense numbers of the live entity nodes, by name
  std::vector<uint32_t> observations;  // each one's first "obs:NAME#" key position
  GramIndex grams;
  // The entities whose labels are not words of their node's texts (LabelsInTexts),
  // ascending, as varint gaps.
  std::string odd_labels;
  uint32_t odd_count = 0, odd_last = 0;
};

// The live entity nodes by name (key order), where each one's observation keys
// start in key order (a reader scans them from there instead of searching the
// keys), and the grams of each one's lowered name, type and live observations,
// found by that same scan. False when the state has no entity.
bool BuildEntitySearch(const DenseNodes& d, EntitySearch* es) {
  std::vector<std::string_view> names;
  for (uint32_t p = 0; p < d.n; ++p) {
    const WNode& w = d.nodes[d.by_key[p]];
    std::string_view name;
    if (!w.stub && EntityNameOf(w.key, &name)) {
      es->entities.push_back(d.by_key[p]);
      names.push_back(name);
    }
  }
  if (es->entities.empty()) return false;
  es->observations.reserve(names.size());
  std::string lowered;  // each field's, reused
  EntityTypeCache types;
  auto add = [&](uint32_t k, std::string_view field) {
    lowered.clear();
    AppendAsciiLower(field, &lowered);
    es->grams.AddField(k, lowered);
  };
  for (uint32_t k = 0; k < es->entities.size(); ++k) {
    const WNode& w = d.nodes[es->entities[k]];
    add(k, names[k]);
    const std::string& type = types.Of(w.meta, static_cast<NodeType>(w.type));
    add(k, type);
    if (!LabelsInTexts(names[k], w.content, w.meta, type)) {
      PutVarint32(&es->odd_labels, es->odd_count == 0 ? k : k - es->odd_last);
      es->odd_last = k;
      ++es->odd_count;
    }
    const std::string prefix = ObservationKeyPrefix(names[k]);
    auto p = std::lower_bound(d.by_key.begin(), d.by_key.end(), prefix,
                              [&d](uint32_t i, const std::string& key) { return d.nodes[i].key < key; });
    es->observations.push_back(static_cast<uint32_t>(p - d.by_key.begin()));
    for (; p != d.by_key.end() && d.nodes[*p].key.starts_with(prefix); ++p) {
      const WNode& o = d.nodes[*p];
      std::string_view owner;  // obs:A#B#<hex> is entity A#B's, not A's
      if (!o.stub && ObservationEntityOf(o.key, &owner) && owner == names[k]) {
        add(k, o.content);
      }
    }
  }
  return true;
}

// ---- index blocks, ascending tags: lengths now, bytes when streamed ----
// The blocks' emit functions refer to what these functions are handed, which
// lives until the file is streamed.

// 0x01..0x04
Status AddSeedBlocks(const DenseNodes& d, uint32_t session_count, uint32_t dim,
                     std::vector<PendingBlock>* blocks) {
  const uint32_t n = d.n;
  const size_t bits = (n + 7) / 8;
  AMEM_RETURN_IF_ERROR(AddBlock(blocks, BlockTag::kTypeIndex, 4 + bits * kNodeTypeCount,
                                [&d, n, bits](Emitter* out) {
    std::string bitsets(bits * kNodeTypeCount, '\0');
    for (uint32_t i = 0; i < n; ++i) {
      bitsets[d.nodes[i].type * bits + i / 8] |= static_cast<char>(1u << (i % 8));
    }
    out->PutFixed32(kNodeTypeCount);
    out->Append(bitsets);
  }));
  AMEM_RETURN_IF_ERROR(AddBlock(blocks, BlockTag::kSessionIndex,
                                4 + kSessionEntryLength * uint64_t{session_count},
                                [&d, session_count](Emitter* out) {
    out->PutFixed32(session_count);
    for (uint32_t s = 0; s < session_count; ++s) {
      out->PutFixed32(s);
      out->PutFixed32(d.session_start[s]);
      out->PutFixed32(d.session_start[s + 1]);
    }
  }));
  AMEM_RETURN_IF_ERROR(AddBlock(blocks, BlockTag::kTimeIndex, 4 + kTimeEntryLength * uint64_t{n},
                                [&d, n](Emitter* out) {
    std::vector<std::pair<int64_t, uint32_t>> order(n);  // (created_ts, node)
    for (uint32_t i = 0; i < n; ++i) order[i] = {d.nodes[i].created_ts, i};
    std::sort(order.begin(), order.end());
    out->PutFixed32(n);
    for (const auto& [ts, i] : order) {
      out->PutFixed64(static_cast<uint64_t>(ts));
      out->PutFixed32(i);
    }
  }));
  return AddBlock(blocks, BlockTag::kClusterMap, 8, [dim](Emitter* out) {
    out->PutFixed32(0);  // no clusters (k = 0)
    out->PutFixed32(dim);
  });
}

// 0x05, 0x06
Status AddTermBlocks(TermWork* tw, std::vector<PendingBlock>* blocks) {
  if (tw->threaded) tw->tokenize_done.wait();  // the blocks' lengths are known (Place may run on)
  AMEM_RETURN_IF_ERROR(tw->tokenized);
  AMEM_RETURN_IF_ERROR(AddBlock(blocks, BlockTag::kTermIndex, tw->terms.term_index_length(),
                                [tw](Emitter* out) {
                                  tw->Join();
                                  tw->terms.EmitTermIndex(out);
                                }));
  return AddBlock(blocks, BlockTag::kDocLengths, tw->terms.doc_lengths_length(),
                  [tw](Emitter* out) {
                    tw->Join();
                    tw->terms.EmitDocLengths(out);
                  });
}

// 0x07
Status AddEntitySearchBlock(const EntitySearch& es, std::vector<PendingBlock>* blocks) {
  const uint32_t count = static_cast<uint32_t>(es.entities.size());
  std::vector<uint32_t> grams = es.grams.SortedGrams();
  const uint64_t length = EntitySearchBlock::kFixedLength + EntitySearchBlock::kEntityLength * uint64_t{count} +
                          EntitySearchBlock::kGramEntryLength * (grams.size() + 1) +
                          es.grams.posting_bytes();
  return AddBlock(blocks, BlockTag::kEntitySearch, length,
                  [&es, count, grams = std::move(grams)](Emitter* out) {
    out->PutFixed32(count);
    out->PutFixed32(static_cast<uint32_t>(grams.size()));
    for (uint32_t k = 0; k < count; ++k) {
      out->PutFixed32(es.entities[k]);
      out->PutFixed32(es.observations[k]);
    }
    uint64_t offset = 0;
    for (uint32_t g : grams) {
      const GramList list = es.grams.Find(g);
      out->PutFixed32(g);
      out->PutFixed32(list.count);
      out->PutFixed64(offset);
      offset += list.bytes.size();
    }
    out->PutFixed32(EntitySearchBlock::kSentinel);
    out->PutFixed32(0);
    out->PutFixed64(offset);
    for (uint32_t g : grams) out->Append(es.grams.Find(g).bytes);
  });
}

// 0x08
Status AddEntityLabelsBlock(const EntitySearch& es, std::vector<PendingBlock>* blocks) {
  return AddBlock(blocks, BlockTag::kEntityLabels, EntityLabelsBlock::kFixedLength + es.odd_labels.size(),
                  [&es](Emitter* out) {
    out->PutFixed32(es.odd_count);
    out->PutFixed32(static_cast<uint32_t>(es.odd_labels.size()));
    out->Append(es.odd_labels);
  });
}

// What the extension blocks are built from, besides the layout.
struct ExtensionData {
  std::vector<std::string_view> type_names;
  std::vector<const KvView*> kv;             // sorted by (scope, ns, key)
  std::vector<std::string_view> kv_strings;  // scope, ns, key, value of each
};

// 0x10..0x12
Status AddNodeBlocks(const InfoBlock& info, const DenseNodes& d,
                     std::vector<PendingBlock>* blocks) {
  const uint32_t n = d.n;
  AMEM_RETURN_IF_ERROR(AddBlock(blocks, BlockTag::kInfo, InfoBlock::kEncodedLength,
                                [info](Emitter* out) {
    std::string encoded;
    info.EncodeTo(&encoded);
    out->Append(encoded);
  }));
  AMEM_RETURN_IF_ERROR(AddBlock(blocks, BlockTag::kNodeIds, 12 * uint64_t{n}, [&d, n](Emitter* out) {
    std::vector<std::pair<uint64_t, uint32_t>> by_id(n);  // (id, node)
    for (uint32_t i = 0; i < n; ++i) by_id[i] = {d.nodes[i].id, i};
    std::sort(by_id.begin(), by_id.end());
    for (const WNode& w : d.nodes) out->PutFixed64(w.id);
    for (const auto& [id, i] : by_id) out->PutFixed32(i);
  }));
  auto node_key = [](const WNode& w) { return w.key; };
  Result<uint64_t> keys_length = StringListLength(d.nodes, node_key);
  if (!keys_length.ok()) return keys_length.status();
  return AddBlock(blocks, BlockTag::kNodeKeys, 4 * uint64_t{n} + *keys_length,
                  [&d, node_key](Emitter* out) {
    for (uint32_t i : d.by_key) out->PutFixed32(i);
    PutStringList(out, d.nodes, node_key);
  });
}

// 0x13..0x16
Status AddNameBlocks(const Relations& rels, const Attribution& a, ExtensionData* ext,
                     std::vector<PendingBlock>* blocks) {
  AMEM_RETURN_IF_ERROR(AddStringListBlock(blocks, BlockTag::kRelationNames, rels.names,
                                          [](const std::string& s) { return std::string_view(s); }));
  for (int t = 0; t < kNodeTypeCount; ++t) {
    ext->type_names.push_back(NodeTypeName(static_cast<NodeType>(t)));
  }
  AMEM_RETURN_IF_ERROR(AddStringListBlock(blocks, BlockTag::kTypeNames, ext->type_names, Identity));
  AMEM_RETURN_IF_ERROR(AddStringListBlock(blocks, BlockTag::kRuns, a.runs.items(), Identity));
  return AddStringListBlock(blocks, BlockTag::kLabels, a.labels.items(), Identity);
}

// 0x17..0x19
Status AddAttributeBlocks(const Attribution& a, const DenseNodes& d,
                          const DenseEdges& de, std::vector<PendingBlock>* blocks) {
  AMEM_RETURN_IF_ERROR(AddBlock(blocks, BlockTag::kNodeAttrs,
                                NodeAttrsEntry::kEncodedLength * uint64_t{d.n}, [&d](Emitter* out) {
    std::string encoded;
    for (const WNode& w : d.nodes) {
      encoded.clear();
      NodeAttrsEntry{w.updated_ts, w.scope, w.task, w.stub ? NodeAttrsEntry::kFlagStub : 0}
          .EncodeTo(&encoded);
      out->Append(encoded);
    }
  }));
  AMEM_RETURN_IF_ERROR(AddBlock(blocks, BlockTag::kEdgeAttrs,
                                EdgeAttrsEntry::kEncodedLength * uint64_t{de.m},
                                [&a, &de](Emitter* out) {
    std::string encoded;
    for (size_t j = 0; j < de.edges.size(); ++j) {
      // The facts are in the store's order, not the file's.
      if (j + kLookahead < de.edges.size()) {
        __builtin_prefetch(&a.edges[de.edges[j + kLookahead].input]);
      }
      const EdgeFacts& facts = a.edges[de.edges[j].input];
      encoded.clear();
      EdgeAttrsEntry{facts.created_ts, facts.updated_ts, a.runs.Rank(facts.run),
                     a.labels.Rank(facts.task)}
          .EncodeTo(&encoded);
      out->Append(encoded);
    }
  }));
  // A StringList (PutStringList's bytes) of the payloads CollectLabels found.
  if (a.payload_bytes > UINT32_MAX || de.m >= UINT32_MAX) {
    return Status::InvalidArgument("string list larger than 4 GiB");
  }
  return AddBlock(blocks, BlockTag::kEdgePayloads, 4 + 4 * (uint64_t{de.m} + 1) + a.payload_bytes,
                  [&a, &de](Emitter* out) {
    out->PutFixed32(de.m);
    uint32_t off = 0;
    out->PutFixed32(0);
    for (const WEdge& e : de.edges) {
      off += a.edges[e.input].payload_size;
      out->PutFixed32(off);
    }
    // The payloads lie all over the store's map: the facts two steps ahead
    // and the bytes one step ahead are fetched while these are copied.
    for (size_t j = 0; j < de.edges.size(); ++j) {
      if (j + 2 * kLookahead < de.edges.size()) {
        __builtin_prefetch(&a.edges[de.edges[j + 2 * kLookahead].input]);
      }
      if (j + kLookahead < de.edges.size()) {
        __builtin_prefetch(a.edges[de.edges[j + kLookahead].input].payload);
      }
      const EdgeFacts& facts = a.edges[de.edges[j].input];
      out->Append(std::string_view(facts.payload, facts.payload_size));
    }
  });
}

// 0x1A kv, sorted by (scope, ns, key)
Status AddKvBlock(const StoreStateView& state, const Attribution& a, ExtensionData* ext,
                  std::vector<PendingBlock>* blocks) {
  std::vector<const KvView*>& kv = ext->kv;
  kv.resize(state.kv.size());
  for (size_t k = 0; k < kv.size(); ++k) kv[k] = &state.kv[k];
  std::sort(kv.begin(), kv.end(), [](const KvView* x, const KvView* y) {
    return std::tie(x->scope, x->ns, x->key) < std::tie(y->scope, y->ns, y->key);
  });
  for (size_t k = 0; k < kv.size(); ++k) {
    if (k > 0 && std::tie(kv[k]->scope, kv[k]->ns, kv[k]->key) ==
                     std::tie(kv[k - 1]->scope, kv[k - 1]->ns, kv[k - 1]->key)) {
      return Status::InvalidArgument("duplicate kv entry " + std::string(kv[k]->key));
    }
    ext->kv_strings.insert(ext->kv_strings.end(), {kv[k]->scope, kv[k]->ns, kv[k]->key, kv[k]->value});
  }
  Result<uint64_t> kv_strings_length = StringListLength(ext->kv_strings, Identity);
  if (!kv_strings_length.ok()) return kv_strings_length.status();
  return AddBlock(blocks, BlockTag::kKv,
                  KvFixedEntry::kCountLength + KvFixedEntry::kEncodedLength * kv.size() +
                      *kv_strings_length,
                  [&state, &a, ext](Emitter* out) {
    out->PutFixed32(static_cast<uint32_t>(ext->kv.size()));
    std::string encoded;
    for (const KvView* r : ext->kv) {
      const RecordLabels& kl = a.kv[r - state.kv.data()];
      encoded.clear();
      KvFixedEntry{r->ts, a.runs.Rank(kl.run), a.labels.Rank(kl.task)}.EncodeTo(&encoded);
      out->Append(encoded);
    }
    PutStringList(out, ext->kv_strings, Identity);
  });
}

// 0x1B, 0x1C
Status AddAdjacencyBlocks(const DenseEdges& de, uint32_t n, std::vector<PendingBlock>* blocks) {
  const uint32_t m = de.m;
  AMEM_RETURN_IF_ERROR(AddBlock(blocks, BlockTag::kOutIndex, 4 * (uint64_t{n} + 1),
                                [&de](Emitter* out) {
    for (uint32_t v : de.out_start) out->PutFixed32(v);
  }));
  return AddBlock(blocks, BlockTag::kInIndex, 4 * (uint64_t{n} + 1 + m), [&de, n, m](Emitter* out) {
    const std::vector<WEdge>& edges = de.edges;
    // Counting sort by target, then (rel, source) within.
    std::vector<uint32_t> start(static_cast<size_t>(n) + 1, 0);
    for (const WEdge& e : edges) ++start[e.dst + 1];
    for (uint32_t i = 0; i < n; ++i) start[i + 1] += start[i];
    std::vector<uint32_t> list(m), fill(start.begin(), start.end() - 1);
    for (uint32_t j = 0; j < m; ++j) list[fill[edges[j].dst]++] = j;
    for (uint32_t i = 0; i < n; ++i) {
      if (start[i + 1] - start[i] < 2) continue;
      // (rel, source) is unique per target, so a plain sort is deterministic.
      std::sort(list.begin() + start[i], list.begin() + start[i + 1], [&](uint32_t a, uint32_t b) {
        return std::tie(edges[a].rel, edges[a].src) < std::tie(edges[b].rel, edges[b].src);
      });
    }
    for (uint32_t v : start) out->PutFixed32(v);
    for (uint32_t v : list) out->PutFixed32(v);
  });
}

// 0x1D
Status AddEmbeddingsBlock(TermWork* tw, std::vector<PendingBlock>* blocks) {
  return AddBlock(blocks, BlockTag::kEmbeddings, tw->terms.embeddings_length(),
                  [tw](Emitter* out) {
                    tw->Join();
                    tw->terms.EmitEmbeddings(out);
                  });
}

// ---- stream the file ----
// Returns the file's size.
Result<uint64_t> StreamFile(const Header& h, const Content& c, const DenseNodes& d,
                            const DenseEdges& de, const Attribution& a, uint32_t dim,
                            const std::vector<PendingBlock>& blocks, const WriterOptions& options,
                            ByteSink* sink) {
  uint64_t total = h.index_offset;
  for (const PendingBlock& b : blocks) total += kBlockHeaderLength + AlignUp(b.length, kBlockAlignment);
  const bool pages = (h.features & kFeaturePageChecksums) != 0;
  const uint64_t paged = total;  // the bytes the page checksums cover
  if (pages) total += kBlockHeaderLength + PageChecksumBlock::Length(paged);
  if (options.checksum) total += kBlockHeaderLength + 8;
  sink->Reserve(total);
  // A large file goes to the sink from a second thread (the term index's work is
  // done by then, but for Place) while this one lays out the next bytes.
  constexpr uint64_t kBackgroundBytes = uint64_t{64} << 20;
  Emitter out(sink, options.threads >= 2 && total >= kBackgroundBytes);
  if (pages) out.HashPages(PageChecksumBlock::kPageSize);
  {
    std::string encoded;
    h.EncodeTo(&encoded);
    out.Append(encoded);
    // The node records (docs/FORMAT.md §4): every content in node order, then
    // every non-empty meta, as StoreContent lays them out.
    uint64_t content_at = 0, meta_at = c.content_bytes;
    for (uint32_t i = 0; i < d.n; ++i) {
      const WNode& w = d.nodes[i];
      NodeEntry r;
      r.type = w.type;
      r.session = w.session;
      r.confidence = w.confidence;
      r.timestamp = w.created_ts;
      r.content_offset = content_at;
      r.content_length = static_cast<uint32_t>(w.content.size());
      content_at += w.content.size();
      if (w.vector) r.vector_offset = static_cast<uint64_t>(i) * dim * sizeof(float);
      if (HasMeta(w.meta)) {
        r.meta_offset = meta_at;
        r.meta_length = static_cast<uint32_t>(w.meta.size());
        meta_at += w.meta.size();
      }
      encoded.clear();
      r.EncodeTo(&encoded);
      out.Append(encoded);
    }
    for (const WEdge& e : de.edges) {
      encoded.clear();
      EdgeEntry{e.src, e.dst, e.rel, a.edges[e.input].weight}.EncodeTo(&encoded);
      out.Append(encoded);
    }
  }
  out.AppendStable(c.stored);
  out.AppendZeros(h.vector_offset - out.offset());
  if (c.any_vector) {
    const size_t vector_bytes = dim * sizeof(float);
    for (size_t i = 0; i < d.nodes.size(); ++i) {
      const WNode& w = d.nodes[i];
      // The vectors lie in the store's order, not the file's: the one a few
      // nodes ahead is fetched while this one is copied.
      if (i + kLookahead < d.nodes.size()) {
        if (const char* next = d.nodes[i + kLookahead].vector) {
          for (size_t at = 0; at < vector_bytes; at += 64) __builtin_prefetch(next + at);
        }
      }
      if (w.vector) {
        const std::string_view bytes(w.vector, vector_bytes);
        // Checked here, where they are read anyway (CheckLiveNodes checks the
        // rest); a failure leaves no file (WriteFileAtomic).
        if (!AllFinite(bytes)) {
          return Status::InvalidArgument("node " + std::string(w.key) + ": vector not finite");
        }
        // Little-endian host (static_assert above): the floats' bytes are the format's.
        out.Append(bytes);
      } else {
        out.AppendZeros(dim * sizeof(float));
      }
    }
  }
  out.AppendZeros(h.index_offset - out.offset());
  for (const PendingBlock& b : blocks) {
    out.BeginBlock(b.tag, b.length);
    b.emit(&out);
    out.EndBlock();
  }
  if (pages) {  // 0x1E, over every byte before it, by pages
    const std::vector<uint64_t> hashes = out.TakePageHashes();
    assert(hashes.size() == PageChecksumBlock::PageCount(paged));
    out.BeginBlock(BlockTag::kPageChecksums, PageChecksumBlock::Length(paged));
    out.PutFixed32(PageChecksumBlock::kPageSize);
    out.PutFixed32(static_cast<uint32_t>(hashes.size()));
    for (const uint64_t x : hashes) out.PutFixed64(x);
    out.EndBlock();
  }
  if (options.checksum) {  // 0x1F, over every byte before it
    const uint64_t digest = out.Digest();
    out.BeginBlock(BlockTag::kChecksum, 8);
    out.PutFixed64(digest);
    out.EndBlock();
  }
  AMEM_RETURN_IF_ERROR(out.Flush());
  assert(out.offset() == total);
  return total;
}

// WriteSnapshot; with `release` (the same state), frees its node and edge
// vectors as soon as the writer is done with them.
Result<SnapshotSummary> Write(const StoreStateView& state, StoreStateView* release,
                              const WriterOptions& options, ByteSink* sink) {
  const uint32_t dim = state.dimension;
  if (dim == 0 || dim > kMaxDimension) {
    return Status::InvalidArgument("dimension " + std::to_string(dim) + " out of range");
  }
  if (!state.edges.empty() && !state.edge_refs.empty()) {
    return Status::InvalidArgument("a state with both edge views and edge refs");
  }
  const EdgeSource source(state);
  NodeInputs in;
  AMEM_RETURN_IF_ERROR(SortNodes(state, &in));
  AMEM_RETURN_IF_ERROR(FindStubs(state, source, &in));
  TermWork tw;  // joined before what was declared ahead of it goes
  StartTermIndex(state, options, in.stub_count, &tw);
  Attribution attribution;
  CollectLabels(state, source, &attribution);
  DenseNodes d;
  AMEM_RETURN_IF_ERROR(NumberNodes(state, in, attribution, &d));
  // Every field but the key and the vectors' floats (StreamFile checks those).
  AMEM_RETURN_IF_ERROR(CheckLiveNodes(in.live, dim));
  FreeVector(&in.live);
  FreeVector(&attribution.nodes);
  // The nodes as written (d.nodes) hold all the file needs of them.
  if (release != nullptr) FreeVector(&release->nodes);
  PlaceTerms(d.input_dense, &tw);  // the term index's worker waits for this order
  EntitySearch es;
  const bool entity_search =
      options.entity_search && options.extensions && BuildEntitySearch(d, &es);
  const bool entity_labels = entity_search && options.entity_labels;
  if (in.lookup_keys) {
    for (uint32_t i = 0; i < d.n; ++i) *in.key_index.Insert(d.nodes[i].key, i) = i;
  }
  Relations rels;
  AMEM_RETURN_IF_ERROR(MapRelations(state, &rels));
  DenseEdges de;
  AMEM_RETURN_IF_ERROR(SortEdges(source, attribution, rels, d, in.key_index, &de));
  // The file's edges (de.edges) and their facts hold all the file needs of them.
  if (release != nullptr) {
    FreeVector(&release->edges);
    FreeVector(&release->edge_refs);
  }
  Content content;
  AMEM_RETURN_IF_ERROR(LayOutContent(state, attribution, d, &content));
  AMEM_RETURN_IF_ERROR(StoreContent(d, options, &content));
  const Header h =
      MakeHeader(d.n, de.m, dim, attribution.session_count, content, options, entity_search,
                 entity_labels);

  std::vector<PendingBlock> blocks;
  ExtensionData ext;
  AMEM_RETURN_IF_ERROR(AddSeedBlocks(d, attribution.session_count, dim, &blocks));
  if (options.term_index) AMEM_RETURN_IF_ERROR(AddTermBlocks(&tw, &blocks));
  if (entity_search) AMEM_RETURN_IF_ERROR(AddEntitySearchBlock(es, &blocks));
  if (entity_labels) AMEM_RETURN_IF_ERROR(AddEntityLabelsBlock(es, &blocks));
  if (options.extensions) {
    InfoBlock info;
    info.newest_ts = content.newest;
    info.session_count = attribution.session_count;
    info.stub_count = in.stub_count;
    info.kv_count = static_cast<uint32_t>(state.kv.size());
    AMEM_RETURN_IF_ERROR(AddNodeBlocks(info, d, &blocks));
    AMEM_RETURN_IF_ERROR(AddNameBlocks(rels, attribution, &ext, &blocks));
    AMEM_RETURN_IF_ERROR(AddAttributeBlocks(attribution, d, de, &blocks));
    AMEM_RETURN_IF_ERROR(AddKvBlock(state, attribution, &ext, &blocks));
    AMEM_RETURN_IF_ERROR(AddAdjacencyBlocks(de, d.n, &blocks));
  }
  if (options.term_index && options.embeddings) {
    AMEM_RETURN_IF_ERROR(AddEmbeddingsBlock(&tw, &blocks));
  }
  Result<uint64_t> total = StreamFile(h, content, d, de, attribution, dim, blocks, options, sink);
  if (!total.ok()) return total.status();
  return SnapshotSummary{d.n, in.stub_count, de.m, *total};
}

}  // namespace

void StringSink::Reserve(uint64_t total) { ReserveHuge(out_, total); }

Result<SnapshotSummary> WriteSnapshot(const StoreStateView& state, const WriterOptions& options,
                                      ByteSink* sink) {
  return Write(state, nullptr, options, sink);
}

Result<SnapshotSummary> WriteSnapshot(StoreStateView&& state, const WriterOptions& options,
                                      ByteSink* sink) {
  return Write(state, &state, options, sink);
}

Result<SnapshotSummary> WriteSnapshot(const StoreState& state, const WriterOptions& options,
                                      ByteSink* sink) {
  return WriteSnapshot(ViewOf(state), options, sink);
}

Result<std::string> BuildSnapshot(const StoreState& state, const WriterOptions& options) {
  std::string file;
  StringSink sink(&file);
  Result<SnapshotSummary> written = WriteSnapshot(state, options, &sink);
  if (!written.ok()) return written.status();
  return file;
}

Status WriteFileAtomic(const std::string& path, const std::function<Status(ByteSink*)>& produce,
                       Durability durability) {
  RemoveStaleTempFilesOf(path);  // what a killed writer of this file left
  AtomicFile file;
  AMEM_RETURN_IF_ERROR(file.Open(path, /*write_behind=*/durability == Durability::kSynced));
  FileSink sink(&file);
  AMEM_RETURN_IF_ERROR(produce(&sink));  // the temp file goes with `file`
  return file.Commit(durability);
}

Status WriteFileAtomic(const std::string& path, std::string_view data, Durability durability) {
  return WriteFileAtomic(path, [data](ByteSink* sink) { return sink->Append(data); }, durability);
}

}  // namespace amem::snapshot
