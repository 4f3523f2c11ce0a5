#include "snapshot/reader.h"


#include <fcntl.h>
#include <lz4.h>
#include <lz4frame.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <atomic>
#include <cstdlib>
#include <new>
#include <mutex>
#include <tuple>
#include <utility>

#include "common/free_vector.h"
#include "common/hash.h"
#include "common/huge_pages.h"
#include "snapshot/internal/layered.h"
#include "snapshot/internal/string_list.h"

namespace amem::snapshot {

static_assert(std::endian::native == std::endian::little,
              "vector() hands out mapped little-endian floats");

namespace {

Status Corrupt(std::string_view section, std::string_view what) {
  return Status::Corruption(std::string(section) + ": " + std::string(what));
}

// Whether a long check was asked to stop (CheckRecords, Warm), and what it says then.
bool Stopped(const std::atomic<bool>* stop) {
  return stop != nullptr && stop->load(std::memory_order_relaxed);
}
Status StoppedStatus() { return Status::Aborted("the check was stopped before its end"); }

// The largest expansion LZ4 can achieve is about 255:1; a header promising more
// than that is lying, and we must not allocate for it.
constexpr uint64_t kMaxLz4Ratio = 255;

// Index of a block tag among the ones this reader understands, for presence bits.
bool IsExtensionTag(uint32_t tag) {
  return tag >= static_cast<uint32_t>(BlockTag::kInfo) &&
         tag <= static_cast<uint32_t>(BlockTag::kInIndex);
}

// Every entry of a u32 array is below `limit`.
bool AllBelow(const char* list, uint64_t count, uint64_t limit) {
  for (uint64_t i = 0; i < count; ++i) {
    if (DecodeFixed32(list + 4 * i) >= limit) return false;
  }
  return true;
}

// offsets: (n+1) x u32, non-decreasing from 0 to `end`.
bool OffsetsSpan(const char* offsets, uint64_t n, uint64_t end) {
  uint32_t prev = 0;
  for (uint64_t i = 0; i <= n; ++i) {
    const uint32_t off = DecodeFixed32(offsets + 4 * i);
    if (off < prev || (i == 0 && off != 0) || (i == n && off != end)) return false;
    prev = off;
  }
  return true;
}

// One index block as ParseBlocks walks it.
struct BlockBody {
  uint32_t tag = 0;
  uint32_t len = 0;  // body bytes
  uint64_t pos = 0;  // of the block's header
  const char* body = nullptr;
  std::string name;  // BlockName(tag), for errors
  bool Has(uint64_t count) const { return count <= len; }
  std::string_view bytes() const { return std::string_view(body, len); }
};

// What the blocks tell ParseBlocks for the checks across blocks after the walk.
struct ParsedBlocks {
  uint32_t present_ext = 0;  // bit (tag - kInfo) per extension block seen
  bool have_term = false, have_doclen = false;
  uint32_t info_sessions = 0, info_kv = 0;
  const char* session_block = nullptr;
  uint32_t session_entries = 0;
  const char* time_block = nullptr;
  const char* out_block = nullptr;
  const char* in_block = nullptr;
  uint32_t kv_count = 0;
};

}  // namespace

struct Reader::Rep {
  // Backing bytes: an mmap, or an owned copy (OpenBuffer).
  void* map = nullptr;
  size_t map_len = 0;
  std::unique_ptr<char[]> owned;

  Header header;
  uint64_t index_end = 0;
  uint64_t checksum_block = kNone;  // offset of the checksum block header

  // CheckIndexes(), computed at most once.
  mutable std::once_flag index_once;
  mutable Status index_status;
  Status CheckIndexBlocks(const Reader* r) const;

  // Content (docs/FORMAT.md §6). Uncompressed: `content` is the mapped block.
  // Compressed: on first use the frame's block headers are walked into `cblocks`
  // (no decompression) and `decoded` is allocated untouched; each block is then
  // decompressed into decoded + b * block_max on its first use, exactly once. A
  // frame the walk does not take (linked blocks, a dictionary, a block that does
  // not decode to its place) is decompressed whole into `whole` instead.
  struct ContentBlock {
    uint64_t src = 0;   // of the block's data, within the frame
    uint32_t size = 0;  // stored bytes
    bool raw = false;   // stored uncompressed
  };
  enum : uint8_t { kBlockPending = 0, kBlockDone = 1, kBlockBad = 2 };
  mutable std::atomic<bool> content_tried{false};
  mutable std::once_flag content_once;
  mutable bool walked = false;  // the block table is usable
  mutable std::vector<ContentBlock> cblocks;
  mutable uint64_t block_max = 0;
  mutable bool block_checksums = false, content_checksum = false;
  mutable uint32_t stored_checksum = 0;  // the frame's content checksum
  mutable std::unique_ptr<char[]> decoded;
  mutable std::unique_ptr<std::atomic<uint8_t>[]> block_state;
  mutable std::unique_ptr<std::mutex[]> block_mu;
  mutable std::mutex status_mu;
  mutable std::atomic<bool> block_failed{false};
  mutable Status block_status;  // the first failure found on a read (ReadStatus())
  mutable std::atomic<bool> use_whole{false};
  mutable std::once_flag whole_once;
  mutable Status whole_status;
  mutable std::unique_ptr<char[]> whole;
  mutable std::string_view content;  // uncompressed: the mapped block

  // Walks the block table (or decodes a frame it cannot walk whole), once.
  void Prepare(const Reader* r) const;
  bool WalkBlocks(const Reader* r) const;
  Status DecodeWhole(const Reader* r) const;
  void EnsureWhole(const Reader* r) const;
  // Decodes block b (once): false when it failed; *irregular when it decoded to a
  // size other than its place in the buffer (then the frame is read whole).
  bool DecodeBlock(const Reader* r, size_t b, bool* irregular) const;
  void Fail(Status s) const;
  // The u32 at file offset `at`: read with pread from a mapped file, so that the
  // walk over the content frame's block headers (one word every ~30 KB) does not
  // fault the whole frame into this process (the kernel maps ~64 KB per fault).
  uint32_t ReadWord(const Reader* r, uint64_t at) const;

  const float* vectors = nullptr;

  // Lazy checks (docs/FORMAT.md §9). `lazy` is fixed at open: true for a file with
  // amem's extension, session and time blocks opened without check_records. Each
  // part's chunks are checked on first use: 64 node records (one 4 KiB page), 16
  // edge records, the out range and the in-list of one node (its edges
  // are read at random), 1024 time entries. A walk reads records at random, so a
  // chunk is what one read costs to check: 4096-record chunks made a walk of a few
  // thousand nodes check (and fault in) nearly every record of the file.
  enum Part : uint8_t { kNodes, kEdges, kOut, kIn, kTime, kParts };
  static constexpr uint8_t kChunkShift[kParts] = {6, 4, 0, 0, 10};
  enum : uint8_t { kChunkUnchecked = 0, kChunkGood = 1, kChunkBad = 2 };
  bool lazy = false;
  // One byte a chunk, read and written atomically (State). From calloc: a large
  // table is fresh zero pages, so a process pays only for the pages of the chunks
  // it checks, not 2 MB of zeroing at open of a 1M-node file.
  struct FreeBytes {
    void operator()(uint8_t* p) const { std::free(p); }
  };
  std::unique_ptr<uint8_t[], FreeBytes> chunk_state[kParts];
  std::atomic_ref<uint8_t> State(Part part, uint32_t c) const {
    return std::atomic_ref<uint8_t>(chunk_state[part][c]);
  }
  mutable std::atomic<uint32_t> chunks_left[kParts] = {};

  // Page checksums (block 0x1E, docs/FORMAT.md §8.22): each 4 KiB page of the
  // bytes before the block is hashed on its first read and compared with the
  // table; its verdict is cached in a byte like a chunk's. The chunks above check
  // their pages when they are checked, so once good they cost nothing more; the
  // other reads (attributes, ids, strings, terms, postings, embeddings, vectors)
  // ask Pages(), one load once every page is good. Open checks the pages of what
  // it reads (open_reads); pages wholly inside a compressed content frame are
  // never read through the mapping (its blocks carry their own checksums) and
  // count as good: the range [skip_first, skip_last), tested in PageGood, so
  // that open writes nothing per page and costs the same at any file size.
  const char* file = nullptr;  // the file's first byte (Reader::base_)
  const char* page_hashes = nullptr;
  uint64_t paged = 0;  // bytes [0, paged) have pages: the block's own offset
  uint32_t page_count = 0;
  uint32_t skip_first = 0, skip_last = 0;
  std::unique_ptr<uint8_t[], FreeBytes> page_state;
  bool PageGood(uint64_t k) const {
    return (k >= skip_first && k < skip_last) ||
           std::atomic_ref<uint8_t>(page_state[k]).load(std::memory_order_acquire) == kChunkGood;
  }
  mutable std::atomic<uint32_t> pages_left{0};
  mutable std::atomic<bool> pages_pending{false};
  std::vector<std::pair<uint64_t, uint64_t>> open_reads;  // (offset, length)
  // False, the failure recorded, when a page of [p, p + len) is damaged; bytes
  // outside the pages (memory the reader built, the last two blocks) pass.
  bool Pages(const void* p, uint64_t len) const {
    return !pages_pending.load(std::memory_order_acquire) || CheckPages(p, len);
  }
  bool CheckPages(const void* p, uint64_t len) const;
  bool PageSpan(const void* p, uint64_t len, uint64_t* first, uint64_t* last) const;
  Status PagesStatus(const void* p, uint64_t len) const;
  Status PageStatus(uint32_t k) const;
  Status CheckAllPages(const std::atomic<bool>* stop = nullptr) const;
  // Open reads [p, p + len): its pages are checked once the table is found.
  void OpenRead(const Reader* r, const void* p, uint64_t len) {
    open_reads.emplace_back(static_cast<uint64_t>(static_cast<const char*>(p) - r->base_), len);
  }
  void OpenReadList(const Reader* r, const StringListView& list) {  // count and end offset
    const std::string_view all = list.whole();
    if (all.empty()) return;
    OpenRead(r, all.data(), 4);
    OpenRead(r, list.offsets_of(list.size()), 4);
  }
  static Status StartPages(Reader* r);
  // The O(n + m) checks of block contents that a lazy open defers (CheckDeferred).
  mutable std::once_flag deferred_once;
  mutable std::once_flag doc_lengths_once;  // Reader::LoadDocLengths
  mutable Status deferred_status;
  // The sorted orders that binary searches probe. Until one is known good, each
  // probe also reads its neighbours (Ordered); after, it reads one value. Known
  // good: every order once CheckIndexes() passes; the terms once Warm() has read
  // them all in order; the run names once RunsSorted() has, when they are few.
  enum Order : uint8_t { kKeyOrder, kIdOrder, kTermOrder, kRunOrder, kKvOrder, kGramOrder, kOrders };
  static constexpr std::array<std::string_view, kOrders> kOrderNames = {
      "node keys", "node ids", "term index", "runs", "kv", "entity search"};
  mutable std::array<std::atomic<bool>, kOrders> sorted{};
  bool Sorted(Order o) const { return sorted[o].load(std::memory_order_acquire); }
  void MarkSorted(Order o) const { sorted[o].store(true, std::memory_order_release); }
  mutable std::once_flag type_once;
  mutable std::once_flag defined_once;  // CheckEdgeRange: which relation ids have names
  mutable std::array<bool, kMaxRelationId + 1> defined_relations{};
  mutable Status type_status;
  const char* cluster_assign = nullptr;
  uint32_t term_postings = 0, term_name_bytes = 0;

  // True when the chunk of `part` holding entry x is good (checked now if it was
  // not yet); false, with the failure recorded, when it is damaged.
  bool Chunk(const Reader* r, Part part, uint32_t x) const {
    const uint32_t c = x >> kChunkShift[part];
    const uint8_t state = State(part, c).load(std::memory_order_acquire);
    if (state != kChunkUnchecked) return state == kChunkGood;
    return CheckChunk(r, part, c);
  }
  bool CheckChunk(const Reader* r, Part part, uint32_t c) const;
  Status ChunkPages(const Reader* r, Part part, uint32_t begin, uint32_t end) const;
  // Checks entries [begin, end) of `part` (CheckNodeRange, ...).
  Status CheckPartRange(const Reader* r, Part part, uint32_t begin, uint32_t end) const;
  // Checks all of `part` in one pass and, when it is sound, marks every chunk good
  // (what a bulk reader wants: no per-chunk bookkeeping). False when some chunk is
  // damaged: the caller then finds which chunk by chunk.
  bool CheckWholePart(const Reader* r, Part part) const;
  Status CheckNodeRange(const Reader* r, uint32_t begin, uint32_t end) const;
  Status CheckEdgeRange(const Reader* r, uint32_t begin, uint32_t end) const;
  Status CheckOutRange(const Reader* r, uint32_t begin, uint32_t end) const;
  Status CheckInRange(const Reader* r, uint32_t begin, uint32_t end) const;
  Status CheckTimeRange(const Reader* r, uint32_t begin, uint32_t end) const;
  Status CheckDeferred(const Reader* r) const;
  Status CheckTypeIndex(const Reader* r) const;
  // Node i's attributes and edge j's (zeros when their page is damaged).
  const char* NodeAttrs(uint32_t i) const;
  const char* EdgeAttrs(uint32_t j) const;
  // Entry t of the term directory fits the names and postings.
  bool TermEntryOk(uint32_t t) const;
  // String k of `list`, or "" with the failure recorded when it is damaged.
  std::string_view Str(const StringListView& list, uint32_t k, std::string_view what) const;
  // Whether the value at position p of order `o` lies strictly between its
  // neighbours' (get(q) yields std::optional values; nullopt is damage). True at
  // once when `o` is known good (Sorted); a failure is recorded.
  template <typename Get>
  bool Ordered(Order o, uint32_t p, uint32_t count, Get get) const;

  // Blocks (nullptr / empty when absent).
  const char* type_bits = nullptr;
  uint32_t type_slots = 0;
  const char* sessions = nullptr;  // session index entries (mapped or rebuilt)
  const char* term_entries = nullptr;
  const char* postings = nullptr;
  const char* term_names = nullptr;
  const char* centroids = nullptr;
  const char* ids = nullptr;
  const char* by_id = nullptr;
  const char* by_key = nullptr;
  StringListView keys, relation_names, type_names, runs, labels, payloads, kv_strings;
  const char* node_attrs = nullptr;
  const char* edge_attrs = nullptr;
  const char* kv_fixed = nullptr;
  // Embeddings block 0x1D: offsets (n+1 u32), entries, overflow nodes (ascending).
  const char* embed_offsets = nullptr;
  const uint32_t* embed_entries = nullptr;
  const char* embed_overflow = nullptr;
  uint32_t embed_entry_count = 0, embed_overflow_count = 0;
  // EntitySearch block 0x07: the entity array, the gram directory (count + 1
  // entries), the list bytes.
  const char* search_entities = nullptr;
  const char* search_grams = nullptr;
  const char* search_lists = nullptr;
  uint32_t search_entity_count = 0, search_gram_count = 0;
  uint64_t search_list_bytes = 0;
  // RunsSorted's one check of the run names' order (block 0x15).
  mutable std::once_flag runs_order_once;
  // EntityLabels block 0x08: the odd labels' list (count numbers in `bytes`).
  const char* label_list = nullptr;
  uint32_t label_count = 0, label_bytes = 0;
  bool has_ext = false;
  // Set while the index section's blocks are parsed: a failure there in a file
  // without feature flags makes Finish() retry with the section ignored.
  bool in_index_section = false;
  bool index_ignored = false;
  // Per term: 0 unchecked, 1 postings valid, 2 postings corrupt (read as empty).
  std::unique_ptr<std::atomic<uint8_t>[]> term_state;
  bool CheckTerm(uint32_t t, uint32_t node_count) const;

  // In-memory replacements for blocks a seed-spec file lacks (same encodings).
  std::string built_out, built_in, built_time, built_sessions;
  std::vector<std::string> spec_runs;
  std::vector<std::string> spec_relations;  // "rel<id>" for ids a seed file leaves unnamed
  std::vector<bool> rel_used = std::vector<bool>(kRelationSlots);

  int fd = -1;  // of a mapped file, kept for ReadWord

  ~Rep() {
    if (map) ::munmap(map, map_len);
    if (fd >= 0) ::close(fd);
  }

  static Result<std::unique_ptr<Reader>> Finish(std::unique_ptr<Reader> r,
                                                const ReadOptions& options);
  static Status Load(Reader* r, const ReadOptions& options, bool ignore_index);
  static Status ParseBlocks(Reader* r, bool ignore_index);
  // ParseBlocks' steps: the walk over the index section, one function per block
  // family, then the checks across blocks.
  static Status ParseIndexSection(Reader* r, ParsedBlocks* p);
  static Status ParseBlock(Reader* r, const BlockBody& b, ParsedBlocks* p);
  static Status ParseSeedBlock(Reader* r, const BlockBody& b, ParsedBlocks* p);
  static Status ParseTermIndex(Reader* r, const BlockBody& b);
  static Status ParseDocLengths(Reader* r, const BlockBody& b);
  static Status ParseNodeBlock(Reader* r, const BlockBody& b, ParsedBlocks* p);
  static Status ParseNameBlock(Reader* r, const BlockBody& b);
  static Status ParseEdgeBlock(Reader* r, const BlockBody& b, ParsedBlocks* p);
  static Status ParseEmbeddings(Reader* r, const BlockBody& b);
  static Status ParseEntitySearch(Reader* r, const BlockBody& b);
  static Status ParseEntityLabels(Reader* r, const BlockBody& b);
  Status CheckEntitySearch(const Reader* r) const;
  Status CheckEntityLabels(const Reader* r) const;
  static Status CheckFeatures(Reader* r, const ParsedBlocks& p);
  static Status AttachSeedIndexes(Reader* r, const ParsedBlocks& p);
  static Status CheckNodes(Reader* r);
  static Status CheckEdges(Reader* r);
  static Status StartLazy(Reader* r);
};

Reader::Reader() : rep_(std::make_unique<Rep>()) {}

void Reader::UseLayerNames() { rep_->has_ext = true; }
Reader::~Reader() = default;

Result<int> OpenSnapshotFile(const std::string& path, uint64_t* size) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return Status::IOError("open " + path + ": " + std::strerror(errno));
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    Status s = Status::IOError("stat " + path + ": " + std::strerror(errno));
    ::close(fd);
    return s;
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::InvalidArgument(path + ": " +
                                   (S_ISDIR(st.st_mode) ? "a directory" : "not a regular file") +
                                   ", not a snapshot file");
  }
  *size = static_cast<uint64_t>(st.st_size);
  return fd;
}

