// amem::snapshot::Reader — a read-only, memory-mapped .amem snapshot
// (docs/FORMAT.md). Open() checks the header, the block table and the small fixed
// blocks, in time independent of the node and edge counts; each larger structure
// is checked when a query first reads it, at a cost proportional to what it reads
// (docs/FORMAT.md §9): node and edge records, out/in adjacency and the time index
// by chunks of 32 to 4096 entries (each checked once, then trusted), key/id/term
// orders at every binary-search probe, posting lists per term, string lists per
// entry. A file with the page checksums block (docs/FORMAT.md §8.22, what amem
// writes) has every 4 KiB page that a read touches hashed on first use too, so a
// changed byte that still fits (a confidence, a timestamp, a byte of a key) is
// found where it is read. An accessor that reads a damaged chunk or page answers
// with a harmless blank value (an empty range, an empty string, a record of zeros)
// and records the failure in the sticky ReadStatus(); whoever answers checks it
// after building the answer and reports Corruption instead (the amem tools exit
// 5). A truncated, corrupted or hostile file never crashes the reader. Verify()
// checks everything, the checksum block included. Files without amem's extension,
// session and time blocks (seed files) are checked whole at open, as before.
//
// Dense node numbers i are 0..node_count()-1, edge numbers j are 0..edge_count()-1.
// Nodes are ordered by (session, key); edges by (source, rel, target).
//
// Lifetimes: every string_view / pointer returned points into the mapping (or into
// memory the reader owns) and stays valid until the Reader is destroyed.
// Thread safety: all const methods may be called concurrently, including the first
// content access (each content block is decompressed exactly once).
//
// Seed-spec files without amem's extension blocks open too: out/in adjacency,
// session, type and time indexes are rebuilt in memory; keys are "", ids are 0,
// FindKey/FindId return nullopt; scope/task are "", updated_ts = created_ts, runs
// are "" for session 0 and the decimal session number otherwise; has_term_index() /
// has_doc_lengths() say whether the BM25 fast path is available. A real seed v0.1
// file, whose index blocks carry no length, opens with its index section ignored
// (index_section_ignored()).
#ifndef AMEM_SNAPSHOT_READER_H_
#define AMEM_SNAPSHOT_READER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/coding.h"
#include "common/model.h"
#include "common/status.h"
#include "snapshot/entity_search.h"
#include "snapshot/format.h"

namespace amem::snapshot {

class Delta;

struct ReadOptions {
  // Also run Verify() (the full checksum pass) inside Open.
  bool verify_checksum = false;
  // Pre-fault the whole mapping (MAP_POPULATE). Faster first queries, slower open.
  bool populate = false;
  // Also run CheckIndexes() inside Open (O(n + m); what the amem tools do for every
  // snapshot file named with --snapshot).
  bool check_indexes = false;
  // Check every record at open (O(n + m)) instead of on first use.
  bool check_records = false;
  // Check each page a read touches against the page checksums block (FORMAT.md
  // §8.22), when the file has one. Off, the file is read as one without the block
  // (structure checks only); Verify() still checks every page. `amem verify`
  // turns it off to tell a changed byte (checksum, exit 1) from a broken
  // structure (exit 5).
  bool check_pages = true;
};

struct Edge {
  uint32_t source = 0;
  uint32_t target = 0;
  RelationId rel = 0;
  float weight = 1.0f;
};

struct Posting {
  uint32_t node = 0;
  uint32_t tf = 0;  // occurrences of the term in the field
  Field field = Field::kContent;
};

// A term's postings, sorted by (field, node). Cheap to copy; a view into the mapping.
class PostingList {
 public:
  PostingList() = default;
  PostingList(const char* data, uint32_t size) : data_(data), size_(size) {}
  uint32_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  uint32_t node(uint32_t k) const { return DecodeFixed32(data_ + k * kPostingLength); }
  uint32_t tf(uint32_t k) const {
    return DecodeFixed32(data_ + k * kPostingLength + 4) & kMaxTermFrequency;
  }
  Field field(uint32_t k) const {
    return static_cast<Field>(DecodeFixed32(data_ + k * kPostingLength + 4) >> 24);
  }
  Posting operator[](uint32_t k) const { return {node(k), tf(k), field(k)}; }