Result<std::unique_ptr<Reader>> Reader::Open(const std::string& path, const ReadOptions& options) {
  uint64_t size = 0;
  AMEM_ASSIGN_OR_RETURN(fd, OpenSnapshotFile(path, &size));
  std::unique_ptr<Reader> r(new Reader());
  if (size < Header::kEncodedLength) {
    ::close(fd);
    return Status::Corruption("header: file shorter than 64 bytes: " + path);
  }
  int flags = MAP_PRIVATE | (options.populate ? MAP_POPULATE : 0);
  void* map = ::mmap(nullptr, size, PROT_READ, flags, fd, 0);
  if (map == MAP_FAILED) {
    ::close(fd);
    return Status::IOError("mmap " + path + ": " + std::strerror(errno));
  }
  r->rep_->fd = fd;
  r->rep_->map = map;
  r->rep_->map_len = size;
  r->base_ = static_cast<const char*>(map);
  r->size_ = size;
  auto done = Rep::Finish(std::move(r), options);
  if (!done.ok()) return done.status().WithContext(path);
  return done;
}

Result<std::unique_ptr<Reader>> Reader::OpenBuffer(std::string_view data,
                                                   const ReadOptions& options) {
  std::unique_ptr<Reader> r(new Reader());
  // new[] is at least 16-byte aligned, so mapped floats stay aligned.
  r->rep_->owned.reset(new char[std::max<size_t>(data.size(), 1)]);
  if (!data.empty()) std::memcpy(r->rep_->owned.get(), data.data(), data.size());
  r->base_ = r->rep_->owned.get();
  r->size_ = data.size();
  return Rep::Finish(std::move(r), options);
}

// A seed-spec (v0.1) index section has no length after each tag, so it does not
// parse as our blocks. A file without feature flags whose index section fails to
// parse is read again with the section ignored; the reader rebuilds what it needs
// from the records, as for a file without indexes (FORMAT.md §10). Files with
// feature flags were written by amem: their index section must parse.
Result<std::unique_ptr<Reader>> Reader::Rep::Finish(std::unique_ptr<Reader> r,
                                                    const ReadOptions& options) {
  Status s = Load(r.get(), options, /*ignore_index=*/false);
  if (s.ok()) return r;
  if (!s.IsCorruption() || !r->rep_->in_index_section || r->features_ != 0) return s;
  std::unique_ptr<Reader> fresh(new Reader());
  Rep& from = *r->rep_;
  Rep& to = *fresh->rep_;
  to.map = std::exchange(from.map, nullptr);
  to.fd = std::exchange(from.fd, -1);
  to.map_len = from.map_len;
  to.owned = std::move(from.owned);
  fresh->base_ = r->base_;
  fresh->size_ = r->size_;
  AMEM_RETURN_IF_ERROR(Load(fresh.get(), options, /*ignore_index=*/true));
  to.index_ignored = true;
  return fresh;
}

Status Reader::Rep::Load(Reader* r, const ReadOptions& options, bool ignore_index) {
  Rep& rep = *r->rep_;
  Header& h = rep.header;
  rep.file = r->base_;
  AMEM_RETURN_IF_ERROR(h.DecodeFrom(std::string_view(r->base_, r->size_)));
  r->version_ = h.version;
  r->flags_ = h.flags;
  r->features_ = h.features;
  r->node_count_ = h.node_count;
  r->edge_count_ = h.edge_count;
  r->dimension_ = h.dimension;
  r->session_count_ = h.session_count;
  r->content_length_ = h.content_length;
  r->content_uncompressed_ = h.content_uncompressed;
  const uint64_t n = h.node_count, m = h.edge_count, size = r->size_;
  rep.OpenRead(r, r->base_, Header::kEncodedLength);
  if (h.dimension == 0) return Corrupt("header", "dimension is zero");
  const uint64_t records_end = Header::kEncodedLength + n * NodeEntry::kEncodedLength +
                               m * EdgeEntry::kEncodedLength;
  if (records_end > size) return Corrupt("node/edge records", "past end of file");
  r->edges_ = r->base_ + Header::kEncodedLength + n * NodeEntry::kEncodedLength;

  // Content block.
  if (h.content_offset < records_end || !InBounds(h.content_offset, h.content_length, size)) {
    return Corrupt("content block", "extent outside the file");
  }
  if (r->content_compressed()) {
    if (h.content_uncompressed > kMaxLz4Ratio * h.content_length + 64) {
      return Corrupt("content block", "uncompressed size larger than LZ4 can produce");
    }
    LZ4F_dctx* dctx = nullptr;
    if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) {
      return Status::IOError("content block: cannot create LZ4 context");
    }
    LZ4F_frameInfo_t info;
    std::memset(&info, 0, sizeof(info));
    size_t consumed = h.content_length;
    size_t rc = LZ4F_getFrameInfo(dctx, &info, r->base_ + h.content_offset, &consumed);
    LZ4F_freeDecompressionContext(dctx);
    rep.OpenRead(r, r->base_ + h.content_offset, std::min<uint64_t>(h.content_length, LZ4F_HEADER_SIZE_MAX));
    if (LZ4F_isError(rc)) {
      return Corrupt("content block", std::string("bad LZ4 frame header: ") + LZ4F_getErrorName(rc));
    }
    if (info.contentSize != 0 && info.contentSize != h.content_uncompressed) {
      return Corrupt("content block", "LZ4 frame size differs from the header's");
    }
  } else {
    if (h.content_length != h.content_uncompressed) {
      return Corrupt("content block", "stored size differs from uncompressed size");
    }
    rep.content = std::string_view(r->base_ + h.content_offset, h.content_length);
  }

  // Vector block.
  if (r->has_vectors()) {
    if (h.vector_offset % alignof(float) != 0 ||
        !InBounds(h.vector_offset, n * h.dimension * sizeof(float), size) ||
        h.vector_offset < records_end) {
      return Corrupt("vector block", "extent outside the file or misaligned");
    }
    rep.vectors = reinterpret_cast<const float*>(r->base_ + h.vector_offset);
  }

  // Decided before the blocks are parsed (their O(n) checks are deferred when
  // lazy); AttachSeedIndexes turns it off when the session or time block is missing.
  rep.lazy = (h.features & kFeatureExtensions) != 0;
  AMEM_RETURN_IF_ERROR(ParseBlocks(r, ignore_index));
  if (options.check_pages) AMEM_RETURN_IF_ERROR(StartPages(r));
  if (rep.lazy) {
    AMEM_RETURN_IF_ERROR(StartLazy(r));
    if (options.check_records) AMEM_RETURN_IF_ERROR(r->CheckRecords());
  } else {
    AMEM_RETURN_IF_ERROR(r->CheckRecords());  // the deferred block checks
    AMEM_RETURN_IF_ERROR(CheckNodes(r));
    AMEM_RETURN_IF_ERROR(CheckEdges(r));
  }
  if (options.verify_checksum) AMEM_RETURN_IF_ERROR(r->Verify());
  if (options.check_indexes) AMEM_RETURN_IF_ERROR(r->CheckIndexes());
  return Status::OK();
}

Status Reader::Rep::ParseBlocks(Reader* r, bool ignore_index) {
  const Header& h = r->rep_->header;
  ParsedBlocks p;
  if (!(h.flags & kFlagHasIndexes)) {
    if (h.features != 0) return Corrupt("header", "feature flags set without indexes");
  } else if (!ignore_index) {
    AMEM_RETURN_IF_ERROR(ParseIndexSection(r, &p));
  }
  AMEM_RETURN_IF_ERROR(CheckFeatures(r, p));
  return AttachSeedIndexes(r, p);
}

Status Reader::Rep::ParseIndexSection(Reader* r, ParsedBlocks* p) {
  Rep& rep = *r->rep_;
  const Header& h = rep.header;
  const uint64_t n = h.node_count, m = h.edge_count, size = r->size_;
  rep.in_index_section = true;
  const uint64_t records_end = Header::kEncodedLength + n * NodeEntry::kEncodedLength +
                               m * EdgeEntry::kEncodedLength;
  if (h.index_offset < records_end || h.index_offset > size ||
      h.index_offset % kBlockAlignment != 0) {
    return Corrupt("index section", "offset outside the file or misaligned");
  }
  uint64_t pos = h.index_offset;
  int64_t prev_tag = -1;
  while (pos < size) {
    if (size - pos < kBlockHeaderLength) return Corrupt("index section", "truncated block header");
    BlockBody b;
    b.tag = DecodeFixed32(r->base_ + pos);
    b.len = DecodeFixed32(r->base_ + pos + 4);
    b.pos = pos;
    b.name = BlockName(b.tag);
    if (static_cast<int64_t>(b.tag) <= prev_tag) return Corrupt(b.name, "tags not ascending");
    prev_tag = b.tag;
    if (b.len % kBlockAlignment != 0) return Corrupt(b.name, "length not a multiple of 8");
    if (!InBounds(pos + kBlockHeaderLength, b.len, size)) return Corrupt(b.name, "length past end of file");
    b.body = r->base_ + pos + kBlockHeaderLength;
    rep.OpenRead(r, r->base_ + pos, kBlockHeaderLength);
    r->blocks_.push_back({b.tag, pos, b.len});
    if (IsExtensionTag(b.tag)) p->present_ext |= 1u << (b.tag - static_cast<uint32_t>(BlockTag::kInfo));
    AMEM_RETURN_IF_ERROR(ParseBlock(r, b, p));
    pos += kBlockHeaderLength + b.len;
  }
  rep.in_index_section = false;
  return Status::OK();
}

Status Reader::Rep::ParseBlock(Reader* r, const BlockBody& b, ParsedBlocks* p) {
  switch (static_cast<BlockTag>(b.tag)) {
    case BlockTag::kTypeIndex:
    case BlockTag::kSessionIndex:
    case BlockTag::kTimeIndex:
    case BlockTag::kClusterMap:
      return ParseSeedBlock(r, b, p);
    case BlockTag::kTermIndex:
      p->have_term = true;
      return ParseTermIndex(r, b);
    case BlockTag::kDocLengths:
      p->have_doclen = true;
      return ParseDocLengths(r, b);
    case BlockTag::kEntitySearch:
      return ParseEntitySearch(r, b);
    case BlockTag::kEntityLabels:
      return ParseEntityLabels(r, b);
    case BlockTag::kInfo:
    case BlockTag::kNodeIds:
    case BlockTag::kNodeKeys:
    case BlockTag::kNodeAttrs:
      return ParseNodeBlock(r, b, p);
    case BlockTag::kRelationNames:
    case BlockTag::kTypeNames:
    case BlockTag::kRuns:
    case BlockTag::kLabels:
      return ParseNameBlock(r, b);
    case BlockTag::kEdgeAttrs:
    case BlockTag::kEdgePayloads:
    case BlockTag::kKv:
    case BlockTag::kOutIndex:
    case BlockTag::kInIndex:
      return ParseEdgeBlock(r, b, p);
    case BlockTag::kEmbeddings:
      return ParseEmbeddings(r, b);
    case BlockTag::kPageChecksums: {
      Rep& rep = *r->rep_;
      const uint64_t pages = PageChecksumBlock::PageCount(b.pos);
      if (!b.Has(PageChecksumBlock::kFixedLength) ||
          DecodeFixed32(b.body) != PageChecksumBlock::kPageSize) {
        return Corrupt(b.name, "page size is not 4096");
      }
      if (DecodeFixed32(b.body + 4) != pages || b.len != PageChecksumBlock::Length(b.pos)) {
        return Corrupt(b.name, "page count differs from the bytes before the block");
      }
      rep.page_hashes = b.body + PageChecksumBlock::kFixedLength;
      rep.paged = b.pos;
      rep.page_count = static_cast<uint32_t>(pages);
      return Status::OK();
    }
    case BlockTag::kChecksum:
      if (b.len < 8 || b.pos + kBlockHeaderLength + b.len != r->size_) {
        return Corrupt(b.name, "not the last block");
      }
      r->rep_->checksum_block = b.pos;
      return Status::OK();
  }
  return Status::OK();  // unknown tag: skipped (FORMAT.md §8)
}

// 0x01..0x04. The session and time indexes are checked once the session count
// is known (AttachSeedIndexes).
Status Reader::Rep::ParseSeedBlock(Reader* r, const BlockBody& b, ParsedBlocks* p) {
  Rep& rep = *r->rep_;
  const uint64_t n = rep.header.node_count;
  const char* body = b.body;
  switch (static_cast<BlockTag>(b.tag)) {
    case BlockTag::kTypeIndex: {
      if (!b.Has(4)) return Corrupt(b.name, "truncated");
      uint32_t slots = DecodeFixed32(body);
      if (slots > 256 || !b.Has(4 + slots * ((n + 7) / 8))) return Corrupt(b.name, "bitsets past end of block");
      rep.OpenRead(r, body, 4);  // the bitsets are checked on first use (CheckTypeIndex)
      rep.type_slots = slots;
      rep.type_bits = body + 4;
      break;
    }
    case BlockTag::kSessionIndex: {
      if (!b.Has(4)) return Corrupt(b.name, "truncated");
      p->session_entries = DecodeFixed32(body);
      if (!b.Has(4 + uint64_t{p->session_entries} * kSessionEntryLength)) return Corrupt(b.name, "entries past end of block");
      rep.OpenRead(r, body, 4 + uint64_t{p->session_entries} * kSessionEntryLength);
      p->session_block = body + 4;
      break;
    }
    case BlockTag::kTimeIndex: {
      if (!b.Has(4) || DecodeFixed32(body) != n) return Corrupt(b.name, "entry count differs from node count");
      if (!b.Has(4 + n * kTimeEntryLength)) return Corrupt(b.name, "entries past end of block");
      rep.OpenRead(r, body, 4);
      p->time_block = body + 4;
      break;
    }
    case BlockTag::kClusterMap: {
      if (!b.Has(8)) return Corrupt(b.name, "truncated");
      uint64_t k = DecodeFixed32(body), d = DecodeFixed32(body + 4);
      rep.OpenRead(r, body, 8);
      if (k == 0) break;
      if (d != rep.header.dimension) return Corrupt(b.name, "dimension differs from the header's");
      if (!b.Has(8 + k * d * 4 + n * 8)) return Corrupt(b.name, "past end of block");
      rep.cluster_assign = body + 8 + k * d * 4;  // checked by CheckDeferred
      rep.OpenRead(r, body + 8, k * d * 4);  // the centroids
      r->cluster_count_ = static_cast<uint32_t>(k);
      rep.centroids = body + 8;
      break;
    }
    default:
      break;
  }
  return Status::OK();
}

// 0x05
Status Reader::Rep::ParseTermIndex(Reader* r, const BlockBody& b) {
  Rep& rep = *r->rep_;
  const char* body = b.body;
  if (!b.Has(8)) return Corrupt(b.name, "truncated");
  const uint64_t t = DecodeFixed32(body), p = DecodeFixed32(body + 4);
  const uint64_t fixed = 8 + (t + 1) * kTermEntryLength + p * kPostingLength;
  if (!b.Has(fixed)) return Corrupt(b.name, "directory past end of block");
  const char* dir = body + 8;
  const char* post = dir + (t + 1) * kTermEntryLength;
  const char* names = post + p * kPostingLength;
  const uint64_t name_bytes = DecodeFixed32(dir + t * kTermEntryLength);
  rep.OpenRead(r, body, 8 + kTermEntryLength);
  rep.OpenRead(r, dir + t * kTermEntryLength, kTermEntryLength);
  if (!b.Has(fixed + name_bytes)) return Corrupt(b.name, "term names past end of block");
  if (DecodeFixed32(dir) != 0 || DecodeFixed32(dir + 4) != 0 ||
      DecodeFixed32(dir + t * kTermEntryLength + 4) != p) {
    return Corrupt(b.name, "directory does not span the postings");
  }
  r->term_count_ = static_cast<uint32_t>(t);
  rep.term_postings = static_cast<uint32_t>(p);
  rep.term_name_bytes = static_cast<uint32_t>(name_bytes);
  // The directory's entries are checked where they are read (TermEntryOk) and
  // whole by CheckDeferred; postings per term on first use (CheckTerm).
  rep.term_state.reset(new std::atomic<uint8_t>[t]());
  rep.term_entries = dir;
  rep.postings = post;
  rep.term_names = names;
  return Status::OK();
}

// 0x06
Status Reader::Rep::ParseDocLengths(Reader* r, const BlockBody& b) {
  const uint64_t n = r->rep_->header.node_count;
  if (!b.Has(4 * n)) return Corrupt(b.name, "past end of block");
  r->doc_lengths_ = b.body;  // summed and checked on first use (LoadDocLengths)
  return Status::OK();
}