 private:
  const char* data_ = nullptr;
  uint32_t size_ = 0;
};

class PostingCursor;  // below Reader

struct SessionRange {
  uint32_t session = 0;
  uint32_t begin = 0;  // dense node range [begin, end)
  uint32_t end = 0;
};

struct TimeEntry {
  int64_t ts = 0;
  uint32_t node = 0;
};

struct KvEntry {
  std::string_view scope, ns, key, value;
  int64_t ts = 0;
  std::string_view run, task;
};

// One index block as found in the file (for `amem info`).
struct BlockInfo {
  uint32_t tag = 0;
  uint64_t offset = 0;  // of the block header
  uint64_t length = 0;  // body bytes
};

// Opens `path` for reading without blocking (a FIFO is never waited on) and sets
// *size: the fd, IOError when it cannot be opened, InvalidArgument ("a directory,
// not a snapshot file") when it is not a regular file. The caller closes the fd.
Result<int> OpenSnapshotFile(const std::string& path, uint64_t* size);

class Reader {
 public:
  // Maps `path` read-only and validates it. IOError if it cannot be read,
  // Corruption ("<section>: <what>") if it is not a valid snapshot.
  static Result<std::unique_ptr<Reader>> Open(const std::string& path,
                                              const ReadOptions& options = {});
  // Same over bytes in memory (tests, fuzzing). The bytes are copied into an aligned
  // buffer the reader owns; `data` need not outlive the call.
  static Result<std::unique_ptr<Reader>> OpenBuffer(std::string_view data,
                                                    const ReadOptions& options = {});
  // The state at a delta's head revision read as one graph: `base` plus `delta`
  // (docs/FORMAT.md §11.5). Every accessor answers exactly as a Reader over a full
  // export at delta->head_revision() would, dense numbers included. Opening costs
  // O(changes); each access O(log changes) until a bulk query's edge accesses make
  // the view build flat edge tables (O(n + m), once). Corruption if the two do not
  // fit together. The view shares ownership of both. Thread safety as for a file.
  // `base` may itself be a layered view (the delta then names its numbering): the
  // live view stacks a small delta of the latest writes over a kept view.
  static Result<std::unique_ptr<Reader>> OpenLayered(std::shared_ptr<const Reader> base,
                                                     std::shared_ptr<const Delta> delta);
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // Full pass: the checksum block (Corruption "checksum: ..." when any byte
  // changed) and the content frame (decompressed, its LZ4 content checksum
  // checked). A file without a checksum block (has_checksum() false) gets only the
  // content check.
  Status Verify() const;

  // Checks every index block against the records it indexes, so that a damaged
  // index is reported instead of steering a query to a wrong answer: the key and
  // id orders (permutations, strictly sorted, ids = XXH3 of the keys), each in-edge
  // list (edges into that node, sorted by (rel, source)), the type bitsets (each
  // node in exactly its type's set), the time index ((created_ts, node) of every
  // node, sorted), runs and kv sorted. O(n + m); computed once, then cached.
  // Corruption("<block>: ...") on the first mismatch. Open() checks structure
  // only; Verify() includes this.
  Status CheckIndexes() const;
  // The sticky read status: OK while every structure read so far checked out;
  // otherwise the first Corruption found on a read ("content block: ...", "node
  // record 12: ...", "in index: ..."). Accessors that hit damage answer with blank
  // values (content() and meta() read as "" / "{}"), so whoever shows an answer
  // checks this after building it (the tools do: exit 5 instead of a wrong answer).
  // ContentStatus() is the same status under its former name.
  Status ReadStatus() const;
  Status ContentStatus() const { return ReadStatus(); }
  // Runs every lazy check now (every page against the page checksums, records,
  // adjacency, time index): the first failure, or OK. O(file size), once.
  // Verify() and CheckIndexes() include it. `stop` (optional) is read between
  // steps (a few hundred pages, a chunk of records): once it is set, the check
  // returns Aborted at the next one, and what it did not reach is checked when
  // read, as before.
  Status CheckRecords(const std::atomic<bool>* stop = nullptr) const;
  // Does now what the queries do on first use of the larger structures
  // (docs/FORMAT.md §9): CheckRecords(), the doc lengths summed, every term's
  // postings checked, the type bitsets checked and every content block
  // decompressed (DecodeAllContent). What a long-lived process runs on a thread of
  // its own before it hands a new base to its queries (snapshot/live.h
  // LiveOptions::warm_base), so that none of them pays it. O(file size) and the
  // content's decompressed size in memory, once. The first failure, or OK. A
  // layered view warms its base. `stop` as for CheckRecords (a process that exits
  // stops warming: Aborted); what was warmed stays.
  Status Warm(const std::atomic<bool>* stop = nullptr) const;
  // The page checksums' bookkeeping (§8.22), for tests: pages whose verdict is
  // recorded (hashed, good or bad; O(file size / 4 KiB) to count), and pages not
  // yet known good. Both 0 for a file without the block or read with
  // ReadOptions::check_pages off.
  uint32_t PagesRecorded() const;
  uint32_t PagesLeft() const;