bool Reader::LoadDocLengths() const {
  std::call_once(rep_->doc_lengths_once, [this] {
    if (layer_) {  // summed at open from the base's
      doc_lengths_ready_.store(true, std::memory_order_release);
      return;
    }
    const uint64_t n = node_count_;
    if (doc_lengths_) {
      // Read whole here, then inline by doc_length() with no check.
      if (Status s = rep_->PagesStatus(doc_lengths_, 4 * n); !s.ok()) {
        rep_->Fail(std::move(s));
        return;  // not ready: every doc length reads as 0
      }
      uint64_t sum = 0;
      for (uint64_t i = 0; i < n; ++i) sum += DecodeFixed32(doc_lengths_ + 4 * i);
      doc_length_sum_ = sum;
      avg_doc_length_ = n ? static_cast<double>(sum) / static_cast<double>(n) : 0.0;
    }
    doc_lengths_ready_.store(true, std::memory_order_release);
  });
  return doc_lengths_ready_.load(std::memory_order_acquire);
}

uint32_t Reader::SlowDocLength(uint32_t i) const {
  if (!LoadDocLengths() || !doc_lengths_) return 0;
  return DecodeFixed32(doc_lengths_ + 4 * uint64_t{i});
}

// 0x10..0x12, 0x17
Status Reader::Rep::ParseNodeBlock(Reader* r, const BlockBody& b, ParsedBlocks* p) {
  Rep& rep = *r->rep_;
  const uint64_t n = rep.header.node_count;
  const char* body = b.body;
  switch (static_cast<BlockTag>(b.tag)) {
    case BlockTag::kInfo: {
      if (!b.Has(InfoBlock::kEncodedLength)) return Corrupt(b.name, "truncated");
      rep.OpenRead(r, body, InfoBlock::kEncodedLength);
      InfoBlock info;
      info.DecodeFrom(body);
      r->newest_ts_ = info.newest_ts;
      p->info_sessions = info.session_count;
      r->stub_count_ = info.stub_count;
      p->info_kv = info.kv_count;
      if (r->stub_count_ > n) return Corrupt(b.name, "more stubs than nodes");
      if (std::min<uint32_t>(p->info_sessions, 0xFFFF) != rep.header.session_count) {
        return Corrupt(b.name, "session count differs from the header's");
      }
      break;
    }
    case BlockTag::kNodeIds:
      if (!b.Has(12 * n)) return Corrupt(b.name, "past end of block");
      rep.ids = body;
      rep.by_id = body + 8 * n;  // entries checked where read and by CheckDeferred
      break;
    case BlockTag::kNodeKeys: {
      if (!b.Has(4 * n)) return Corrupt(b.name, "past end of block");
      rep.by_key = body;  // entries checked where read and by CheckDeferred
      std::string_view in = b.bytes();
      in.remove_prefix(4 * n);
      AMEM_RETURN_IF_ERROR(rep.keys.Parse(&in).WithContext(b.name));
      rep.OpenReadList(r, rep.keys);
      if (rep.keys.size() != n) return Corrupt(b.name, "key count differs from node count");
      break;
    }
    case BlockTag::kNodeAttrs:
      if (!b.Has(NodeAttrsEntry::kEncodedLength * n)) return Corrupt(b.name, "past end of block");
      rep.node_attrs = body;
      break;
    default:
      break;
  }
  return Status::OK();
}

// 0x13..0x16: StringLists
Status Reader::Rep::ParseNameBlock(Reader* r, const BlockBody& b) {
  Rep& rep = *r->rep_;
  std::string_view in = b.bytes();
  // The relation and type names are small and read whole (the edge checks look up
  // every relation); runs and labels are checked entry by entry where read (Str).
  switch (static_cast<BlockTag>(b.tag)) {
    case BlockTag::kRelationNames:
      AMEM_RETURN_IF_ERROR(rep.relation_names.Parse(&in).WithContext(b.name));
      if (rep.relation_names.size() != kRelationSlots) return Corrupt(b.name, "not 256 slots");
      rep.OpenRead(r, b.body, b.len);
      break;
    case BlockTag::kTypeNames:
      rep.OpenRead(r, b.body, b.len);
      return rep.type_names.Parse(&in).WithContext(b.name);
    case BlockTag::kRuns:
      AMEM_RETURN_IF_ERROR(rep.runs.Parse(&in).WithContext(b.name));
      rep.OpenReadList(r, rep.runs);
      break;
    case BlockTag::kLabels:
      AMEM_RETURN_IF_ERROR(rep.labels.Parse(&in).WithContext(b.name));
      rep.OpenReadList(r, rep.labels);
      break;
    default:
      break;
  }
  return Status::OK();
}

// 0x18..0x1C
Status Reader::Rep::ParseEdgeBlock(Reader* r, const BlockBody& b, ParsedBlocks* p) {
  Rep& rep = *r->rep_;
  const uint64_t n = rep.header.node_count, m = rep.header.edge_count;
  const char* body = b.body;
  std::string_view in = b.bytes();
  switch (static_cast<BlockTag>(b.tag)) {
    case BlockTag::kEdgeAttrs:
      if (!b.Has(EdgeAttrsEntry::kEncodedLength * m)) return Corrupt(b.name, "past end of block");
      rep.edge_attrs = body;
      break;
    case BlockTag::kEdgePayloads:
      AMEM_RETURN_IF_ERROR(rep.payloads.Parse(&in).WithContext(b.name));
      rep.OpenReadList(r, rep.payloads);
      if (rep.payloads.size() != m) return Corrupt(b.name, "count differs from edge count");
      break;
    case BlockTag::kKv: {
      if (!b.Has(KvFixedEntry::kCountLength)) return Corrupt(b.name, "truncated");
      p->kv_count = DecodeFixed32(body);
      rep.OpenRead(r, body, KvFixedEntry::kCountLength);
      const uint64_t fixed = KvFixedEntry::kCountLength + uint64_t{p->kv_count} * KvFixedEntry::kEncodedLength;
      if (!b.Has(fixed)) return Corrupt(b.name, "past end of block");
      rep.kv_fixed = body + KvFixedEntry::kCountLength;
      in.remove_prefix(fixed);
      AMEM_RETURN_IF_ERROR(rep.kv_strings.Parse(&in).WithContext(b.name));
      rep.OpenReadList(r, rep.kv_strings);
      if (rep.kv_strings.size() != 4 * uint64_t{p->kv_count}) return Corrupt(b.name, "string count mismatch");
      break;
    }
    case BlockTag::kOutIndex:
      if (!b.Has(4 * (n + 1))) return Corrupt(b.name, "past end of block");
      p->out_block = body;
      break;
    case BlockTag::kInIndex: {
      if (!b.Has(4 * (n + 1) + 4 * m)) return Corrupt(b.name, "past end of block");
      p->in_block = body;  // checked by chunks (CheckInRange) or by CheckDeferred
      break;
    }
    default:
      break;
  }
  return Status::OK();
}

// 0x1D
Status Reader::Rep::ParseEmbeddings(Reader* r, const BlockBody& b) {
  Rep& rep = *r->rep_;
  const uint64_t n = rep.header.node_count;
  const char* body = b.body;
  if (!b.Has(EmbeddingBlock::kFixedLength)) return Corrupt(b.name, "truncated");
  const uint32_t entries = DecodeFixed32(body + 4), overflow = DecodeFixed32(body + 8);
  if (DecodeFixed32(body) != rep.header.dimension) return Corrupt(b.name, "dimension differs from the header's");
  if (DecodeFixed32(body + 12) != 0) return Corrupt(b.name, "reserved bytes not zero");
  const char* offsets = body + EmbeddingBlock::kFixedLength;
  if (!b.Has(EmbeddingBlock::kFixedLength + 4 * (n + 1 + uint64_t{entries} + overflow))) {
    return Corrupt(b.name, "past end of block");
  }
  // The offsets are checked where read (embedding()) and whole by CheckDeferred.
  const char* over = offsets + 4 * (n + 1) + 4 * uint64_t{entries};
  rep.OpenRead(r, body, EmbeddingBlock::kFixedLength);
  rep.OpenRead(r, over, 4 * uint64_t{overflow});
  for (uint32_t k = 0; k < overflow; ++k) {
    const uint32_t node = DecodeFixed32(over + 4 * k);
    if (node >= n || (k > 0 && node <= DecodeFixed32(over + 4 * (k - 1)))) {
      return Corrupt(b.name, "overflow list not ascending nodes without entries");
    }
  }
  rep.embed_offsets = offsets;
  rep.embed_entries = reinterpret_cast<const uint32_t*>(offsets + 4 * (n + 1));
  rep.embed_overflow = over;
  rep.embed_entry_count = entries;
  rep.embed_overflow_count = overflow;
  return Status::OK();
}

// The fixed part, the directory's extent and its sentinel; the entities and
// grams are checked where read (search_entity, search_gram, search_postings).
Status Reader::Rep::ParseEntitySearch(Reader* r, const BlockBody& b) {
  Rep& rep = *r->rep_;
  if (!b.Has(EntitySearchBlock::kFixedLength)) return Corrupt(b.name, "truncated");
  const uint32_t entities = DecodeFixed32(b.body), grams = DecodeFixed32(b.body + 4);
  if (entities > rep.header.node_count) return Corrupt(b.name, "more entities than nodes");
  const uint64_t directory = EntitySearchBlock::kFixedLength + EntitySearchBlock::kEntityLength * uint64_t{entities};
  const uint64_t lists = directory + EntitySearchBlock::kGramEntryLength * (uint64_t{grams} + 1);
  if (!b.Has(lists)) return Corrupt(b.name, "past end of block");
  const char* sentinel = b.body + lists - EntitySearchBlock::kGramEntryLength;
  const uint64_t list_bytes = DecodeFixed64(sentinel + 8);
  if (DecodeFixed32(sentinel) != EntitySearchBlock::kSentinel || DecodeFixed32(sentinel + 4) != 0 ||
      list_bytes > b.len - lists || b.len - lists - list_bytes >= kBlockAlignment) {
    return Corrupt(b.name, "directory's end does not fit the block");
  }
  rep.OpenRead(r, b.body, EntitySearchBlock::kFixedLength);
  rep.OpenRead(r, sentinel, EntitySearchBlock::kGramEntryLength);
  rep.search_entities = b.body + EntitySearchBlock::kFixedLength;
  rep.search_grams = b.body + directory;
  rep.search_lists = b.body + lists;
  rep.search_entity_count = entities;
  rep.search_gram_count = grams;
  rep.search_list_bytes = list_bytes;
  return Status::OK();
}

// The fixed part and the list's extent; the list is checked where read
// (search_odd_labels). Block 0x07 comes before it (tags ascend).
Status Reader::Rep::ParseEntityLabels(Reader* r, const BlockBody& b) {
  Rep& rep = *r->rep_;
  if (!b.Has(EntityLabelsBlock::kFixedLength)) return Corrupt(b.name, "truncated");
  const uint32_t count = DecodeFixed32(b.body), bytes = DecodeFixed32(b.body + 4);
  if (rep.search_entities == nullptr) return Corrupt(b.name, "present without the entity search");
  if (count > rep.search_entity_count) return Corrupt(b.name, "more entities than the entity search's");
  const uint64_t end = EntityLabelsBlock::kFixedLength + uint64_t{bytes};
  if (end > b.len || b.len - end >= kBlockAlignment) return Corrupt(b.name, "list does not fit the block");
  rep.OpenRead(r, b.body, EntityLabelsBlock::kFixedLength);
  rep.label_list = b.body + EntityLabelsBlock::kFixedLength;
  rep.label_count = count;
  rep.label_bytes = bytes;
  return Status::OK();
}

// A feature bit is set exactly when its blocks are present: a flipped bit can
// neither hide the checksum block nor promise a block that is not there.
Status Reader::Rep::CheckFeatures(Reader* r, const ParsedBlocks& p) {
  Rep& rep = *r->rep_;
  const Header& h = rep.header;
  auto feature = [&](uint32_t bit, bool present, const char* section) {
    bool promised = (h.features & bit) != 0;
    if (promised == present) return Status::OK();
    return Corrupt(section, promised ? "missing" : "present without its feature flag");
  };
  const uint32_t all_ext =
      (1u << (static_cast<uint32_t>(BlockTag::kInIndex) - static_cast<uint32_t>(BlockTag::kInfo) + 1)) - 1;
  AMEM_RETURN_IF_ERROR(feature(kFeatureTermIndex, p.have_term, "term index"));
  AMEM_RETURN_IF_ERROR(feature(kFeatureDocLengths, p.have_doclen, "doc lengths"));
  AMEM_RETURN_IF_ERROR(feature(kFeatureChecksum, rep.checksum_block != kNone, "checksum"));
  AMEM_RETURN_IF_ERROR(feature(kFeatureEmbeddings, rep.embed_offsets != nullptr, "embeddings"));
  AMEM_RETURN_IF_ERROR(feature(kFeaturePageChecksums, rep.page_hashes != nullptr, "page checksums"));
  AMEM_RETURN_IF_ERROR(feature(kFeatureEntitySearch, rep.search_entities != nullptr, "entity search"));
  AMEM_RETURN_IF_ERROR(feature(kFeatureEntityLabels, rep.label_list != nullptr, "entity labels"));
  if (rep.search_entities != nullptr && !(h.features & kFeatureExtensions)) {
    return Corrupt("entity search", "present without the node keys");
  }
  if ((h.features & kFeatureExtensions) && p.present_ext != all_ext) {
    return Corrupt("extension blocks", "some are missing");
  }
  AMEM_RETURN_IF_ERROR(feature(kFeatureExtensions, p.present_ext != 0, "extension blocks"));
  if (h.features & kFeatureExtensions) {
    rep.has_ext = true;
    r->session_count_ = p.info_sessions;
    if (rep.runs.size() != p.info_sessions) return Corrupt("runs", "count differs from session count");
    if (rep.labels.size() == 0) return Corrupt("labels", "empty (entry 0 must be \"\")");
    if (p.kv_count != p.info_kv) return Corrupt("kv entries", "count differs from info block");
    r->kv_count_ = p.kv_count;
  }
  return Status::OK();
}

// The session and time indexes, once the session count is known, and the
// adjacency indexes.
Status Reader::Rep::AttachSeedIndexes(Reader* r, const ParsedBlocks& p) {
  Rep& rep = *r->rep_;
  const uint64_t n = rep.header.node_count;
  if (p.session_block) {
    if (p.session_entries != r->session_count_) return Corrupt("session index", "entry count differs from session count");
    for (uint32_t s = 0; s < p.session_entries; ++s) {
      const char* e = p.session_block + uint64_t{s} * kSessionEntryLength;
      uint32_t b = DecodeFixed32(e + 4), en = DecodeFixed32(e + 8);
      if (DecodeFixed32(e) != s || b > en || en > n) return Corrupt("session index", "entry out of range");
    }
    rep.sessions = p.session_block;
  }
  if (!p.session_block || !p.time_block) rep.lazy = false;
  if (p.time_block) {  // checked by chunks (CheckTimeRange) or by CheckDeferred
    r->time_ = p.time_block;
    r->time_count_ = static_cast<uint32_t>(n);
  }
  r->out_off_ = p.out_block;  // checked against the edges in CheckEdges
  if (p.in_block) {
    r->in_off_ = p.in_block;
    r->in_list_ = p.in_block + 4 * (n + 1);
  }
  return Status::OK();
}

Status Reader::Rep::CheckNodes(Reader* r) {
  Rep& rep = *r->rep_;
  const uint32_t n = r->node_count_;
  const bool spec_only = !rep.has_ext;
  std::vector<uint32_t> lo, hi;  // rebuilt session ranges (no session index)
  if (!rep.sessions) {
    lo.assign(r->session_count_, n);
    hi.assign(r->session_count_, 0);
  }
  AMEM_RETURN_IF_ERROR(rep.CheckNodeRange(r, 0, n));
  int64_t newest = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (!rep.sessions) {
      const uint32_t s = r->session(i);
      lo[s] = std::min(lo[s], i);
      hi[s] = std::max(hi[s], i + 1);
    }
    if (spec_only) newest = std::max(newest, r->created_ts(i));
  }
  if (spec_only) r->newest_ts_ = newest;
  if (!rep.sessions) {
    for (uint32_t s = 0; s < r->session_count_; ++s) {
      PutFixed32(&rep.built_sessions, s);
      PutFixed32(&rep.built_sessions, lo[s] <= hi[s] ? lo[s] : 0);
      PutFixed32(&rep.built_sessions, lo[s] <= hi[s] ? hi[s] : 0);
    }
    rep.sessions = rep.built_sessions.data();
  }
  if (!rep.has_ext) {
    rep.spec_relations.resize(kRelationSlots);
    for (int id = kBuiltinRelationCount; id < kRelationSlots; ++id) {
      rep.spec_relations[id] = "rel" + std::to_string(id);
    }
    rep.spec_runs.resize(r->session_count_);
    for (uint32_t s = 1; s < r->session_count_; ++s) rep.spec_runs[s] = std::to_string(s);
  }
  if (!r->time_) {
    std::vector<std::pair<int64_t, uint32_t>> order(n);
    for (uint32_t i = 0; i < n; ++i) order[i] = {r->created_ts(i), i};
    std::sort(order.begin(), order.end());
    for (const auto& [ts, i] : order) {
      PutFixed64(&rep.built_time, static_cast<uint64_t>(ts));
      PutFixed32(&rep.built_time, i);
    }
    r->time_ = rep.built_time.data();
    r->time_count_ = n;
  }
  return Status::OK();
}

Status Reader::Rep::CheckEdges(Reader* r) {
  Rep& rep = *r->rep_;
  const uint32_t n = r->node_count_, m = r->edge_count_;
  if (!r->out_off_) rep.built_out.reserve(4 * (size_t{n} + 1));
  uint32_t next_node = 0;  // CSR position: out_off[i] must be the first edge with src >= i
  auto expect_offset = [&](uint32_t i, uint32_t j) -> bool {
    if (r->out_off_) return DecodeFixed32(r->out_off_ + 4 * uint64_t{i}) == j;
    PutFixed32(&rep.built_out, j);
    return true;
  };
  AMEM_RETURN_IF_ERROR(rep.CheckEdgeRange(r, 0, m));
  for (uint32_t j = 0; j < m; ++j) {
    const uint32_t src = r->edge_source(j);
    rep.rel_used[r->edge_rel(j)] = true;
    while (next_node <= src) {
      if (!expect_offset(next_node++, j)) return Corrupt("out index", "offsets disagree with edges");
    }
  }
  while (next_node <= n) {
    if (!expect_offset(next_node++, m)) return Corrupt("out index", "offsets disagree with edges");
  }
  if (!r->out_off_) r->out_off_ = rep.built_out.data();

  if (!r->in_off_) {
    std::vector<uint32_t> start(size_t{n} + 1, 0);
    for (uint32_t j = 0; j < m; ++j) ++start[r->edge_target(j) + 1];
    for (uint32_t i = 0; i < n; ++i) start[i + 1] += start[i];
    std::vector<uint32_t> list(m), fill(start.begin(), start.end() - 1);
    for (uint32_t j = 0; j < m; ++j) list[fill[r->edge_target(j)]++] = j;
    for (uint32_t i = 0; i < n; ++i) {
      if (start[i + 1] - start[i] > 1) {
        std::stable_sort(list.begin() + start[i], list.begin() + start[i + 1],
                         [&](uint32_t a, uint32_t b) { return r->edge_rel(a) < r->edge_rel(b); });
      }
    }
    for (uint32_t v : start) PutFixed32(&rep.built_in, v);
    for (uint32_t v : list) PutFixed32(&rep.built_in, v);
    r->in_off_ = rep.built_in.data();
    r->in_list_ = r->in_off_ + 4 * (size_t{n} + 1);
  }
  return Status::OK();
}

Status Reader::Rep::StartLazy(Reader* r) {
  Rep& rep = *r->rep_;
  const uint32_t n = r->node_count_, m = r->edge_count_;
  // What the blank answers for damaged chunks rely on: node 0, session 0 and
  // edge 0 exist wherever a record refers to them.
  if (m > 0 && n == 0) return Corrupt("edge records", "edges without nodes");
  if (n > 0 && r->session_count_ == 0) return Corrupt("node records", "nodes without sessions");
  static constexpr uint8_t kBits[kParts] = {kUncheckedNodes, kUncheckedEdges, kUncheckedOut,
                                            kUncheckedIn, kUncheckedTime};
  uint8_t bits = 0;
  for (int part = 0; part < kParts; ++part) {
    const uint64_t count = part == kEdges ? m : n;
    const uint64_t size = uint64_t{1} << rep.kChunkShift[part];
    const uint32_t chunks = static_cast<uint32_t>((count + size - 1) / size);
    rep.chunk_state[part].reset(
        static_cast<uint8_t*>(std::calloc(std::max<uint32_t>(chunks, 1), 1)));
    if (!rep.chunk_state[part]) throw std::bad_alloc();
    rep.chunks_left[part].store(chunks, std::memory_order_relaxed);
    if (chunks > 0) bits |= kBits[part];
  }
  r->lazy_pending_.store(bits, std::memory_order_release);
  return Status::OK();
}

Status Reader::Rep::StartPages(Reader* r) {
  Rep& rep = *r->rep_;
  if (!rep.page_hashes) return Status::OK();
  rep.page_state.reset(static_cast<uint8_t*>(std::calloc(std::max<uint32_t>(rep.page_count, 1), 1)));
  if (!rep.page_state) throw std::bad_alloc();
  // Pages inside a compressed content frame, past its header: read only by the
  // frame's block walk and decoder, which check the blocks' own XXH32.
  if (r->content_compressed()) {
    constexpr uint64_t kPage = PageChecksumBlock::kPageSize;
    const uint64_t skip_begin = rep.header.content_offset + LZ4F_HEADER_SIZE_MAX;
    const uint64_t skip_end = rep.header.content_offset + rep.header.content_length;
    const uint64_t first = (skip_begin + kPage - 1) >> PageChecksumBlock::kPageShift;  // starts at or past
    const uint64_t last = std::min<uint64_t>(skip_end >> PageChecksumBlock::kPageShift, rep.page_count);
    if (first < last) {  // pages wholly inside [skip_begin, skip_end)
      rep.skip_first = static_cast<uint32_t>(first);
      rep.skip_last = static_cast<uint32_t>(last);
    }
  }
  const uint32_t left = rep.page_count - (rep.skip_last - rep.skip_first);
  rep.pages_left.store(left, std::memory_order_relaxed);
  rep.pages_pending.store(left > 0, std::memory_order_release);
  for (const auto& [offset, length] : rep.open_reads) {
    AMEM_RETURN_IF_ERROR(rep.PagesStatus(r->base_ + offset, length));
  }
  FreeVector(&rep.open_reads);
  return Status::OK();
}

Status Reader::Rep::PageStatus(uint32_t k) const {
  if (k >= skip_first && k < skip_last) return Status::OK();
  std::atomic_ref<uint8_t> state(page_state[k]);
  const uint8_t now = state.load(std::memory_order_acquire);
  const uint64_t begin = uint64_t{k} << PageChecksumBlock::kPageShift;
  const uint64_t end = std::min<uint64_t>(begin + PageChecksumBlock::kPageSize, paged);
  auto bad = [&] {
    return Corrupt("page checksums", "bytes " + std::to_string(begin) + ".." + std::to_string(end) +
                                         " (page " + std::to_string(k) + ") do not match their checksum");
  };
  if (now == kChunkGood) return Status::OK();
  if (now == kChunkBad) return bad();
  const bool good = Hash64(file + begin, end - begin, 0) == DecodeFixed64(page_hashes + 8 * uint64_t{k});
  uint8_t expected = kChunkUnchecked;
  // Racing first reads compute the same verdict; the one that stores it counts it.
  if (state.compare_exchange_strong(expected, good ? kChunkGood : kChunkBad, std::memory_order_acq_rel) &&
      good && pages_left.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    pages_pending.store(false, std::memory_order_release);
  }
  return good ? Status::OK() : bad();
}

// The pages of [p, p + len) that have them, as [*first, *last]; false when none do.
bool Reader::Rep::PageSpan(const void* p, uint64_t len, uint64_t* first, uint64_t* last) const {
  const uintptr_t at = reinterpret_cast<uintptr_t>(p), base = reinterpret_cast<uintptr_t>(file);
  if (len == 0 || at < base || at - base >= paged) return false;
  const uint64_t begin = at - base, end = std::min<uint64_t>(begin + len, paged);
  *first = begin >> PageChecksumBlock::kPageShift;
  *last = (end - 1) >> PageChecksumBlock::kPageShift;
  return true;
}

// One pass: the common case (every page good) loads each page's state once and
// builds no Status; the first page not yet good is checked from there on.
bool Reader::Rep::CheckPages(const void* p, uint64_t len) const {
  uint64_t first = 0, last = 0;
  if (!PageSpan(p, len, &first, &last)) return true;
  for (uint64_t k = first; k <= last; ++k) {
    if (PageGood(k)) continue;
    if (Status s = PageStatus(static_cast<uint32_t>(k)); !s.ok()) {
      Fail(std::move(s));
      return false;
    }
  }
  return true;
}

Status Reader::Rep::PagesStatus(const void* p, uint64_t len) const {
  if (!pages_pending.load(std::memory_order_acquire)) return Status::OK();  // or not checked
  uint64_t first = 0, last = 0;
  if (!PageSpan(p, len, &first, &last)) return Status::OK();
  for (uint64_t k = first; k <= last; ++k) {
    if (PageGood(k)) continue;
    AMEM_RETURN_IF_ERROR(PageStatus(static_cast<uint32_t>(k)));
  }
  return Status::OK();
}

uint32_t Reader::PagesRecorded() const {
  if (!rep_->page_state) return 0;
  uint32_t recorded = 0;
  for (uint32_t k = 0; k < rep_->page_count; ++k) {
    recorded += std::atomic_ref<uint8_t>(rep_->page_state[k]).load(std::memory_order_acquire) != Rep::kChunkUnchecked;
  }
  return recorded;
}

uint32_t Reader::PagesLeft() const {
  return rep_->page_state ? rep_->pages_left.load(std::memory_order_acquire) : 0;
}

Status Reader::Rep::CheckAllPages(const std::atomic<bool>* stop) const {
  if (!pages_pending.load(std::memory_order_acquire)) return Status::OK();
  for (uint32_t k = 0; k < page_count; ++k) {
    if (k % 256 == 0 && Stopped(stop)) return StoppedStatus();
    if (Status s = PageStatus(k); !s.ok()) {
      Fail(s);
      return s;
    }
  }
  return Status::OK();
}

// The bytes a chunk's reads come from (an in chunk's list entries are added once
// its offsets are known good).
Status Reader::Rep::ChunkPages(const Reader* r, Part part, uint32_t begin, uint32_t end) const {
  const uint64_t b = begin, e = end;
  switch (part) {
    case kNodes:
      return PagesStatus(r->base_ + Header::kEncodedLength + b * NodeEntry::kEncodedLength,
                         (e - b) * NodeEntry::kEncodedLength);
    case kEdges: return PagesStatus(r->edge_ptr(begin), (e - b) * EdgeEntry::kEncodedLength);
    case kOut: return PagesStatus(r->out_off_ + 4 * b, 4 * (e - b + 1));
    case kIn: return PagesStatus(r->in_off_ + 4 * b, 4 * (e - b + 1));
    default: return PagesStatus(r->time_ + b * kTimeEntryLength, (e - b) * kTimeEntryLength);
  }
}

bool Reader::Rep::CheckChunk(const Reader* r, Part part, uint32_t c) const {
  static constexpr uint8_t kBits[kParts] = {kUncheckedNodes, kUncheckedEdges, kUncheckedOut,
                                            kUncheckedIn, kUncheckedTime};
  const uint32_t count = part == kEdges ? r->edge_count_ : r->node_count_;
  const uint32_t begin = c << kChunkShift[part];
  const uint32_t end = std::min<uint64_t>(uint64_t{begin} + (uint64_t{1} << kChunkShift[part]), count);
  // The chunk's pages first (any changed byte), then its structure.
  Status s = ChunkPages(r, part, begin, end);
  if (s.ok()) s = CheckPartRange(r, part, begin, end);
  if (s.ok() && part == kIn && pages_pending.load(std::memory_order_acquire)) {
    const uint64_t first = DecodeFixed32(r->in_off_ + 4 * uint64_t{begin});
    const uint64_t last = DecodeFixed32(r->in_off_ + 4 * uint64_t{end});
    s = PagesStatus(r->in_list_ + 4 * first, 4 * (last - first));
  }
  uint8_t expected = kChunkUnchecked;
  if (!s.ok()) {
    Fail(s);
    State(part, c).compare_exchange_strong(expected, kChunkBad, std::memory_order_acq_rel);
    return false;
  }
  // Racing first uses compute the same verdict; the one that stores it counts it.
  if (State(part, c).compare_exchange_strong(expected, kChunkGood, std::memory_order_acq_rel) &&
      chunks_left[part].fetch_sub(1, std::memory_order_acq_rel) == 1) {
    r->lazy_pending_.fetch_and(static_cast<uint8_t>(~kBits[part]), std::memory_order_release);
  }
  return true;
}

Status Reader::Rep::CheckPartRange(const Reader* r, Part part, uint32_t begin,
                                   uint32_t end) const {
  switch (part) {
    case kNodes: return CheckNodeRange(r, begin, end);
    case kEdges: return CheckEdgeRange(r, begin, end);
    case kOut: return CheckOutRange(r, begin, end);
    case kIn: return CheckInRange(r, begin, end);
    default: return CheckTimeRange(r, begin, end);
  }
}

bool Reader::Rep::CheckWholePart(const Reader* r, Part part) const {
  static constexpr uint8_t kBits[kParts] = {kUncheckedNodes, kUncheckedEdges, kUncheckedOut,
                                            kUncheckedIn, kUncheckedTime};
  const uint32_t count = part == kEdges ? r->edge_count_ : r->node_count_;
  if (!(r->lazy_pending_.load(std::memory_order_acquire) & kBits[part])) return true;
  if (!CheckPartRange(r, part, 0, count).ok()) return false;
  const uint32_t chunks = static_cast<uint32_t>((uint64_t{count} + (uint64_t{1} << kChunkShift[part]) - 1) >>
                                                kChunkShift[part]);
  uint32_t marked = 0;  // racing chunk checks count their own
  for (uint32_t c = 0; c < chunks; ++c) {
    uint8_t expected = kChunkUnchecked;
    if (State(part, c).compare_exchange_strong(expected, kChunkGood, std::memory_order_acq_rel)) {
      ++marked;
    }
  }
  if (marked > 0 && chunks_left[part].fetch_sub(marked, std::memory_order_acq_rel) == marked) {
    r->lazy_pending_.fetch_and(static_cast<uint8_t>(~kBits[part]), std::memory_order_release);
  }
  return true;
}

// Records [begin, end): type, zero bytes, session (and its range), confidence,
// content, meta and vector extents.
Status Reader::Rep::CheckNodeRange(const Reader* r, uint32_t begin, uint32_t end) const {
  const uint64_t dim = r->dimension_;
  const uint64_t content_size = header.content_uncompressed;
  for (uint32_t i = begin; i < end; ++i) {
    const char* p = r->base_ + Header::kEncodedLength + uint64_t{i} * NodeEntry::kEncodedLength;
    auto fail = [&](std::string_view what) {
      return Corrupt("node record " + std::to_string(i), what);
    };
    if (static_cast<uint8_t>(p[0]) >= kNodeTypeCount) return fail("unknown type");
    if (p[1] || p[2] || p[3]) return fail("padding not zero");
    for (size_t k = NodeEntry::kReservedOffset; k < NodeEntry::kEncodedLength; ++k) {
      if (p[k]) return fail("reserved bytes not zero");
    }
    const uint32_t s = DecodeFixed32(p + NodeEntry::kSessionOffset);
    if (s >= r->session_count_) return fail("session out of range");
    if (sessions) {
      const char* e = sessions + uint64_t{s} * kSessionEntryLength;
      if (i < DecodeFixed32(e + 4) || i >= DecodeFixed32(e + 8)) return fail("outside its session's range");
    }
    const float c = DecodeFloat(p + NodeEntry::kConfidenceOffset);
    if (!std::isfinite(c) || c < 0.0f || c > 1.0f) return fail("confidence outside 0..1");
    uint64_t co = DecodeFixed64(p + NodeEntry::kContentOffsetOffset);
    uint64_t cl = DecodeFixed32(p + NodeEntry::kContentLengthOffset);
    if (!InBounds(co, cl, content_size)) return fail("content outside the content block");
    uint64_t mo = DecodeFixed64(p + NodeEntry::kMetaOffsetOffset);
    uint64_t ml = DecodeFixed32(p + NodeEntry::kMetaLengthOffset);
    if (mo == kNone ? ml != 0 : !InBounds(mo, ml, content_size)) {
      return fail("metadata outside the content block");
    }
    uint64_t vo = DecodeFixed64(p + NodeEntry::kVectorOffsetOffset);
    if (vo != kNone && (!vectors || vo != uint64_t{i} * dim * sizeof(float))) {
      return fail("vector offset is not the node's slot");
    }
  }
  return Status::OK();
}

// Records [begin, end): endpoints, relation, weight, and the order against the
// record before each (the one before `begin` included).
Status Reader::Rep::CheckEdgeRange(const Reader* r, uint32_t begin, uint32_t end) const {
  const uint32_t n = r->node_count_;
  // Looked up once a reader, not once a chunk: chunks are small.
  std::call_once(defined_once, [&] {
    for (int rel = 0; rel <= kMaxRelationId; ++rel) {
      defined_relations[rel] = !r->relation_name(static_cast<RelationId>(rel)).empty();
    }
  });
  const std::array<bool, kMaxRelationId + 1>& defined = defined_relations;
  for (uint32_t j = begin; j < end; ++j) {
    const char* p = r->edge_ptr(j);
    EdgeEntry e;
    e.DecodeFrom(p);
    auto fail = [&](std::string_view what) { return Corrupt("edge record " + std::to_string(j), what); };
    if (e.source >= n || e.target >= n) return fail("endpoint out of range");
    if (!defined[e.rel]) return fail("undefined relation");
    if (!std::isfinite(e.weight)) return fail("weight not finite");
    if (j > 0) {
      const char* q = r->edge_ptr(j - 1);
      auto prev = std::make_tuple(DecodeFixed32(q), static_cast<uint8_t>(q[EdgeEntry::kRelOffset]),
                                  DecodeFixed32(q + EdgeEntry::kTargetOffset));
      if (!(prev < std::make_tuple(e.source, e.rel, e.target))) {
        return fail("not sorted by (source, rel, target)");
      }
    }
  }
  return Status::OK();
}

namespace {

// Offsets [begin, end] of an (n+1)-entry CSR table: non-decreasing, at most
// `total`, 0 at node 0 and `total` at node n.
bool OffsetsFit(const char* off, uint32_t begin, uint32_t end, uint32_t n, uint32_t total) {
  uint32_t prev = DecodeFixed32(off + 4 * uint64_t{begin});
  if (begin == 0 && prev != 0) return false;
  for (uint64_t i = begin; i <= end; ++i) {
    const uint32_t o = DecodeFixed32(off + 4 * i);
    if (o < prev || o > total) return false;
    prev = o;
  }
  return end < n || prev == total;
}

}  // namespace