  // ---- header facts ----
  uint16_t version() const { return version_; }
  uint16_t flags() const { return flags_; }
  uint32_t features() const { return features_; }
  uint32_t node_count() const { return node_count_; }
  uint32_t edge_count() const { return edge_count_; }
  uint32_t dimension() const { return dimension_; }
  uint32_t session_count() const { return session_count_; }  // true count
  uint64_t file_size() const { return size_; }
  // Newest timestamp in the file (nodes' created/updated, edges', kv's): "now" for
  // age-based queries. 0 for an empty file.
  int64_t newest_timestamp() const { return newest_ts_; }
  bool has_vectors() const { return (flags_ & kFlagHasVectors) != 0; }
  bool has_term_index() const { return (features_ & kFeatureTermIndex) != 0; }
  bool has_doc_lengths() const { return doc_lengths_ != nullptr; }
  bool has_extensions() const { return (features_ & kFeatureExtensions) != 0; }
  bool has_checksum() const { return (features_ & kFeatureChecksum) != 0; }
  bool content_compressed() const { return (flags_ & kFlagCompressed) != 0; }
  uint64_t content_compressed_size() const { return content_length_; }
  uint64_t content_uncompressed_size() const { return content_uncompressed_; }
  uint32_t stub_count() const { return stub_count_; }
  const std::vector<BlockInfo>& blocks() const { return blocks_; }
  // True for a base + delta view (OpenLayered).
  bool layered() const { return layer_ != nullptr; }
  // A layered view's two parts (null for a plain file): callers that keep an index
  // per base refresh it from the delta's changed and removed nodes, O(changes).
  const std::shared_ptr<const Reader>& layer_base() const;
  const std::shared_ptr<const Delta>& layer_delta() const;
  // True when the file has no feature flags and its index section did not parse
  // as length-prefixed blocks (a seed-spec v0.1 file, whose index blocks have no
  // length field): the section was ignored and the indexes rebuilt (FORMAT.md §10).
  bool index_section_ignored() const;

  // ---- nodes. REQUIRES: i < node_count() ----
  uint8_t type_code(uint32_t i) const { return static_cast<uint8_t>(node_ptr(i)[0]); }
  NodeType type(uint32_t i) const { return static_cast<NodeType>(type_code(i)); }
  uint32_t session(uint32_t i) const {
    if (layer_) [[unlikely]] return LayeredSession(i);
    return DecodeFixed32(node_ptr(i) + NodeEntry::kSessionOffset);
  }
  float confidence(uint32_t i) const {
    return DecodeFloat(node_ptr(i) + NodeEntry::kConfidenceOffset);
  }
  int64_t created_ts(uint32_t i) const {
    return static_cast<int64_t>(DecodeFixed64(node_ptr(i) + NodeEntry::kTimestampOffset));
  }
  int64_t updated_ts(uint32_t i) const;
  // Content and meta live in the LZ4 content block. Its 4 MB blocks are
  // decompressed one at a time, each on the first access to a text inside it
  // (docs/FORMAT.md §6). If a block fails to decompress the texts in it read as ""
  // (and "{}" for meta) and ContentStatus() says why.
  std::string_view content(uint32_t i) const;
  std::string_view meta(uint32_t i) const;  // flat JSON object; "{}" when none
  // Checks the content frame's header and block table (cheap: no decompression)
  // and returns ContentStatus(): Corruption when the frame is malformed or a block
  // read so far failed. Idempotent. A frame that cannot be read block by block is
  // decompressed whole here, as before.
  Status EnsureContent() const;
  // Decompresses every block now (what a bulk reader that must not see "" for a
  // damaged block wants: merges, Verify(), benchmarks' warm-up); the first
  // failure, or OK. Does not check the frame's content checksum (Verify() does).
  // `stop` as for CheckRecords, read between blocks.
  Status DecodeAllContent(const std::atomic<bool>* stop = nullptr) const;
  // dimension() floats, or nullptr when node i has no vector. 64-byte aligned block.
  const float* vector(uint32_t i) const;
  // out[k] = vector(first + k) for k < count, with the lazy checks (FORMAT.md §9)
  // done once for the range rather than once a node: a scan of every vector reads
  // each node's offset and nothing more. REQUIRES: first + count <= node_count().
  void vectors(uint32_t first, uint32_t count, const float** out) const;
  // The built-in embedding of content(i) (common/tokenizer.h HashEmbed, before its
  // normalisation) from the embeddings block (docs/FORMAT.md §8.20): its nonzero
  // bucket counts as EmbeddingBlock entries, buckets in the order the tokens first
  // touch them. False when the file has no such block or this node's counts did
  // not fit it: then embed content(i). Open checks the block's offsets; entries'
  // buckets are checked only by Verify(), so a caller tests Bucket() < dimension().
  bool embedding(uint32_t i, std::span<const uint32_t>* entries) const;
  // out[k] = node first + k's entries as embedding() gives them, or nullopt where it
  // returns false, for k < count, with the offsets and the pages of the range checked
  // once (as vectors()). REQUIRES: first + count <= node_count().
  void embeddings(uint32_t first, uint32_t count, std::optional<std::span<const uint32_t>>* out) const;
  uint64_t id(uint32_t i) const;          // stable id XXH3(key); 0 without extensions
  std::string_view key(uint32_t i) const;  // "" without extensions
  std::string_view scope(uint32_t i) const;
  std::string_view run(uint32_t i) const { return session_run(session(i)); }
  std::string_view task(uint32_t i) const;
  // A stub: an edge endpoint that was never written (type entity, meta
  // {"stub":"true"}, empty content, confidence 0).
  bool is_stub(uint32_t i) const;