// The out-edge ranges of nodes [begin, end): each holds exactly the edges with
// that source (the edges on either side of the chunk's span have other sources).
Status Reader::Rep::CheckOutRange(const Reader* r, uint32_t begin, uint32_t end) const {
  const uint32_t n = r->node_count_, m = r->edge_count_;
  const char* off = r->out_off_;
  auto source = [&](uint32_t j) { return DecodeFixed32(r->edge_ptr(j) + EdgeEntry::kSourceOffset); };
  auto bad = [&] {  // made only on failure: a check of a few nodes must not allocate
    return Corrupt("out index", "offsets disagree with edges at nodes " + std::to_string(begin) +
                                    ".." + std::to_string(end));
  };
  if (!OffsetsFit(off, begin, end, n, m)) return bad();
  const uint32_t first = DecodeFixed32(off + 4 * uint64_t{begin});
  const uint32_t last = DecodeFixed32(off + 4 * uint64_t{end});
  if ((first > 0 && source(first - 1) >= begin) || (last < m && source(last) < end)) return bad();
  for (uint32_t i = begin; i < end; ++i) {
    const uint32_t to = DecodeFixed32(off + 4 * (uint64_t{i} + 1));
    for (uint32_t j = DecodeFixed32(off + 4 * uint64_t{i}); j < to; ++j) {
      if (source(j) != i) return bad();
    }
  }
  return Status::OK();
}

// The in-lists of nodes [begin, end): edge numbers in range, each edge's target
// the node, sorted by (rel, source); the entries on either side of the chunk's
// span belong to other nodes.
Status Reader::Rep::CheckInRange(const Reader* r, uint32_t begin, uint32_t end) const {
  const uint32_t n = r->node_count_, m = r->edge_count_;
  const char* off = r->in_off_;
  const char* list = r->in_list_;
  auto where = [&] { return " at nodes " + std::to_string(begin) + ".." + std::to_string(end); };
  if (!OffsetsFit(off, begin, end, n, m)) return Corrupt("in index", "offsets not monotone" + where());
  // Entry k's edge, or m when it is out of range.
  auto edge_at = [&](uint32_t k) {
    const uint32_t e = DecodeFixed32(list + 4 * uint64_t{k});
    return e < m ? e : m;
  };
  auto field = [&](uint32_t e, size_t at) { return DecodeFixed32(r->edge_ptr(e) + at); };
  auto rel = [&](uint32_t e) { return static_cast<uint8_t>(r->edge_ptr(e)[EdgeEntry::kRelOffset]); };
  const uint32_t first = DecodeFixed32(off + 4 * uint64_t{begin});
  const uint32_t last = DecodeFixed32(off + 4 * uint64_t{end});
  if (first > 0) {
    const uint32_t e = edge_at(first - 1);
    if (e == m || field(e, EdgeEntry::kTargetOffset) >= begin) return Corrupt("in index", "lists overlap" + where());
  }
  if (last < m) {
    const uint32_t e = edge_at(last);
    if (e == m || field(e, EdgeEntry::kTargetOffset) < end) return Corrupt("in index", "lists overlap" + where());
  }
  for (uint32_t i = begin; i < end; ++i) {
    const uint32_t from = DecodeFixed32(off + 4 * uint64_t{i});
    const uint32_t to = DecodeFixed32(off + 4 * (uint64_t{i} + 1));
    for (uint32_t k = from; k < to; ++k) {
      const uint32_t e = edge_at(k);
      if (e == m) return Corrupt("in index", "edge index out of range" + where());
      if (field(e, EdgeEntry::kTargetOffset) != i) {
        return Corrupt("in index", "edge " + std::to_string(e) + " listed under node " +
                                       std::to_string(i) + ", not its target");
      }
      if (k > from) {
        const uint32_t p = edge_at(k - 1);
        if (std::pair(rel(p), field(p, EdgeEntry::kSourceOffset)) >=
            std::pair(rel(e), field(e, EdgeEntry::kSourceOffset))) {
          return Corrupt("in index", "in-edges of node " + std::to_string(i) + " not sorted");
        }
      }
    }
  }
  return Status::OK();
}

// Time entries [begin, end): nodes in range, each entry its node's created_ts,
// sorted by (ts, node) against the entry before each.
Status Reader::Rep::CheckTimeRange(const Reader* r, uint32_t begin, uint32_t end) const {
  const uint32_t n = r->node_count_;
  for (uint32_t k = begin; k < end; ++k) {
    const char* e = r->time_ + uint64_t{k} * kTimeEntryLength;
    const int64_t ts = static_cast<int64_t>(DecodeFixed64(e));
    const uint32_t node = DecodeFixed32(e + 8);
    if (node >= n) return Corrupt("time index", "node out of range");
    const char* rec = r->base_ + Header::kEncodedLength + uint64_t{node} * NodeEntry::kEncodedLength;
    if (static_cast<int64_t>(DecodeFixed64(rec + NodeEntry::kTimestampOffset)) != ts) {
      return Corrupt("time index", "entry " + std::to_string(k) + " has another time than its node");
    }
    if (k > 0) {
      auto prev = std::make_tuple(static_cast<int64_t>(DecodeFixed64(e - kTimeEntryLength)),
                                  DecodeFixed32(e - kTimeEntryLength + 8));
      if (!(prev < std::make_tuple(ts, node))) return Corrupt("time index", "not sorted");
    }
  }
  return Status::OK();
}

// The block checks a lazy open leaves to first use, whole: the id and key orders'
// entries, the in index's table (when mapped), the time index (when mapped), the
// term directory, the embeddings' offsets and the cluster assignments.
Status Reader::Rep::CheckDeferred(const Reader* r) const {
  const uint32_t n = r->node_count_, m = r->edge_count_;
  if (by_id && !AllBelow(by_id, n, n)) return Corrupt("node ids", "index out of range");
  if (by_key && !AllBelow(by_key, n, n)) return Corrupt("node keys", "index out of range");
  if (built_in.empty() && r->in_list_) {
    if (!OffsetsSpan(r->in_off_, n, m)) return Corrupt("in index", "offsets not monotone");
    if (!AllBelow(r->in_list_, m, m)) return Corrupt("in index", "edge index out of range");
  }
  if (built_time.empty() && r->time_) {
    for (uint64_t k = 0; k < n; ++k) {
      const char* e = r->time_ + k * kTimeEntryLength;
      if (DecodeFixed32(e + 8) >= n) return Corrupt("time index", "node out of range");
      if (k > 0) {
        auto cur = std::make_tuple(static_cast<int64_t>(DecodeFixed64(e)), DecodeFixed32(e + 8));
        auto prev = std::make_tuple(static_cast<int64_t>(DecodeFixed64(e - kTimeEntryLength)),
                                    DecodeFixed32(e - kTimeEntryLength + 8));
        if (!(prev < cur)) return Corrupt("time index", "not sorted");
      }
    }
  }
  std::string_view prev;
  for (uint32_t t = 0; t < r->term_count_; ++t) {
    if (!TermEntryOk(t)) return Corrupt("term index", "directory not monotone");
    const char* e = term_entries + size_t{t} * kTermEntryLength;
    const uint32_t nb = DecodeFixed32(e), ne = DecodeFixed32(e + kTermEntryLength);
    std::string_view term(term_names + nb, ne - nb);
    if (t > 0 && !(prev < term)) return Corrupt("term index", "terms not sorted");
    prev = term;
  }
  if (embed_offsets) {
    if (!OffsetsSpan(embed_offsets, n, embed_entry_count)) return Corrupt("embeddings", "offsets not monotone");
    for (uint32_t k = 0; k < embed_overflow_count; ++k) {
      const uint32_t node = DecodeFixed32(embed_overflow + 4 * k);
      if (DecodeFixed32(embed_offsets + 4 * node) != DecodeFixed32(embed_offsets + 4 * (node + 1))) {
        return Corrupt("embeddings", "overflow list not ascending nodes without entries");
      }
    }
  }
  if (cluster_assign) {
    for (uint64_t i = 0; i < n; ++i) {
      if (DecodeFixed32(cluster_assign + 8 * i) >= r->cluster_count_ ||
          DecodeFixed32(cluster_assign + 8 * i + 4) >= n) {
        return Corrupt("cluster map", "assignment out of range");
      }
    }
  }
  return Status::OK();
}

Status Reader::CheckRecords(const std::atomic<bool>* stop) const {
  if (layer_) {
    AMEM_RETURN_IF_ERROR(layer_->base->CheckRecords(stop));
    return layer_->dn().CheckRecords(stop);
  }
  Rep& rep = *rep_;
  // Every page first (what the checks below read is then known unchanged).
  AMEM_RETURN_IF_ERROR(rep.CheckAllPages(stop));
  if (Stopped(stop)) return StoppedStatus();
  std::call_once(rep.deferred_once, [&] { rep.deferred_status = rep.CheckDeferred(this); });
  AMEM_RETURN_IF_ERROR(rep.deferred_status);
  if (!rep.lazy) return Status::OK();
  for (int part = 0; part < Rep::kParts; ++part) {
    if (rep.CheckWholePart(this, static_cast<Rep::Part>(part))) continue;
    const uint32_t count = part == Rep::kEdges ? edge_count_ : node_count_;
    const uint64_t size = uint64_t{1} << Rep::kChunkShift[part];
    for (uint64_t begin = 0; begin < count; begin += size) {
      if (Stopped(stop)) return StoppedStatus();
      if (rep.Chunk(this, static_cast<Rep::Part>(part), static_cast<uint32_t>(begin))) continue;
      const uint32_t end = std::min<uint64_t>(begin + size, count);
      switch (part) {  // this chunk's own verdict (ReadStatus() has the first one read)
        case Rep::kNodes: return rep.CheckNodeRange(this, static_cast<uint32_t>(begin), end);
        case Rep::kEdges: return rep.CheckEdgeRange(this, static_cast<uint32_t>(begin), end);
        case Rep::kOut: return rep.CheckOutRange(this, static_cast<uint32_t>(begin), end);
        case Rep::kIn: return rep.CheckInRange(this, static_cast<uint32_t>(begin), end);
        default: return rep.CheckTimeRange(this, static_cast<uint32_t>(begin), end);
      }
    }
  }
  return Status::OK();
}

Status Reader::Warm(const std::atomic<bool>* stop) const {
  if (layer_) return layer_->base->Warm(stop);
  AMEM_RETURN_IF_ERROR(CheckRecords(stop));
  LoadDocLengths();
  bool sorted = true;
  std::string_view previous;  // the name of term t - 1 while the order still holds
  for (uint32_t t = 0; t < term_count_; ++t) {
    if (t % 4096 == 0 && Stopped(stop)) return StoppedStatus();
    rep_->CheckTerm(t, node_count_);
    if (!sorted) continue;
    sorted = rep_->TermEntryOk(t);
    if (!sorted) continue;
    const std::string_view name = term(t);
    sorted = t == 0 || previous < name;
    previous = name;
  }
  if (Stopped(stop)) return StoppedStatus();
  if (sorted) rep_->MarkSorted(Rep::kTermOrder);
  AMEM_RETURN_IF_ERROR(rep_->CheckTypeIndex(this));
  AMEM_RETURN_IF_ERROR(DecodeAllContent(stop));
  return ReadStatus();
}

const char* Reader::CheckedNodePtr(uint32_t i) const {
  // A damaged chunk reads as this record: type 0, session 0, confidence 0, empty
  // content, no meta, no vector.
  alignas(8) static const char kBlank[NodeEntry::kEncodedLength] = {
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
      // vector_offset = kNone (bytes 32..39), meta_offset = kNone (40..47)
      -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
  if (!rep_->Chunk(this, Rep::kNodes, i)) return kBlank;
  return base_ + Header::kEncodedLength + static_cast<size_t>(i) * NodeEntry::kEncodedLength;
}

Edge Reader::SlowEdge(uint32_t j) const {
  if (layer_) return LayeredEdge(j);
  if (!rep_->Chunk(this, Rep::kEdges, j)) return {0, 0, 0, 0.0f};  // damaged: blank
  EdgeEntry e;
  e.DecodeFrom(edge_ptr(j));
  return {e.source, e.target, e.rel, e.weight};
}

uint32_t Reader::SlowList(ListPart part, uint32_t x) const {
  if (layer_) return LayeredList(part, x);
  switch (part) {
    case ListPart::kOutBegin:
    case ListPart::kOutEnd:
      // A damaged chunk's nodes have no out-edges.
      if (!rep_->Chunk(this, Rep::kOut, x)) return 0;
      return DecodeFixed32(out_off_ + 4 * (uint64_t{x} + (part == ListPart::kOutEnd)));
    case ListPart::kInBegin:
    case ListPart::kInEnd:
      if (!rep_->Chunk(this, Rep::kIn, x)) return 0;
      return DecodeFixed32(in_off_ + 4 * (uint64_t{x} + (part == ListPart::kInEnd)));
    case ListPart::kInEdge: {
      if (!rep_->Pages(in_list_ + 4 * uint64_t{x}, 4)) return 0;
      const uint32_t e = DecodeFixed32(in_list_ + 4 * uint64_t{x});
      if (e < edge_count_) return e;  // its node's chunk check proved the rest
      rep_->Fail(Corrupt("in index", "edge index out of range at " + std::to_string(x)));
      return 0;
    }
  }
  return 0;
}

TimeEntry Reader::SlowTimeEntry(uint32_t k) const {
  if (layer_) {
    EnsureTime();
  } else if (!rep_->Chunk(this, Rep::kTime, k)) {
    return {0, 0};  // damaged: blank
  }
  const char* p = time_ + k * kTimeEntryLength;
  return {static_cast<int64_t>(DecodeFixed64(p)), DecodeFixed32(p + 8)};
}

bool Reader::index_section_ignored() const { return rep_->index_ignored; }

// ---- content ----

namespace {

constexpr uint32_t kLz4FrameMagic = 0x184D2204;
constexpr uint8_t kFlgVersionMask = 0xC0, kFlgVersion1 = 0x40, kFlgIndependent = 0x20,
                  kFlgBlockChecksum = 0x10, kFlgContentSize = 0x08,
                  kFlgContentChecksum = 0x04, kFlgReserved = 0x02, kFlgDictId = 0x01;
constexpr uint32_t kLz4Uncompressed = 0x80000000u;

}  // namespace

// The LZ4 frame format (lz4_Frame_format.md): magic, FLG, BD, [content size],
// [dict id], HC; then blocks of (u32 size, high bit = stored raw; data; [u32
// XXH32 of the data]) ending with a zero word; then [u32 XXH32 of the content].
bool Reader::Rep::WalkBlocks(const Reader* r) const {
  const char* f = r->base_ + header.content_offset;
  const uint64_t len = header.content_length, raw = header.content_uncompressed;
  if (len < 7 || DecodeFixed32(f) != kLz4FrameMagic) return false;
  const uint8_t flg = static_cast<uint8_t>(f[4]), bd = static_cast<uint8_t>(f[5]);
  // Without block checksums a changed byte could decode unnoticed: such a frame is
  // decoded whole, its content checksum checked at once, as before.
  if ((flg & kFlgVersionMask) != kFlgVersion1 || !(flg & kFlgIndependent) ||
      !(flg & kFlgBlockChecksum) || (flg & (kFlgReserved | kFlgDictId)) || (bd & 0x8F) != 0 ||
      ((bd >> 4) & 7) < 4) {
    return false;
  }
  const uint64_t max = uint64_t{1} << (8 + 2 * ((bd >> 4) & 7));  // 64 KB .. 4 MB
  uint64_t pos = 6;
  if (flg & kFlgContentSize) {
    if (len < pos + 9 || DecodeFixed64(f + pos) != raw) return false;
    pos += 8;
  }
  if (((XXH32(f + 4, pos - 4, 0) >> 8) & 0xFF) != static_cast<uint8_t>(f[pos])) return false;
  ++pos;
  const bool sums = (flg & kFlgBlockChecksum) != 0;
  const uint64_t count = (raw + max - 1) / max;
  std::vector<ContentBlock> table;
  table.reserve(count);
  for (;;) {
    if (len - pos < 4) return false;
    const uint32_t word = ReadWord(r, header.content_offset + pos);
    pos += 4;
    if (word == 0) break;  // end mark
    const uint32_t size = word & ~kLz4Uncompressed;
    if (size > max || table.size() >= count || len - pos < size + (sums ? 4u : 0u)) return false;
    table.push_back({pos, size, (word & kLz4Uncompressed) != 0});
    pos += size + (sums ? 4 : 0);
  }
  if (table.size() != count) return false;
  if (flg & kFlgContentChecksum) {
    if (len - pos < 4) return false;
    stored_checksum = ReadWord(r, header.content_offset + pos);
    pos += 4;
  }
  if (pos != len) return false;
  cblocks = std::move(table);
  block_max = max;
  block_checksums = sums;
  content_checksum = (flg & kFlgContentChecksum) != 0;
  // new[] without an initializer: the pages are touched only by the blocks decoded.
  decoded.reset(new char[std::max<uint64_t>(raw, 1)]);
  block_state.reset(new std::atomic<uint8_t>[count]);
  for (uint64_t b = 0; b < count; ++b) block_state[b].store(kBlockPending, std::memory_order_relaxed);
  block_mu.reset(new std::mutex[count]);
  return true;
}

uint32_t Reader::Rep::ReadWord(const Reader* r, uint64_t at) const {
  char word[4];
  // The file's bytes are the mapping's (MAP_PRIVATE, never written); a short read
  // (the file shrank under us) falls back to the mapping, which then faults.
  if (fd >= 0 && ::pread(fd, word, 4, static_cast<off_t>(at)) == 4) return DecodeFixed32(word);
  return DecodeFixed32(r->base_ + at);
}

void Reader::Rep::Fail(Status s) const {
  std::lock_guard<std::mutex> lock(status_mu);
  if (block_failed.load(std::memory_order_relaxed)) return;
  block_status = std::move(s);
  block_failed.store(true, std::memory_order_release);
}

bool Reader::Rep::DecodeBlock(const Reader* r, size_t b, bool* irregular) const {
  std::lock_guard<std::mutex> lock(block_mu[b]);
  const uint8_t state = block_state[b].load(std::memory_order_acquire);
  if (state != kBlockPending) return state == kBlockDone;
  const ContentBlock& cb = cblocks[b];
  const char* src = r->base_ + header.content_offset + cb.src;
  const uint64_t at = b * block_max;
  const uint64_t want = std::min(block_max, header.content_uncompressed - at);
  const std::string block = "content block: block " + std::to_string(b) + " ";
  // Its place in `decoded` is fresh pages: mapped in one call, not a fault each.
  PopulateForWrite(decoded.get() + at, want);
  Status s;
  if (block_checksums && XXH32(src, cb.size, 0) != DecodeFixed32(src + cb.size)) {
    s = Status::Corruption(block + "checksum mismatch");
  } else if (cb.raw) {
    if (cb.size == want) {
      std::memcpy(decoded.get() + at, src, want);
    } else {
      *irregular = true;
    }
  } else {
    const int got = LZ4_decompress_safe(src, decoded.get() + at, static_cast<int>(cb.size),
                                        static_cast<int>(want));
    if (got < 0 && want < block_max) {
      // The last block: it may have failed for holding more than its place.
      std::unique_ptr<char[]> room(new char[block_max]);
      *irregular = LZ4_decompress_safe(src, room.get(), static_cast<int>(cb.size),
                                       static_cast<int>(block_max)) >= 0;
    }
    if (got >= 0) {
      *irregular = static_cast<uint64_t>(got) != want;
    } else if (!*irregular) {
      s = Status::Corruption(block + "does not decode (LZ4)");
    }
  }
  if (*irregular) return false;  // stays pending; the frame is read whole
  if (!s.ok()) {
    Fail(std::move(s));
    block_state[b].store(kBlockBad, std::memory_order_release);
    return false;
  }
  block_state[b].store(kBlockDone, std::memory_order_release);
  return true;
}

Status Reader::Rep::DecodeWhole(const Reader* r) const {
  const Header& h = header;
  LZ4F_dctx* dctx = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&dctx, LZ4F_VERSION))) {
    return Status::IOError("content block: cannot create LZ4 context");
  }
  std::unique_ptr<char[]> out(new char[std::max<uint64_t>(h.content_uncompressed, 1)]);
  const char* src = r->base_ + h.content_offset;
  size_t src_pos = 0, dst_pos = 0;
  Status status;
  for (;;) {
    size_t src_size = h.content_length - src_pos;
    size_t dst_size = h.content_uncompressed - dst_pos;
    size_t rc = LZ4F_decompress(dctx, out.get() + dst_pos, &dst_size, src + src_pos, &src_size,
                                nullptr);
    if (LZ4F_isError(rc)) {
      status = Corrupt("content block", std::string("LZ4: ") + LZ4F_getErrorName(rc));
      break;
    }
    src_pos += src_size;
    dst_pos += dst_size;
    if (rc == 0) break;  // frame complete
    if (src_size == 0 && dst_size == 0) {
      status = Corrupt("content block", src_pos == h.content_length
                                            ? "LZ4 frame truncated"
                                            : "LZ4 frame larger than the header promises");
      break;
    }
  }
  LZ4F_freeDecompressionContext(dctx);
  if (status.ok() && src_pos != h.content_length) {
    status = Corrupt("content block", "bytes after the LZ4 frame");
  }
  if (status.ok() && dst_pos != h.content_uncompressed) {
    status = Corrupt("content block", "LZ4 frame smaller than the header promises");
  }
  if (status.ok()) whole = std::move(out);
  return status;
}