  // O(log n). nullopt when absent (or the file has no key/id blocks).
  std::optional<uint32_t> FindKey(std::string_view key) const;
  std::optional<uint32_t> FindId(uint64_t id) const;
  // A file's keys in order (not a layered view's): the position of the first key
  // not below `key` (node_count() when none, or without the key block, or when a
  // probe is damaged: ReadStatus()), O(log n); the node at position p, nullopt
  // past the end or when damaged. A prefix's keys are a run of positions.
  uint32_t KeyLowerBound(std::string_view key) const;
  std::optional<uint32_t> NodeAtKeyRank(uint32_t p) const;

  // ---- the memory server's entity search (block 0x07, snapshot/entity_search.h):
  // a file's, not a layered view's. Empty when !has_entity_search() ----
  bool has_entity_search() const;
  uint32_t search_entity_count() const;
  // Entity k (by name), nullopt when damaged (then in ReadStatus()): its node is
  // a live entity node and its observations' position is where their keys start.
  // nullopt too for k past search_entity_count() (no block: 0), which is no damage.
  std::optional<SearchEntity> search_entity(uint32_t k) const;
  // The entities holding `gram` (entity_search.h GramOf): count 0 when none do,
  // or when its directory entry is damaged (then in ReadStatus()). O(log grams).
  GramList search_gram(uint32_t gram) const;
  // The list's entity numbers, ascending; empty when damaged (ReadStatus()).
  std::vector<uint32_t> search_postings(const GramList& list) const;
  // Block 0x08's odd labels: the entities that fail LabelsInTexts (entity_search.h),
  // ascending. nullopt without the block (a file written before it: a reader scans
  // the entities instead), or when it is damaged (then in ReadStatus()). O(list).
  std::optional<std::vector<uint32_t>> search_odd_labels() const;

  // ---- edges. REQUIRES: j < edge_count() ----
  uint32_t edge_source(uint32_t j) const {
    if (Pending(kLazyOut | kUncheckedEdges)) [[unlikely]] return SlowEdge(j).source;
    return DecodeFixed32(edge_ptr(j) + EdgeEntry::kSourceOffset);
  }
  uint32_t edge_target(uint32_t j) const {
    if (Pending(kLazyOut | kUncheckedEdges)) [[unlikely]] return SlowEdge(j).target;
    return DecodeFixed32(edge_ptr(j) + EdgeEntry::kTargetOffset);
  }
  RelationId edge_rel(uint32_t j) const {
    if (Pending(kLazyOut | kUncheckedEdges)) [[unlikely]] return SlowEdge(j).rel;
    return static_cast<RelationId>(edge_ptr(j)[EdgeEntry::kRelOffset]);
  }
  float edge_weight(uint32_t j) const {
    if (Pending(kLazyOut | kUncheckedEdges)) [[unlikely]] return SlowEdge(j).weight;
    return DecodeFloat(edge_ptr(j) + EdgeEntry::kWeightOffset);
  }
  Edge edge(uint32_t j) const {
    return {edge_source(j), edge_target(j), edge_rel(j), edge_weight(j)};
  }
  std::string_view edge_payload(uint32_t j) const;  // JSON; "{}" without extensions
  int64_t edge_created_ts(uint32_t j) const;        // 0 without extensions
  int64_t edge_updated_ts(uint32_t j) const;
  std::string_view edge_run(uint32_t j) const;
  std::string_view edge_task(uint32_t j) const;

  // Out-edges of node i are the edge numbers [out_begin(i), out_end(i)), sorted by
  // (rel, target). REQUIRES: i < node_count().
  uint32_t out_begin(uint32_t i) const {
    if (Pending(kLazyOut | kUncheckedOut)) [[unlikely]] return SlowList(ListPart::kOutBegin, i);
    return DecodeFixed32(out_off_ + 4 * i);
  }
  uint32_t out_end(uint32_t i) const {
    if (Pending(kLazyOut | kUncheckedOut)) [[unlikely]] return SlowList(ListPart::kOutEnd, i);
    return DecodeFixed32(out_off_ + 4 * (i + 1));
  }
  uint32_t out_degree(uint32_t i) const { return out_end(i) - out_begin(i); }
  // In-edges of node i are in_edge(k) for k in [in_begin(i), in_end(i)), sorted by
  // (rel, source). in_source(k) = edge_source(in_edge(k)).
  uint32_t in_begin(uint32_t i) const {
    if (Pending(kLazyIn | kUncheckedIn)) [[unlikely]] return SlowList(ListPart::kInBegin, i);
    return DecodeFixed32(in_off_ + 4 * i);
  }
  uint32_t in_end(uint32_t i) const {
    if (Pending(kLazyIn | kUncheckedIn)) [[unlikely]] return SlowList(ListPart::kInEnd, i);
    return DecodeFixed32(in_off_ + 4 * (i + 1));
  }
  uint32_t in_degree(uint32_t i) const { return in_end(i) - in_begin(i); }
  uint32_t in_edge(uint32_t k) const {
    if (Pending(kLazyIn | kUncheckedIn)) [[unlikely]] return SlowList(ListPart::kInEdge, k);
    return DecodeFixed32(in_list_ + 4 * k);
  }
  uint32_t in_source(uint32_t k) const { return edge_source(in_edge(k)); }
  // The sub-ranges with one relation, O(log degree): out-edge numbers [first, second)
  // and in-list positions [first, second).
  std::pair<uint32_t, uint32_t> OutEdgesWithRel(uint32_t i, RelationId rel) const;
  std::pair<uint32_t, uint32_t> InEdgesWithRel(uint32_t i, RelationId rel) const;
  // The edge (source, rel, target), O(log out_degree).
  std::optional<uint32_t> FindEdge(uint32_t source, RelationId rel, uint32_t target) const;

  // ---- names ----
  // Built-in name, custom name from the file, or "" when undefined.
  std::string_view relation_name(RelationId rel) const;
  std::optional<RelationId> FindRelation(std::string_view name) const;
  // Every relation defined in the file (built-ins included), by id.
  std::vector<RelationId> relations() const;
  std::string_view type_name(uint8_t type) const;  // "" when unknown