void Reader::Rep::EnsureWhole(const Reader* r) const {
  std::call_once(whole_once, [&] {
    whole_status = DecodeWhole(r);
    use_whole.store(true, std::memory_order_release);
  });
}

void Reader::Rep::Prepare(const Reader* r) const {
  std::call_once(content_once, [&] {
    walked = WalkBlocks(r);
    if (!walked) EnsureWhole(r);
    content_tried.store(true, std::memory_order_release);
  });
}

Status Reader::EnsureContent() const {
  if (layer_) {
    AMEM_RETURN_IF_ERROR(layer_->base->EnsureContent());
    return layer_->dn().EnsureContent();
  }
  if (!content_compressed()) return Status::OK();
  rep_->Prepare(this);
  return ContentStatus();
}

Status Reader::DecodeAllContent(const std::atomic<bool>* stop) const {
  if (layer_) {
    AMEM_RETURN_IF_ERROR(layer_->base->DecodeAllContent(stop));
    return layer_->dn().DecodeAllContent(stop);
  }
  AMEM_RETURN_IF_ERROR(EnsureContent());
  if (!content_compressed() || rep_->use_whole.load(std::memory_order_acquire)) {
    return ContentStatus();
  }
  for (size_t b = 0; b < rep_->cblocks.size(); ++b) {
    if (Stopped(stop)) return StoppedStatus();
    if (rep_->block_state[b].load(std::memory_order_acquire) == Rep::kBlockDone) continue;
    bool irregular = false;
    if (!rep_->DecodeBlock(this, b, &irregular) && irregular) {
      rep_->EnsureWhole(this);
      break;
    }
  }
  return ContentStatus();
}

Status Reader::ReadStatus() const {
  if (layer_) {
    AMEM_RETURN_IF_ERROR(layer_->Failure());  // the two files found not to fit
    AMEM_RETURN_IF_ERROR(layer_->base->ReadStatus());
    return layer_->dn().ReadStatus();
  }
  if (rep_->block_failed.load(std::memory_order_acquire)) {
    std::lock_guard<std::mutex> lock(rep_->status_mu);
    return rep_->block_status;
  }
  if (!rep_->content_tried.load(std::memory_order_acquire)) return Status::OK();
  if (rep_->use_whole.load(std::memory_order_acquire)) return rep_->whole_status;
  return Status::OK();
}

const char* Reader::ContentBytes(uint64_t offset, uint32_t length) const {
  if (!content_compressed()) {
    const char* p = rep_->content.data() + offset;
    return rep_->Pages(p, length) ? p : nullptr;
  }
  const Rep& rep = *rep_;
  rep.Prepare(this);
  if (!rep.use_whole.load(std::memory_order_acquire)) {
    const size_t first = offset / rep.block_max;
    const size_t last = length == 0 ? first : (offset + length - 1) / rep.block_max;
    bool ready = true;
    for (size_t b = first; b <= last && b < rep.cblocks.size(); ++b) {
      const uint8_t state = rep.block_state[b].load(std::memory_order_acquire);
      if (state == Rep::kBlockDone) continue;
      if (state == Rep::kBlockBad) return nullptr;
      bool irregular = false;
      if (!rep.DecodeBlock(this, b, &irregular)) {
        if (!irregular) return nullptr;
        ready = false;
        break;
      }
    }
    if (ready) return rep.decoded.get() + offset;
    rep.EnsureWhole(this);
  }
  if (!rep.whole_status.ok()) return nullptr;
  return rep.whole.get() + offset;
}

std::string_view Reader::content(uint32_t i) const {
  if (layer_) {
    auto [file, x] = layer_->Local(i);
    return file->content(x);
  }
  const char* p = node_ptr(i);
  const uint32_t length = DecodeFixed32(p + NodeEntry::kContentLengthOffset);
  const char* bytes = ContentBytes(DecodeFixed64(p + NodeEntry::kContentOffsetOffset), length);
  return bytes == nullptr ? std::string_view() : std::string_view(bytes, length);
}

std::string_view Reader::meta(uint32_t i) const {
  if (layer_) {
    auto [file, x] = layer_->Local(i);
    return file->meta(x);
  }
  const char* p = node_ptr(i);
  uint64_t off = DecodeFixed64(p + NodeEntry::kMetaOffsetOffset);
  if (off == kNone) return "{}";
  const uint32_t length = DecodeFixed32(p + NodeEntry::kMetaLengthOffset);
  const char* bytes = ContentBytes(off, length);
  return bytes == nullptr ? std::string_view("{}") : std::string_view(bytes, length);
}

Status Reader::Verify() const {
  if (layer_) {
    AMEM_RETURN_IF_ERROR(layer_->base->Verify());
    return layer_->dn().Verify();
  }
  AMEM_RETURN_IF_ERROR(CheckRecords());
  for (uint32_t k = 0; k < rep_->embed_entry_count; ++k) {
    const uint32_t e = rep_->embed_entries[k];
    if (EmbeddingBlock::Bucket(e) >= dimension_ || EmbeddingBlock::Count(e) == 0) {
      return Status::Corruption("embeddings: entry " + std::to_string(k) +
                                " has a bucket out of range or a zero count");
    }
  }
  for (uint32_t t = 0; t < term_count_; ++t) {
    if (!rep_->CheckTerm(t, node_count_)) {
      return Status::Corruption("term index: postings of term " + std::to_string(t) +
                                " out of range or out of order");
    }
  }
  AMEM_RETURN_IF_ERROR(CheckIndexes());
  if (rep_->checksum_block != kNone) {
    uint64_t stored = DecodeFixed64(base_ + rep_->checksum_block + kBlockHeaderLength);
    if (Hash64(base_, rep_->checksum_block, 0) != stored) {
      return Status::Corruption("checksum: file bytes do not match the checksum block");
    }
  }
  // Every page, content pages included, whether or not reads check them.
  for (uint32_t k = 0; k < rep_->page_count; ++k) {
    const uint64_t begin = uint64_t{k} << PageChecksumBlock::kPageShift;
    const uint64_t end = std::min<uint64_t>(begin + PageChecksumBlock::kPageSize, rep_->paged);
    if (Hash64(base_ + begin, end - begin, 0) != DecodeFixed64(rep_->page_hashes + 8 * uint64_t{k})) {
      return Corrupt("page checksums", "page " + std::to_string(k) + " does not match its checksum");
    }
  }
  AMEM_RETURN_IF_ERROR(DecodeAllContent());
  // The whole-frame path checked the content checksum itself.
  if (content_compressed() && !rep_->use_whole.load(std::memory_order_acquire) && rep_->content_checksum &&
      XXH32(rep_->decoded.get(), content_uncompressed_, 0) != rep_->stored_checksum) {
    Status s = Corrupt("content block", "LZ4 content checksum mismatch");
    rep_->Fail(s);
    return s;
  }
  // The odd labels follow from the entities' content and meta, now known good.
  return rep_->label_list ? rep_->CheckEntityLabels(this) : Status::OK();
}

Status Reader::CheckIndexes() const {
  if (layer_) {
    AMEM_RETURN_IF_ERROR(layer_->base->CheckIndexes());
    return layer_->dn().CheckIndexes();
  }
  std::call_once(rep_->index_once, [this] {
    rep_->index_status = CheckRecords();
    if (rep_->index_status.ok()) rep_->index_status = rep_->CheckIndexBlocks(this);
    // A damaged string read on the way shows in the sticky status.
    if (rep_->index_status.ok()) rep_->index_status = ReadStatus();
    if (rep_->index_status.ok()) {
      for (uint8_t o = 0; o < Rep::kOrders; ++o) rep_->MarkSorted(static_cast<Rep::Order>(o));
    }
  });
  return rep_->index_status;
}

Status Reader::Rep::CheckIndexBlocks(const Reader* r) const {
  const uint32_t n = r->node_count_;
  // A permutation of 0..n-1 whose order is strictly ascending under `less`.
  auto check_order = [&](const char* perm, std::string_view block, auto less) -> Status {
    std::vector<bool> seen(n);
    for (uint32_t k = 0; k < n; ++k) {
      const uint32_t i = DecodeFixed32(perm + 4 * size_t{k});
      if (seen[i]) return Corrupt(block, "order lists node " + std::to_string(i) + " twice");
      seen[i] = true;
      if (k > 0 && !less(DecodeFixed32(perm + 4 * size_t{k - 1}), i)) {
        return Corrupt(block, "order not sorted at position " + std::to_string(k));
      }
    }
    return Status::OK();
  };
  if (by_key) {
    AMEM_RETURN_IF_ERROR(check_order(by_key, "node keys", [&](uint32_t a, uint32_t b) {
      return r->key(a) < r->key(b);
    }));
  }
  if (ids) {
    for (uint32_t i = 0; i < n && by_key; ++i) {
      if (r->id(i) != NodeIdForKey(r->key(i))) {
        return Corrupt("node ids", "id of node " + std::to_string(i) + " is not its key's");
      }
    }
    AMEM_RETURN_IF_ERROR(check_order(by_id, "node ids", [&](uint32_t a, uint32_t b) {
      return r->id(a) < r->id(b);
    }));
  }
  if (built_in.empty() && r->in_list_) {
    for (uint32_t i = 0; i < n; ++i) {
      for (uint32_t k = r->in_begin(i); k < r->in_end(i); ++k) {
        const uint32_t e = r->in_edge(k);
        if (r->edge_target(e) != i) {
          return Corrupt("in index", "edge " + std::to_string(e) + " listed under node " +
                                         std::to_string(i) + ", not its target");
        }
        if (k > r->in_begin(i)) {
          const uint32_t p = r->in_edge(k - 1);
          if (std::pair(r->edge_rel(p), r->edge_source(p)) >=
              std::pair(r->edge_rel(e), r->edge_source(e))) {
            return Corrupt("in index", "in-edges of node " + std::to_string(i) + " not sorted");
          }
        }
      }
    }
    // n lists of distinct edges, each under its target, their lengths summing to
    // edge_count (checked at open): the lists hold every edge exactly once.
  }
  AMEM_RETURN_IF_ERROR(CheckTypeIndex(r));
  if (built_time.empty() && r->time_) {
    for (uint32_t k = 0; k < r->time_count_; ++k) {
      const TimeEntry e = r->time_entry(k);
      if (e.ts != r->created_ts(e.node)) {
        return Corrupt("time index", "entry " + std::to_string(k) + " has another time than its node");
      }
      if (k > 0) {
        const TimeEntry p = r->time_entry(k - 1);
        if (std::pair(p.ts, p.node) >= std::pair(e.ts, e.node)) {
          return Corrupt("time index", "entries not sorted at " + std::to_string(k));
        }
      }
    }
  }
  if (has_ext) {
    for (uint32_t s = 1; s < r->session_count_; ++s) {
      if (!(r->session_run(s - 1) < r->session_run(s))) {
        return Corrupt("runs", "run names not sorted at session " + std::to_string(s));
      }
    }
    for (uint32_t k = 1; k < r->kv_count_; ++k) {
      const KvEntry a = r->kv(k - 1), b = r->kv(k);
      if (!(std::tie(a.scope, a.ns, a.key) < std::tie(b.scope, b.ns, b.key))) {
        return Corrupt("kv", "entries not sorted at " + std::to_string(k));
      }
    }
  }
  if (search_entities) AMEM_RETURN_IF_ERROR(CheckEntitySearch(r));
  // Block 0x08's list decodes; what it lists is Verify()'s (CheckEntityLabels),
  // since it follows from the content, which this check does not read.
  if (label_list && !r->search_odd_labels()) return r->ReadStatus();
  return Status::OK();
}

// Block 0x08 whole (Verify()): the list is exactly the entities that fail LabelsInTexts.
Status Reader::Rep::CheckEntityLabels(const Reader* r) const {
  const std::optional<std::vector<uint32_t>> listed = r->search_odd_labels();
  if (!listed) return r->ReadStatus();
  std::vector<uint32_t> odd;
  std::string_view name;
  EntityTypeCache types;
  for (uint32_t k = 0; k < search_entity_count; ++k) {
    const auto e = r->search_entity(k);
    if (!e) return r->ReadStatus();
    const std::string_view meta = r->meta(e->node);
    if (!EntityNameOf(r->key(e->node), &name) ||
        !LabelsInTexts(name, r->content(e->node), meta, types.Of(meta, r->type(e->node)))) {
      odd.push_back(k);
    }
  }
  if (odd != *listed) return Corrupt("entity labels", "the list differs from the entities' labels");
  return Status::OK();
}

// Block 0x07 whole: the entities are every live entity node, by name; the grams
// ascend, and each list is its count of ascending entity numbers.
Status Reader::Rep::CheckEntitySearch(const Reader* r) const {
  const std::string_view what = "entity search";
  uint32_t live_entities = 0;
  std::string_view name;
  for (uint32_t i = 0; i < r->node_count_; ++i) {
    if (!r->is_stub(i) && EntityNameOf(r->key(i), &name)) ++live_entities;
  }
  if (live_entities != search_entity_count) return Corrupt(what, "entity count differs from the nodes'");
  std::string_view prev;
  for (uint32_t k = 0; k < search_entity_count; ++k) {
    const auto e = r->search_entity(k);
    if (!e) return r->ReadStatus();
    const std::string_view key = r->key(e->node);
    if (k > 0 && !(prev < key)) return Corrupt(what, "entities not sorted at " + std::to_string(k));
    prev = key;
  }
  std::vector<uint32_t> list;
  for (uint32_t t = 0; t < search_gram_count; ++t) {
    const char* e = search_grams + EntitySearchBlock::kGramEntryLength * size_t{t};
    const uint32_t gram = DecodeFixed32(e), count = DecodeFixed32(e + 4);
    const uint64_t begin = DecodeFixed64(e + 8), end = DecodeFixed64(e + EntitySearchBlock::kGramEntryLength + 8);
    if (t > 0 && DecodeFixed32(e - EntitySearchBlock::kGramEntryLength) >= gram) {
      return Corrupt(what, "grams not sorted at " + std::to_string(t));
    }
    if (t == 0 && begin != 0) return Corrupt(what, "the first list does not start the list bytes");
    if (count == 0 || begin > end || end > search_list_bytes ||
        !DecodeGramList({std::string_view(search_lists + begin, end - begin), count},
                        search_entity_count, &list)) {
      return Corrupt(what, "gram " + std::to_string(t) + "'s list is not ascending entities");
    }
  }
  return Status::OK();
}

// Each node in exactly its type's set. O(n).
Status Reader::Rep::CheckTypeIndex(const Reader* r) const {
  std::call_once(type_once, [&] {
    if (!type_bits) return;
    const uint32_t n = r->node_count_;
    const size_t bytes = (size_t{n} + 7) / 8;
    if (Status s = PagesStatus(type_bits, type_slots * bytes); !s.ok()) {
      type_status = s;
      return;
    }
    const auto* bits = reinterpret_cast<const unsigned char*>(type_bits);
    uint64_t set = 0;
    for (size_t k = 0; k < type_slots * bytes; ++k) {
      unsigned b = bits[k];
      if (k % bytes == bytes - 1 && n % 8 != 0) b &= (1u << (n % 8)) - 1;  // bits past n
      set += static_cast<uint64_t>(std::popcount(b));
    }
    for (uint32_t i = 0; i < n; ++i) {
      const uint8_t t = r->type_code(i);
      if (t >= type_slots || !((bits[t * bytes + i / 8] >> (i % 8)) & 1)) {
        type_status = Corrupt("type index", "node " + std::to_string(i) + " missing from its type's set");
        return;
      }
    }
    if (set != n) type_status = Corrupt("type index", "a node is in more than one type's set");
  });
  return type_status;
}

std::string_view Reader::Rep::Str(const StringListView& list, uint32_t k, std::string_view what) const {
  std::string_view s;
  if (k < list.size() && !Pages(list.offsets_of(k), 8)) return {};
  if (list.TryGet(k, &s)) return Pages(s.data(), s.size()) ? s : std::string_view();
  Fail(Corrupt(what, "entry " + std::to_string(k) + " out of range or outside the strings"));
  return {};
}

template <typename Get>
bool Reader::Rep::Ordered(Order o, uint32_t p, uint32_t count, Get get) const {
  if (Sorted(o)) return true;
  const auto here = get(p);
  bool ok = here.has_value();
  if (ok && p > 0) {
    const auto before = get(p - 1);
    ok = before.has_value() && *before < *here;
  }
  if (ok && p + 1 < count) {
    const auto after = get(p + 1);
    ok = after.has_value() && *here < *after;
  }
  if (!ok) Fail(Corrupt(kOrderNames[o], "not sorted at position " + std::to_string(p)));
  return ok;
}

// ---- nodes ----

const float* Reader::vector(uint32_t i) const {
  if (layer_) {
    auto [file, x] = layer_->Local(i);
    return file->vector(x);
  }
  uint64_t off = DecodeFixed64(node_ptr(i) + NodeEntry::kVectorOffsetOffset);
  if (off == kNone) return nullptr;
  const float* v = rep_->vectors + static_cast<size_t>(i) * dimension_;
  return rep_->Pages(v, sizeof(float) * dimension_) ? v : nullptr;
}

void Reader::vectors(uint32_t first, uint32_t count, const float** out) const {
  assert(uint64_t{first} + count <= node_count_);
  if (count == 0) return;
  bool checked = !layer_;
  if (checked && Pending(kUncheckedNodes)) {
    const int shift = Rep::kChunkShift[Rep::kNodes];
    for (uint32_t c = first >> shift; checked && c <= (first + count - 1) >> shift; ++c) {
      checked = rep_->Chunk(this, Rep::kNodes, c << shift);
    }
  }
  if (checked && !rep_->vectors) {  // a checked record then has no vector
    std::fill(out, out + count, nullptr);
    return;
  }
  const float* v = checked ? rep_->vectors + static_cast<size_t>(first) * dimension_ : nullptr;
  // One span for the range's vectors: a damaged page in it is reported even when
  // only nodes without vectors own it (the whole check reports it too).
  if (checked && !rep_->Pages(v, sizeof(float) * dimension_ * size_t{count})) checked = false;
  if (!checked) {  // a layered view, or damage somewhere in the range: node by node
    for (uint32_t k = 0; k < count; ++k) out[k] = vector(first + k);
    return;
  }
  const char* rec = base_ + Header::kEncodedLength + static_cast<size_t>(first) * NodeEntry::kEncodedLength +
                    NodeEntry::kVectorOffsetOffset;
  for (uint32_t k = 0; k < count; ++k, rec += NodeEntry::kEncodedLength, v += dimension_) {
    out[k] = DecodeFixed64(rec) == kNone ? nullptr : v;
  }
}

bool Reader::embedding(uint32_t i, std::span<const uint32_t>* entries) const {
  if (layer_) {
    auto [file, x] = layer_->Local(i);
    return file->embedding(x, entries);
  }
  const Rep& rep = *rep_;
  if (!rep.embed_offsets || !rep.Pages(rep.embed_offsets + 4 * size_t{i}, 8)) return false;
  const uint32_t begin = DecodeFixed32(rep.embed_offsets + 4 * size_t{i});
  const uint32_t end = DecodeFixed32(rep.embed_offsets + 4 * (size_t{i} + 1));
  if (begin > end || end > rep.embed_entry_count || (i == 0 && begin != 0) ||
      (i + 1 == node_count_ && end != rep.embed_entry_count)) {
    rep.Fail(Corrupt("embeddings", "offsets of node " + std::to_string(i) + " out of range"));
    return false;
  }
  if (rep.embed_overflow_count > 0) {
    const uint32_t* over = reinterpret_cast<const uint32_t*>(rep.embed_overflow);
    if (std::binary_search(over, over + rep.embed_overflow_count, i)) {
      if (begin != end) rep.Fail(Corrupt("embeddings", "overflow node " + std::to_string(i) + " has entries"));
      return false;
    }
  }
  if (!rep.Pages(rep.embed_entries + begin, 4 * uint64_t{end - begin})) return false;
  *entries = std::span<const uint32_t>(rep.embed_entries + begin, end - begin);
  return true;
}

void Reader::embeddings(uint32_t first, uint32_t count, std::optional<std::span<const uint32_t>>* out) const {
  assert(uint64_t{first} + count <= node_count_);
  if (count == 0) return;
  const auto one_by_one = [&] {  // a layered view, or damage somewhere in the range
    std::span<const uint32_t> entries;
    for (uint32_t k = 0; k < count; ++k) {
      out[k] = embedding(first + k, &entries) ? std::optional(entries) : std::nullopt;
    }
  };
  const Rep& rep = *rep_;
  if (layer_ || !rep.embed_offsets || !rep.Pages(rep.embed_offsets + 4 * size_t{first}, 4 * (size_t{count} + 1))) {
    return one_by_one();
  }
  const char* offsets = rep.embed_offsets + 4 * size_t{first};
  const uint32_t lo = DecodeFixed32(offsets), hi = DecodeFixed32(offsets + 4 * size_t{count});
  if ((first == 0 && lo != 0) || hi > rep.embed_entry_count ||
      (first + count == node_count_ && hi != rep.embed_entry_count) || lo > hi ||
      !rep.Pages(rep.embed_entries + lo, 4 * uint64_t{hi - lo})) {
    return one_by_one();
  }
  const uint32_t* over = reinterpret_cast<const uint32_t*>(rep.embed_overflow);
  const uint32_t* over_end = over + rep.embed_overflow_count;
  over = rep.embed_overflow_count > 0 ? std::lower_bound(over, over_end, first) : over_end;
  uint32_t begin = lo;
  for (uint32_t k = 0; k < count; ++k) {
    const uint32_t end = DecodeFixed32(offsets + 4 * (size_t{k} + 1));
    const bool overflow = over != over_end && *over == first + k;
    if (begin > end || (overflow && begin != end)) return one_by_one();
    if (overflow) {
      out[k] = std::nullopt;
      ++over;
    } else {
      out[k] = std::span<const uint32_t>(rep.embed_entries + begin, end - begin);
    }
    begin = end;
  }
}

const char* Reader::Rep::NodeAttrs(uint32_t i) const {
  static constexpr char kBlank[NodeAttrsEntry::kEncodedLength] = {};
  const char* p = node_attrs + NodeAttrsEntry::kEncodedLength * size_t{i};
  return Pages(p, NodeAttrsEntry::kEncodedLength) ? p : kBlank;
}

const char* Reader::Rep::EdgeAttrs(uint32_t j) const {
  static constexpr char kBlank[EdgeAttrsEntry::kEncodedLength] = {};
  const char* p = edge_attrs + EdgeAttrsEntry::kEncodedLength * size_t{j};
  return Pages(p, EdgeAttrsEntry::kEncodedLength) ? p : kBlank;
}

int64_t Reader::updated_ts(uint32_t i) const {
  if (layer_) {
    auto [file, x] = layer_->Local(i);
    return file->updated_ts(x);
  }
  if (!rep_->node_attrs) return created_ts(i);
  return static_cast<int64_t>(DecodeFixed64(rep_->NodeAttrs(i) + NodeAttrsEntry::kUpdatedTsOffset));
}

uint64_t Reader::id(uint32_t i) const {
  if (layer_) {
    auto [file, x] = layer_->Local(i);
    return file->id(x);
  }
  if (!rep_->ids || !rep_->Pages(rep_->ids + 8 * size_t{i}, 8)) return 0;
  return DecodeFixed64(rep_->ids + 8 * size_t{i});
}

std::string_view Reader::key(uint32_t i) const {
  if (layer_) {
    auto [file, x] = layer_->Local(i);
    return file->key(x);
  }
  if (!rep_->has_ext) return {};
  return rep_->Str(rep_->keys, i, "node keys");
}

std::string_view Reader::scope(uint32_t i) const {
  if (layer_) {
    auto [file, x] = layer_->Local(i);
    return file->scope(x);
  }
  if (!rep_->node_attrs) return {};
  return rep_->Str(rep_->labels, DecodeFixed32(rep_->NodeAttrs(i) + NodeAttrsEntry::kScopeOffset), "labels");
}

std::string_view Reader::task(uint32_t i) const {
  if (layer_) {
    auto [file, x] = layer_->Local(i);
    return file->task(x);
  }
  if (!rep_->node_attrs) return {};
  return rep_->Str(rep_->labels, DecodeFixed32(rep_->NodeAttrs(i) + NodeAttrsEntry::kTaskOffset), "labels");
}

bool Reader::is_stub(uint32_t i) const {
  if (layer_) {
    const uint32_t ref = layer_->Ref(i);
    return IsDeltaRef(ref) ? layer_->delta->is_stub(ref & ~kDeltaNode) : layer_->base->is_stub(ref);
  }
  if (!rep_->node_attrs) return false;
  return (DecodeFixed32(rep_->NodeAttrs(i) + NodeAttrsEntry::kFlagsOffset) & NodeAttrsEntry::kFlagStub) != 0;
}

std::optional<uint32_t> Reader::FindKey(std::string_view k) const {
  if (layer_) {
    if (auto d = layer_->dn().FindKey(k)) return layer_->OfDelta(*d);
    auto b = layer_->base->FindKey(k);
    if (!b || !layer_->BaseKept(*b)) return std::nullopt;
    return layer_->OfBase(*b);
  }
  const uint32_t p = KeyLowerBound(k);
  if (p >= node_count_) return std::nullopt;
  auto i = NodeAtKeyRank(p);
  if (i && key(*i) == k) return i;
  return std::nullopt;
}

std::optional<uint32_t> Reader::NodeAtKeyRank(uint32_t p) const {
  if (!rep_->by_key || p >= node_count_) return std::nullopt;
  // The key at order position q, nullopt when its node number is damaged.
  auto at = [this](uint32_t q) -> std::optional<std::string_view> {
    if (!rep_->Pages(rep_->by_key + 4 * size_t{q}, 4)) return std::nullopt;
    const uint32_t i = DecodeFixed32(rep_->by_key + 4 * size_t{q});
    if (i >= node_count_) return std::nullopt;
    return key(i);
  };
  if (!rep_->Ordered(Rep::kKeyOrder, p, node_count_, at)) return std::nullopt;
  return DecodeFixed32(rep_->by_key + 4 * size_t{p});
}

uint32_t Reader::KeyLowerBound(std::string_view k) const {
  if (layer_ || !rep_->by_key) return node_count_;
  uint32_t lo = 0, hi = node_count_;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    const auto i = NodeAtKeyRank(mid);
    if (!i) return node_count_;  // damaged: recorded in ReadStatus()
    if (key(*i) < k) lo = mid + 1; else hi = mid;
  }
  return lo;
}

bool Reader::has_entity_search() const { return !layer_ && rep_->search_entities != nullptr; }

uint32_t Reader::search_entity_count() const {
  return has_entity_search() ? rep_->search_entity_count : 0;
}

std::optional<SearchEntity> Reader::search_entity(uint32_t k) const {
  if (k >= search_entity_count()) return std::nullopt;
  const Rep& rep = *rep_;
  const char* p = rep.search_entities + EntitySearchBlock::kEntityLength * size_t{k};
  if (!rep.Pages(p, EntitySearchBlock::kEntityLength)) return std::nullopt;
  const SearchEntity e{DecodeFixed32(p), DecodeFixed32(p + 4)};
  auto damaged = [&](const char* what) {
    rep.Fail(Corrupt("entity search", "entity " + std::to_string(k) + " " + what));
    return std::nullopt;
  };
  std::string_view name;
  if (e.node >= node_count_ || is_stub(e.node) || !EntityNameOf(key(e.node), &name)) {
    return damaged("is not a live entity node");
  }
  // Its observations' position is the lower bound of "obs:NAME#" in key order:
  // the key before it is below that, the key at it is not.
  const std::string prefix = ObservationKeyPrefix(name);
  if (e.observations > node_count_) return damaged("has its observations past the keys");
  if (e.observations > 0) {
    auto before = NodeAtKeyRank(e.observations - 1);
    if (!before) return std::nullopt;
    if (!(key(*before) < prefix)) return damaged("has its observations after their keys");
  }
  if (e.observations < node_count_) {
    auto at = NodeAtKeyRank(e.observations);
    if (!at) return std::nullopt;
    if (key(*at) < prefix) return damaged("has its observations before their keys");
  }
  return e;
}

GramList Reader::search_gram(uint32_t gram) const {
  const Rep& rep = *rep_;
  const uint32_t count = rep.search_gram_count;
  auto entry = [&](uint32_t t) { return rep.search_grams + EntitySearchBlock::kGramEntryLength * size_t{t}; };
  // The gram at directory position t, nullopt when its page is damaged.
  auto at = [&](uint32_t t) -> std::optional<uint32_t> {
    if (!rep.Pages(entry(t), 4)) return std::nullopt;
    return DecodeFixed32(entry(t));
  };
  uint32_t lo = 0, hi = count;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (!rep.Ordered(Rep::kGramOrder, mid, count, at)) return {};
    if (*at(mid) < gram) lo = mid + 1; else hi = mid;
  }
  if (lo == count || !rep.Ordered(Rep::kGramOrder, lo, count, at) || *at(lo) != gram) return {};
  if (!rep.Pages(entry(lo), 2 * EntitySearchBlock::kGramEntryLength)) return {};
  const uint32_t n = DecodeFixed32(entry(lo) + 4);
  const uint64_t begin = DecodeFixed64(entry(lo) + 8), end = DecodeFixed64(entry(lo + 1) + 8);
  if (begin > end || end > rep.search_list_bytes || n == 0) {
    rep.Fail(Corrupt("entity search", "gram " + std::to_string(lo) + "'s list out of range"));
    return {};
  }
  const char* bytes = rep.search_lists + begin;
  if (!rep.Pages(bytes, end - begin)) return {};
  return GramList{std::string_view(bytes, end - begin), n};
}

std::optional<std::vector<uint32_t>> Reader::search_odd_labels() const {
  const Rep& rep = *rep_;
  if (layer_ || rep.label_list == nullptr) return std::nullopt;
  if (!rep.Pages(rep.label_list, rep.label_bytes)) return std::nullopt;
  std::vector<uint32_t> out;
  if (!DecodeGramList({std::string_view(rep.label_list, rep.label_bytes), rep.label_count},
                      rep.search_entity_count, &out)) {
    rep.Fail(Corrupt("entity labels", "the list is not ascending entities"));
    return std::nullopt;
  }
  return out;
}

std::vector<uint32_t> Reader::search_postings(const GramList& list) const {
  std::vector<uint32_t> out;
  if (!DecodeGramList(list, rep_->search_entity_count, &out)) {
    rep_->Fail(Corrupt("entity search", "a gram list is not ascending entities"));
    out.clear();
  }
  return out;
}

std::optional<uint32_t> Reader::FindId(uint64_t target) const {
  if (layer_) {
    if (auto d = layer_->dn().FindId(target)) return layer_->OfDelta(*d);
    auto b = layer_->base->FindId(target);
    if (!b || !layer_->BaseKept(*b)) return std::nullopt;
    return layer_->OfBase(*b);
  }
  if (!rep_->by_id) return std::nullopt;
  // The id at order position p, nullopt when its node number is damaged or (until
  // the orders are checked) the id is not its key's.
  auto at = [this](uint32_t p) -> std::optional<uint64_t> {
    if (!rep_->Pages(rep_->by_id + 4 * size_t{p}, 4)) return std::nullopt;
    const uint32_t i = DecodeFixed32(rep_->by_id + 4 * size_t{p});
    if (i >= node_count_) return std::nullopt;
    const uint64_t v = id(i);
    if (!rep_->Sorted(Rep::kIdOrder) && rep_->by_key &&
        v != NodeIdForKey(key(i))) {
      return std::nullopt;
    }
    return v;
  };
  auto probe = [&](uint32_t p) { return rep_->Ordered(Rep::kIdOrder, p, node_count_, at); };
  uint32_t lo = 0, hi = node_count_;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (!probe(mid)) return std::nullopt;
    if (*at(mid) < target) lo = mid + 1; else hi = mid;
  }
  if (lo < node_count_) {
    if (!probe(lo)) return std::nullopt;
    uint32_t i = DecodeFixed32(rep_->by_id + 4 * size_t{lo});
    if (id(i) == target) return i;
  }
  return std::nullopt;
}