  // ---- term index (BM25 fast path). Empty when !has_term_index() ----
  uint32_t term_count() const { return term_count_; }
  std::string_view term(uint32_t t) const;  // REQUIRES: t < term_count()
  std::optional<uint32_t> FindTerm(std::string_view term) const;  // O(log T)
  // Whether some term starts with `prefix` (every term does with ""), O(log T); on
  // a layered view, a term of any of its files. A damaged directory answers false
  // and is in ReadStatus().
  bool HasTermStartingWith(std::string_view prefix) const;
  // Whether some term ends with `suffix`: O(T), every term read (and checked) in
  // turn until one does; damage as for HasTermStartingWith.
  bool HasTermEndingWith(std::string_view suffix) const;
  // A term's postings are validated on its first use (not at open: they are the
  // biggest block); a damaged list reads as empty and Verify() reports it.
  PostingList postings(uint32_t t) const;                      // all fields
  PostingList postings(uint32_t t, Field field) const;
  // The same postings of one field read one at a time, without a copy of the list
  // on a base + delta view (see PostingCursor). REQUIRES: t < term_count().
  PostingCursor postings_cursor(uint32_t t, Field field = Field::kContent) const;
  // Number of nodes whose content contains term t (BM25 df).
  uint32_t doc_frequency(uint32_t t) const;
  // Content token count of node i (0 when !has_doc_lengths()).
  // The block is summed and its pages checked on the first call of either (not at
  // open: 4 MB at 1M nodes); a damaged page reads as 0 and is in ReadStatus().
  uint32_t doc_length(uint32_t i) const {
    if (layer_) [[unlikely]] return LayeredDocLength(i);
    if (!doc_lengths_ready_.load(std::memory_order_acquire)) [[unlikely]] return SlowDocLength(i);
    return doc_lengths_ ? DecodeFixed32(doc_lengths_ + 4 * i) : 0;
  }
  uint32_t document_count() const { return node_count_; }
  double average_doc_length() const {
    if (!doc_lengths_ready_.load(std::memory_order_acquire)) [[unlikely]] LoadDocLengths();
    return avg_doc_length_;
  }

  // ---- type, session and time indexes (always available) ----
  // Dense numbers of the nodes of a type, ascending.
  std::vector<uint32_t> NodesOfType(uint8_t type) const;
  uint32_t type_count(uint8_t type) const;
  // REQUIRES: s < session_count().
  SessionRange session_range(uint32_t s) const;
  std::string_view session_run(uint32_t s) const;
  std::optional<uint32_t> FindSession(std::string_view run) const;
  // The first session whose run is not below `run` (session_count() when none):
  // O(log sessions). nullopt when the runs it compared are out of order (damaged;
  // ContentStatus() says so). REQUIRES: a file with run names (extensions), or a
  // layered view.
  std::optional<uint32_t> SessionLowerBound(std::string_view run) const;
  // Whether the run names are known to ascend: checked whole once when they are
  // 65,536 or fewer (a few hundred µs at most), known after CheckIndexes() when
  // more. The binary searches over them then read one name a probe. False for a
  // layered view, a seed-spec file (runs parsed, not searched), and when damaged.
  bool RunsSorted() const;
  // Whether the term names are known to ascend: once Warm() or CheckIndexes() has
  // read them all in order. The term searches then read one name a probe. False
  // before, for a layered view, and when damaged.
  bool TermsSorted() const;
  // Nodes sorted by (created_ts, node).
  uint32_t time_entry_count() const { return time_count_; }
  TimeEntry time_entry(uint32_t k) const {
    if (Pending(kLazyTime | kUncheckedTime)) [[unlikely]] return SlowTimeEntry(k);
    const char* p = time_ + k * kTimeEntryLength;
    return {static_cast<int64_t>(DecodeFixed64(p)), DecodeFixed32(p + 8)};
  }
  // First k with time_entry(k).ts >= ts.
  uint32_t TimeLowerBound(int64_t ts) const;

  // ---- cluster map (may be empty) ----
  uint32_t cluster_count() const { return cluster_count_; }
  const float* centroid(uint32_t c) const;  // REQUIRES: c < cluster_count()

  // ---- policy memory (kv), sorted by (scope, ns, key) ----
  uint32_t kv_count() const { return kv_count_; }
  KvEntry kv(uint32_t k) const;  // REQUIRES: k < kv_count()
  std::optional<uint32_t> FindKv(std::string_view scope, std::string_view ns,
                                 std::string_view key) const;

 private:
  struct Rep;
  struct Layer;  // snapshot/internal/layered.h
  Reader();
  const char* node_ptr(uint32_t i) const {
    if (layer_) [[unlikely]] return LayeredNodePtr(i);
    if (Pending(kUncheckedNodes)) [[unlikely]] return CheckedNodePtr(i);
    return base_ + Header::kEncodedLength + static_cast<size_t>(i) * NodeEntry::kEncodedLength;
  }
  const char* LayeredNodePtr(uint32_t i) const;
  uint32_t LayeredSession(uint32_t i) const;
  // A file's first term not below `t` (term_count() when none), each probe of
  // the directory checked; nullopt when damaged (in ReadStatus()).
  std::optional<uint32_t> TermLowerBound(std::string_view t) const;
  // A layered view names runs and relations (as a file with extensions does).
  void UseLayerNames();
  // A layered view builds its edge tables on the first edge access and its time
  // index on the first time access (snapshot/internal/layered.h); a file has none pending.
  // Until then each edge access is answered from the merged sequences in O(log
  // changes); after enough of them (a bulk query) the tables are built.
  static constexpr uint8_t kLazyOut = 1, kLazyTime = 2, kLazyIn = 4;
  // A file read lazily (Open without check_records) has these set until every
  // chunk of that structure has been checked (docs/FORMAT.md §9).
  static constexpr uint8_t kUncheckedNodes = 8, kUncheckedEdges = 16, kUncheckedOut = 32,
                           kUncheckedIn = 64, kUncheckedTime = 128;
  static constexpr uint8_t kUncheckedAll =
      kUncheckedNodes | kUncheckedEdges | kUncheckedOut | kUncheckedIn | kUncheckedTime;
  bool Pending(uint8_t part) const {
    return (lazy_pending_.load(std::memory_order_acquire) & part) != 0;
  }
  enum class ListPart : uint8_t { kOutBegin, kOutEnd, kInBegin, kInEnd, kInEdge };
  Edge LayeredEdge(uint32_t j) const;
  uint32_t LayeredList(ListPart part, uint32_t x) const;
  // The slow paths of the inline accessors: a layered view's, or a lazily read
  // file's (the chunk checked first; a blank answer when it is damaged).
  Edge SlowEdge(uint32_t j) const;
  uint32_t SlowList(ListPart part, uint32_t x) const;
  TimeEntry SlowTimeEntry(uint32_t k) const;
  const char* CheckedNodePtr(uint32_t i) const;
  void EnsureTime() const {
    if (Pending(kLazyTime)) [[unlikely]] BuildLazy(kLazyTime);
  }
  void BuildLazy(uint8_t what) const;
  uint32_t LayeredDocLength(uint32_t i) const;
  const char* edge_ptr(uint32_t j) const {
    return edges_ + static_cast<size_t>(j) * EdgeEntry::kEncodedLength;
  }
  // [offset, offset + length) of the decompressed content block, its blocks
  // decoded as needed; nullptr when that failed.
  const char* ContentBytes(uint64_t offset, uint32_t length) const;

  // Hot fields kept out of Rep so inline accessors need one load.
  const char* base_ = nullptr;
  uint64_t size_ = 0;
  const char* edges_ = nullptr;
  const char* out_off_ = nullptr;  // mapped or rebuilt, same encoding
  const char* in_off_ = nullptr;
  const char* in_list_ = nullptr;
  const char* doc_lengths_ = nullptr;
  const char* time_ = nullptr;
  uint16_t version_ = 0, flags_ = 0;
  uint32_t features_ = 0;
  uint32_t node_count_ = 0, edge_count_ = 0, dimension_ = 0, session_count_ = 0;
  uint32_t term_count_ = 0, time_count_ = 0, cluster_count_ = 0, kv_count_ = 0;
  uint32_t stub_count_ = 0;
  uint64_t content_length_ = 0, content_uncompressed_ = 0;
  int64_t newest_ts_ = 0;
  mutable double avg_doc_length_ = 0;  // LoadDocLengths
  mutable uint64_t doc_length_sum_ = 0;
  // Set once the doc lengths are summed and their pages good (layered views: at
  // open, from their base's sum).
  mutable std::atomic<bool> doc_lengths_ready_{false};
  // Sums the doc lengths and checks their pages, once; true when they are good.
  bool LoadDocLengths() const;
  uint32_t SlowDocLength(uint32_t i) const;
  std::vector<BlockInfo> blocks_;
  std::unique_ptr<Rep> rep_;
  const Layer* layer_ = nullptr;  // set for a base + delta view
  mutable std::atomic<uint8_t> lazy_pending_{0};
  std::shared_ptr<const Layer> layer_holder_;
  friend class PostingCursor;
};

// A term's postings of one field in ascending node order, read one at a time
// (Reader::postings_cursor): what a query that walks a common term's list reads.
// On a file it walks the list in place. On a base + delta view it walks the base's
// list (through the base's own cursor when the base is a view too: a level of a
// stack), skips the nodes the delta removed or replaced and renumbers the rest on
// the fly (MergedSequence::BaseWalker), and merges the delta's postings in: a walk
// costs O(postings + changes) with no copy of the list (a run of the base's
// postings, or of a delta's new documents, is read as a file's is), where Reader::postings
// builds (and keeps) the renumbered list, once per view and term. Each posting
// carries its document's content length, read from the file that holds the node
// (no lookup through the merged numbering). size() is the list's length, known
// before the walk (a file: the directory's; a view: its base's, less the postings
// of removed nodes counted by seeks, plus the delta's). Damaged postings read as
// an empty list and are in the Reader's ReadStatus(), as Reader::postings.
// The Reader must outlive the cursor. Not thread-safe; each thread its own cursor.
class PostingCursor {
 public:
  PostingCursor();
  ~PostingCursor();
  PostingCursor(PostingCursor&&) noexcept;
  PostingCursor& operator=(PostingCursor&&) noexcept;