// ---- edges ----

std::string_view Reader::edge_payload(uint32_t j) const {
  if (layer_) return layer_->Attrs(j).payload;
  if (!rep_->has_ext) return "{}";
  return rep_->Str(rep_->payloads, j, "edge payloads");
}

int64_t Reader::edge_created_ts(uint32_t j) const {
  if (layer_) return layer_->Attrs(j).created_ts;
  if (!rep_->edge_attrs) return 0;
  return static_cast<int64_t>(DecodeFixed64(rep_->EdgeAttrs(j) + EdgeAttrsEntry::kCreatedTsOffset));
}

int64_t Reader::edge_updated_ts(uint32_t j) const {
  if (layer_) return layer_->Attrs(j).updated_ts;
  if (!rep_->edge_attrs) return 0;
  return static_cast<int64_t>(DecodeFixed64(rep_->EdgeAttrs(j) + EdgeAttrsEntry::kUpdatedTsOffset));
}

std::string_view Reader::edge_run(uint32_t j) const {
  if (layer_) return layer_->Attrs(j).run;
  if (!rep_->edge_attrs) return {};
  return rep_->Str(rep_->runs, DecodeFixed32(rep_->EdgeAttrs(j) + EdgeAttrsEntry::kRunOffset), "runs");
}

std::string_view Reader::edge_task(uint32_t j) const {
  if (layer_) return layer_->Attrs(j).task;
  if (!rep_->edge_attrs) return {};
  return rep_->Str(rep_->labels, DecodeFixed32(rep_->EdgeAttrs(j) + EdgeAttrsEntry::kTaskOffset), "labels");
}

std::pair<uint32_t, uint32_t> Reader::OutEdgesWithRel(uint32_t i, RelationId rel) const {
  uint32_t b = out_begin(i), e = out_end(i);
  uint32_t lo = b, hi = e;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (edge_rel(mid) < rel) lo = mid + 1; else hi = mid;
  }
  uint32_t first = lo;
  hi = e;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (edge_rel(mid) <= rel) lo = mid + 1; else hi = mid;
  }
  return {first, lo};
}

std::pair<uint32_t, uint32_t> Reader::InEdgesWithRel(uint32_t i, RelationId rel) const {
  uint32_t b = in_begin(i), e = in_end(i);
  uint32_t lo = b, hi = e;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (edge_rel(in_edge(mid)) < rel) lo = mid + 1; else hi = mid;
  }
  uint32_t first = lo;
  hi = e;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (edge_rel(in_edge(mid)) <= rel) lo = mid + 1; else hi = mid;
  }
  return {first, lo};
}

std::optional<uint32_t> Reader::FindEdge(uint32_t source, RelationId rel, uint32_t target) const {
  if (source >= node_count_) return std::nullopt;
  auto [lo, hi] = OutEdgesWithRel(source, rel);
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (edge_target(mid) < target) lo = mid + 1; else hi = mid;
  }
  if (lo < out_end(source) && edge_rel(lo) == rel && edge_target(lo) == target) return lo;
  return std::nullopt;
}

// ---- names ----

std::string_view Reader::relation_name(RelationId rel) const {
  if (rel < kBuiltinRelationCount) return BuiltinRelationName(rel);
  if (layer_) return rel < kFirstCustomRelation ? std::string_view() : layer_->delta->relation_name(rel);
  if (!rep_->has_ext) return rep_->spec_relations[rel];
  if (rel < kFirstCustomRelation) return {};
  return rep_->Str(rep_->relation_names, rel, "relation names");
}

std::optional<RelationId> Reader::FindRelation(std::string_view name) const {
  if (auto b = ParseBuiltinRelation(name)) return b;
  if (name.empty()) return std::nullopt;
  for (int r = kBuiltinRelationCount; r <= kMaxRelationId; ++r) {
    if (relation_name(static_cast<RelationId>(r)) == name) return static_cast<RelationId>(r);
  }
  return std::nullopt;
}

std::vector<RelationId> Reader::relations() const {
  std::vector<RelationId> out;
  for (int r = 0; r <= kMaxRelationId; ++r) {
    // A seed-spec file names no relation: list the built-ins and the ids in use.
    bool defined = rep_->has_ext ? !relation_name(static_cast<RelationId>(r)).empty()
                                 : r < kBuiltinRelationCount || rep_->rel_used[r];
    if (defined) out.push_back(static_cast<RelationId>(r));
  }
  return out;
}

std::string_view Reader::type_name(uint8_t type) const {
  if (layer_) return layer_->base->type_name(type);
  if (const char* name = NodeTypeName(static_cast<NodeType>(type))) return name;
  return rep_->type_names.Get(type);
}

// ---- term index ----

bool Reader::Rep::TermEntryOk(uint32_t t) const {
  const char* e = term_entries + size_t{t} * kTermEntryLength;
  if (!Pages(e, 2 * kTermEntryLength)) return false;
  const uint32_t nb = DecodeFixed32(e), ne = DecodeFixed32(e + kTermEntryLength);
  const uint32_t pb = DecodeFixed32(e + 4), pe = DecodeFixed32(e + kTermEntryLength + 4);
  const uint32_t content = DecodeFixed32(e + 8);
  const bool ok = nb <= ne && ne <= term_name_bytes && pb <= pe && pe <= term_postings &&
                  content <= pe - pb;
  if (!ok) Fail(Corrupt("term index", "directory entry " + std::to_string(t) + " out of range"));
  return ok;
}

bool Reader::Rep::CheckTerm(uint32_t t, uint32_t n) const {
  uint8_t state = term_state[t].load(std::memory_order_acquire);
  if (state != 0) return state == 1;
  if (!TermEntryOk(t)) {
    term_state[t].store(2, std::memory_order_release);
    return false;
  }
  const char* e = term_entries + size_t{t} * kTermEntryLength;
  const uint32_t pb = DecodeFixed32(e + 4), pe = DecodeFixed32(e + kTermEntryLength + 4);
  const uint32_t content = DecodeFixed32(e + 8);
  bool ok = true;
  if (!Pages(postings + uint64_t{pb} * kPostingLength, uint64_t{pe - pb} * kPostingLength)) {
    term_state[t].store(2, std::memory_order_release);  // the failure is recorded
    return false;
  }
  for (uint32_t q = pb; q < pe && ok; ++q) {
    const char* pp = postings + uint64_t{q} * kPostingLength;
    uint32_t node = DecodeFixed32(pp);
    uint32_t field = DecodeFixed32(pp + 4) >> 24;
    bool first_of_field = q == pb || q == pb + content;
    ok = node < n && field == (q < pb + content ? 0u : 1u) &&
         (first_of_field || node > DecodeFixed32(pp - kPostingLength));
  }
  // Racing first uses compute the same answer; either store wins.
  term_state[t].store(ok ? 1 : 2, std::memory_order_release);
  if (!ok) {
    Fail(Corrupt("term index", "postings of term " + std::to_string(t) + " out of range or out of order"));
  }
  return ok;
}

std::string_view Reader::term(uint32_t t) const {
  if (layer_) return layer_->Term(t);
  if (!rep_->TermEntryOk(t)) return {};
  const char* e = rep_->term_entries + size_t{t} * kTermEntryLength;
  uint32_t b = DecodeFixed32(e), end = DecodeFixed32(e + kTermEntryLength);
  if (!rep_->Pages(rep_->term_names + b, end - b)) return {};
  return std::string_view(rep_->term_names + b, end - b);
}

std::optional<uint32_t> Reader::TermLowerBound(std::string_view t) const {
  auto at = [this](uint32_t p) -> std::optional<std::string_view> {
    if (!rep_->TermEntryOk(p)) return std::nullopt;
    return term(p);
  };
  auto probe = [&](uint32_t p) { return rep_->Ordered(Rep::kTermOrder, p, term_count_, at); };
  uint32_t lo = 0, hi = term_count_;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (!probe(mid)) return std::nullopt;
    if (term(mid) < t) lo = mid + 1; else hi = mid;
  }
  if (lo < term_count_ && !probe(lo)) return std::nullopt;
  return lo;
}

std::optional<uint32_t> Reader::FindTerm(std::string_view t) const {
  if (layer_) return layer_->FindTerm(t);
  const auto lo = TermLowerBound(t);
  if (lo && *lo < term_count_ && term(*lo) == t) return lo;
  return std::nullopt;
}

bool Reader::HasTermStartingWith(std::string_view prefix) const {
  if (layer_) return layer_->base->HasTermStartingWith(prefix) || layer_->dn().HasTermStartingWith(prefix);
  const auto lo = TermLowerBound(prefix);
  return lo && *lo < term_count_ && term(*lo).starts_with(prefix);
}

bool Reader::HasTermEndingWith(std::string_view suffix) const {
  if (layer_) return layer_->base->HasTermEndingWith(suffix) || layer_->dn().HasTermEndingWith(suffix);
  for (uint32_t t = 0; t < term_count_; ++t) {
    if (term(t).ends_with(suffix)) return true;
  }
  return false;
}

PostingList Reader::postings(uint32_t t) const {
  if (layer_) {
    const auto& p = layer_->Postings(t);
    return PostingList(p.bytes.data(), static_cast<uint32_t>(p.bytes.size() / kPostingLength));
  }
  if (!rep_->CheckTerm(t, node_count_)) return {};
  const char* e = rep_->term_entries + size_t{t} * kTermEntryLength;
  uint32_t b = DecodeFixed32(e + 4), end = DecodeFixed32(e + kTermEntryLength + 4);
  return PostingList(rep_->postings + size_t{b} * kPostingLength, end - b);
}

PostingList Reader::postings(uint32_t t, Field field) const {
  if (layer_) {
    const auto& p = layer_->Postings(t);
    const uint32_t all = static_cast<uint32_t>(p.bytes.size() / kPostingLength);
    if (field == Field::kContent) return PostingList(p.bytes.data(), p.content);
    return PostingList(p.bytes.data() + size_t{p.content} * kPostingLength, all - p.content);
  }
  if (!rep_->CheckTerm(t, node_count_)) return {};
  const char* e = rep_->term_entries + size_t{t} * kTermEntryLength;
  uint32_t b = DecodeFixed32(e + 4), end = DecodeFixed32(e + kTermEntryLength + 4);
  uint32_t content = DecodeFixed32(e + 8);
  if (field == Field::kContent) return PostingList(rep_->postings + size_t{b} * kPostingLength, content);
  return PostingList(rep_->postings + (size_t{b} + content) * kPostingLength, end - b - content);
}

PostingCursor Reader::postings_cursor(uint32_t t, Field field) const {
  if (layer_) return layer_->Cursor(t, field, /*sized=*/true);
  PostingCursor c;
  c.list_ = postings(t, field);
  c.file_ = this;
  c.size_ = c.list_.size();
  c.Load();
  return c;
}

uint32_t Reader::doc_frequency(uint32_t t) const {
  if (layer_) return layer_->Postings(t).content;
  if (!rep_->TermEntryOk(t)) return 0;
  return DecodeFixed32(rep_->term_entries + size_t{t} * kTermEntryLength + 8);
}

// ---- type, session, time, cluster ----

std::vector<uint32_t> Reader::NodesOfType(uint8_t type) const {
  if (layer_) return layer_->NodesOfType(type);
  std::vector<uint32_t> out;
  if (rep_->type_bits) {
    if (Status s = rep_->CheckTypeIndex(this); !s.ok()) {
      rep_->Fail(s);
      return out;
    }
    if (type >= rep_->type_slots) return out;
    const size_t bytes = (size_t{node_count_} + 7) / 8;
    const unsigned char* bits =
        reinterpret_cast<const unsigned char*>(rep_->type_bits) + type * bytes;
    for (size_t k = 0; k < bytes; ++k) {
      for (unsigned b = bits[k]; b != 0; b &= b - 1) {
        uint32_t i = static_cast<uint32_t>(k * 8 + std::countr_zero(b));
        if (i < node_count_) out.push_back(i);
      }
    }
    return out;
  }
  for (uint32_t i = 0; i < node_count_; ++i) {
    if (type_code(i) == type) out.push_back(i);
  }
  return out;
}

uint32_t Reader::type_count(uint8_t type) const {
  return static_cast<uint32_t>(NodesOfType(type).size());
}

SessionRange Reader::session_range(uint32_t s) const {
  if (layer_) return layer_->Session(s);
  const char* e = rep_->sessions + size_t{s} * kSessionEntryLength;
  return {s, DecodeFixed32(e + 4), DecodeFixed32(e + 8)};
}

std::string_view Reader::session_run(uint32_t s) const {
  if (layer_) return layer_->SessionRun(s);
  if (rep_->has_ext) return rep_->Str(rep_->runs, s, "runs");
  return s < rep_->spec_runs.size() ? std::string_view(rep_->spec_runs[s]) : std::string_view();
}

std::optional<uint32_t> Reader::FindSession(std::string_view run) const {
  if (!rep_->has_ext) {
    // Runs are "" for session 0 and decimal numbers otherwise (no leading zero):
    // parsed, not searched, so the cost never follows a declared session count.
    if (run.empty()) return session_count_ > 0 ? std::optional<uint32_t>(0) : std::nullopt;
    if (run.size() > 10 || run[0] == '0') return std::nullopt;
    uint64_t s = 0;
    for (char c : run) {
      if (c < '0' || c > '9') return std::nullopt;
      s = s * 10 + static_cast<uint64_t>(c - '0');
    }
    if (s >= session_count_) return std::nullopt;
    return static_cast<uint32_t>(s);
  }
  auto found = SessionLowerBound(run);
  if (found && *found < session_count_ && session_run(*found) == run) return found;
  return std::nullopt;
}

bool Reader::RunsSorted() const {
  // More names than this keep their probes' checks: a one-shot process asking
  // for one run of a million would read them all.
  constexpr uint32_t kCheckWhole = 65536;
  if (layer_ || !rep_->has_ext) return false;
  if (session_count_ > kCheckWhole) return rep_->Sorted(Rep::kRunOrder);  // after CheckIndexes()
  std::call_once(rep_->runs_order_once, [this] {
    // A damaged name reads as "" (and is in ReadStatus()): never above the one
    // before it, so not sorted, and the probes check their neighbours.
    bool ok = true;
    for (uint32_t s = 1; ok && s < session_count_; ++s) ok = session_run(s - 1) < session_run(s);
    if (ok) rep_->MarkSorted(Rep::kRunOrder);
  });
  return rep_->Sorted(Rep::kRunOrder);
}

bool Reader::TermsSorted() const { return !layer_ && rep_->Sorted(Rep::kTermOrder); }

std::optional<uint32_t> Reader::SessionLowerBound(std::string_view run) const {
  uint32_t lo = 0, hi = session_count_;
  auto at = [this](uint32_t p) -> std::optional<std::string_view> { return session_run(p); };
  RunsSorted();  // when the names are few, their order is checked once, whole
  auto probe = [&](uint32_t p) { return rep_->Ordered(Rep::kRunOrder, p, session_count_, at); };
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (!probe(mid)) return std::nullopt;
    if (session_run(mid) < run) lo = mid + 1; else hi = mid;
  }
  if (lo < session_count_ && !probe(lo)) return std::nullopt;
  return lo;
}

uint32_t Reader::TimeLowerBound(int64_t ts) const {
  uint32_t lo = 0, hi = time_count_;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (time_entry(mid).ts < ts) lo = mid + 1; else hi = mid;
  }
  return lo;
}

const float* Reader::centroid(uint32_t c) const {
  return reinterpret_cast<const float*>(rep_->centroids) + size_t{c} * dimension_;
}

// ---- kv ----

KvEntry Reader::kv(uint32_t k) const {
  if (layer_) return layer_->Kv(k);
  KvFixedEntry fixed;
  const char* p = rep_->kv_fixed + size_t{k} * KvFixedEntry::kEncodedLength;
  if (rep_->Pages(p, KvFixedEntry::kEncodedLength)) fixed.DecodeFrom(p);
  const StringListView& s = rep_->kv_strings;
  KvEntry e;
  e.ts = fixed.ts;
  e.scope = rep_->Str(s, 4 * k, "kv");
  e.ns = rep_->Str(s, 4 * k + 1, "kv");
  e.key = rep_->Str(s, 4 * k + 2, "kv");
  e.value = rep_->Str(s, 4 * k + 3, "kv");
  e.run = rep_->Str(rep_->runs, fixed.run, "runs");
  e.task = rep_->Str(rep_->labels, fixed.task, "labels");
  return e;
}

std::optional<uint32_t> Reader::FindKv(std::string_view scope, std::string_view ns,
                                       std::string_view key) const {
  if (layer_) return layer_->FindKv(scope, ns, key);
  const auto want = std::make_tuple(scope, ns, key);
  auto at = [this](uint32_t p) -> std::optional<std::tuple<std::string_view, std::string_view, std::string_view>> {
    const KvEntry e = kv(p);
    return std::make_tuple(e.scope, e.ns, e.key);
  };
  uint32_t lo = 0, hi = kv_count_;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (!rep_->Ordered(Rep::kKvOrder, mid, kv_count_, at)) return std::nullopt;
    KvEntry e = kv(mid);
    if (std::make_tuple(e.scope, e.ns, e.key) < want) lo = mid + 1; else hi = mid;
  }
  if (lo < kv_count_ && rep_->Ordered(Rep::kKvOrder, lo, kv_count_, at)) {
    KvEntry e = kv(lo);
    if (std::make_tuple(e.scope, e.ns, e.key) == want) return lo;
  }
  return std::nullopt;
}

}  // namespace amem::snapshot