  bool done() const { return done_; }
  uint32_t size() const { return size_; }
  // The current posting. REQUIRES: !done().
  uint32_t node() const { return node_; }
  uint32_t tf() const { return tf_; }
  uint32_t doc_length() const { return file_->doc_length(local_); }

  // Inline while the next posting is the next of list_ with the same offset: on a
  // file always; on a view while it is the base's, in a stretch that no change of
  // any level interrupts, or one level's delta's, in a run of nodes that level
  // inserted with no kept base node between them which no level above
  // interrupts (as a session's new documents are,
  // MergedSequence::DeltaRunEnd): the window, nodes below limit_, renumbered by
  // off_.
  void Next() {
    if (++pos_ < list_.size()) {
      const uint32_t b = list_.node(pos_);
      if (b < limit_) [[likely]] {
        node_ = b + off_;
        local_ = b;
        tf_ = list_.tf(pos_);
        return;
      }
    }
    if (stack_) return StackNext();
    done_ = true;
  }
  // Calls f(node, tf, file, local) for each posting from the current one on while
  // its node is below `end`, and stops on the first at or past it (or done). The
  // same postings as node()/tf()/Next() would give, without a store to the cursor
  // per posting while they are the next of list_ in the window. `file` holds the
  // document as its node `local`: file->doc_length(local) is doc_length(), read
  // from that file's own array (the view's doc_length(node) looks it up through
  // the merged numbering).
  template <typename F>
  void ForEachBelow(uint32_t end, F&& f) {
    while (!done_ && node_ < end) {
      f(node_, tf_, file_, local_);
      uint32_t pos = pos_ + 1;
      const uint32_t size = list_.size(), limit = limit_, off = off_;
      while (pos < size) {
        const uint32_t b = list_.node(pos);
        if (b >= limit || b + off >= end) break;
        f(b + off, list_.tf(pos), file_, b);
        ++pos;
      }
      pos_ = pos - 1;
      Next();
    }
  }
  // Moves to the first posting whose node is `node` or later (done when none);
  // never backwards. O(log postings) on a file; on a view O(log) per level plus
  // the postings and changes stepped over.
  void Seek(uint32_t node) {
    if (done_ || node_ >= node) return;
    if (stack_) [[unlikely]] return StackSeek(node);
    pos_ = LowerBound(list_, pos_ + 1, node);
    Load();
  }

 private:
  friend class Reader;
  friend struct Reader::Layer;  // builds a view's cursor
  struct Stack;  // a view's levels (snapshot/internal/layered.cc)
  // First k in [from, list.size()) with list.node(k) >= node.
  static uint32_t LowerBound(const PostingList& list, uint32_t from, uint32_t node) {
    uint32_t lo = from, hi = list.size();
    while (lo < hi) {
      const uint32_t mid = lo + (hi - lo) / 2;
      if (list.node(mid) < node) lo = mid + 1; else hi = mid;
    }
    return lo;
  }
  void Load() {
    done_ = pos_ >= list_.size();
    if (!done_) {
      node_ = local_ = list_.node(pos_);
      tf_ = list_.tf(pos_);
    }
  }
  // A view's steps outside the window; Sync() copies the view's head here and
  // sets the next window.
  void StackNext();
  void StackSeek(uint32_t node);
  void Sync();

  // A file's list; a view's list of the window: its bottom list (the base under
  // all levels) or one level's delta list.
  PostingList list_;
  uint32_t pos_ = 0;
  uint32_t limit_ = UINT32_MAX, off_ = 0;  // the window (a view: limit_ 0 when none)
  const Reader* file_ = nullptr;  // the file holding node(): the Reader, a base, a delta
  uint32_t node_ = 0, tf_ = 0, local_ = 0, size_ = 0;
  bool done_ = true;
  std::unique_ptr<Stack> stack_;
};

}  // namespace amem::snapshot

#endif  // AMEM_SNAPSHOT_READER_H_
