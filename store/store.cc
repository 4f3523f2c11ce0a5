// Store: open, view resolution and the read API (docs/STORE.md).
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <mutex>

#include "common/clock.h"
#include "common/coding.h"
#include "common/hash.h"
#include "store/internal/store_rep.h"

namespace amem {

using namespace store_internal;

namespace store_internal {

uint64_t GetMetaU64(MDB_txn* txn, const Dbs& dbs, std::string_view key, uint64_t dflt) {
  std::string_view v;
  if (!Get(txn, dbs.meta, key, &v) || v.size() != 8) return dflt;
  return DecodeBig64(v.data());
}

void PutMetaU64(MDB_txn* txn, const Dbs& dbs, std::string_view key, uint64_t v) {
  char buf[8];
  EncodeBig64(buf, v);
  Put(txn, dbs.meta, key, std::string_view(buf, 8));
}

std::string HistoryGoneText(MDB_txn* txn, const Dbs& dbs) {
  const uint64_t floor = GetMetaU64(txn, dbs, kMetaFloor, 0);
  const uint64_t base = GetMetaU64(txn, dbs, kMetaBase, 0);
  if (base > 0 && base == floor) {
    return "the store was imported from a snapshot of revision " + std::to_string(base) +
           "; history before it is not in this store";
  }
  return "history before revision " + std::to_string(floor) + " was compacted";
}

Status CheckHistorySince(MDB_txn* txn, const Dbs& dbs, uint64_t since, const std::string& what) {
  const uint64_t floor = GetMetaU64(txn, dbs, kMetaFloor, 0);
  const uint64_t base = GetMetaU64(txn, dbs, kMetaBase, 0);
  // An imported store's base revision has no changes of its own (§4.5).
  const uint64_t first = base > 0 && base == floor ? base + 1 : floor;
  if (first == 0 || since + 1 >= first) return Status::OK();
  return Status::InvalidArgument(HistoryGoneText(txn, dbs) + "; " + what);
}

Status DecodeLogValue(MDB_txn* txn, const Dbs& dbs, uint64_t rev, std::string_view value,
                      int64_t* ts, std::vector<std::string>* names,
                      const std::function<Status(const LogEntry&, const std::string&)>& fn) {
  const std::string where = "revision " + std::to_string(rev);
  uint64_t commit_ts = 0;
  uint32_t count = 0;
  if (!GetFixed64(&value, &commit_ts) || !GetVarint32(&value, &count)) {
    return Status::Corruption("log value of " + where);
  }
  *ts = static_cast<int64_t>(commit_ts);
  names->resize(kMaxRelationId + 1);
  const std::string none;
  std::string by_name;  // format 1: the entry names its relation
  LogEntry e, prev;
  for (uint32_t i = 0; i < count; ++i) {
    AMEM_RETURN_IF_ERROR(e.DecodeFrom(&value, i == 0 ? nullptr : &prev).WithContext(where));
    prev = e;
    const std::string* rel_name = &none;
    if (e.kind == static_cast<uint8_t>(Change::Kind::kPutEdge) ||
        e.kind == static_cast<uint8_t>(Change::Kind::kDeleteEdge)) {
      if (!(e.flags & kLogRelationId)) {
        by_name.assign(e.rel_name());
        rel_name = &by_name;
      } else {
        std::string& name = (*names)[e.rel];
        if (name.empty()) {
          auto found = RelationNameTxn(txn, dbs, e.rel);
          if (!found.ok()) return found.status().WithContext(where);
          name = std::move(found).value();
        }
        rel_name = &name;
      }
    }
    AMEM_RETURN_IF_ERROR(fn(e, *rel_name));
  }
  if (!value.empty()) return Status::Corruption("log value of " + where);
  return Status::OK();
}

Status VersionAt(MDB_txn* txn, const Dbs& dbs, MDB_dbi main, char tag,
                 std::string_view entity, const At& at, std::string_view* value,
                 bool* found) {
  *found = false;
  uint64_t rev = 0;
  bool tombstone = false;
  if (Get(txn, main, entity, value)) {
    if (!PeekRev(*value, &rev, &tombstone)) return Status::Corruption("record header");
    if (at.Sees(rev)) {
      *found = true;
      return Status::OK();
    }
  }
  if (at.latest) return Status::OK();
  // The first version superseded after at.rev was the one live at at.rev, if it
  // had been written by then.
  std::string seek = HistKey(tag, entity, at.rev + 1);
  Cursor c(txn, dbs.hist);
  if (!c.SeekRange(seek)) return Status::OK();
  std::string_view k = c.key();
  if (k.size() != seek.size() || k.substr(0, seek.size() - kRevSuffixSize) !=
                                     std::string_view(seek).substr(0, seek.size() - kRevSuffixSize)) {
    return Status::OK();
  }
  if (!PeekRev(c.value(), &rev, &tombstone)) return Status::Corruption("hist record header");
  if (rev <= at.rev) {
    *value = c.value();
    *found = true;
  }
  return Status::OK();
}

Status UnknownRelation(std::string_view name) {
  return Status::InvalidArgument(
      "unknown relation '" + std::string(name) +
      "': use a built-in relation or define it first (amem def-rel NAME, an ingest line "
      "{\"op\":\"rel\",\"name\":NAME}, or Batch::DefineRelation)");
}

Result<RelationId> LookupRelationTxn(MDB_txn* txn, const Dbs& dbs, std::string_view name) {
  if (auto id = ParseBuiltinRelation(name)) return *id;
  if (!name.empty() && name[0] >= '0' && name[0] <= '9') {
    unsigned v = 0;
    auto [p, ec] = std::from_chars(name.data(), name.data() + name.size(), v);
    if (ec != std::errc() || p != name.data() + name.size() || v > kMaxRelationId) {
      return UnknownRelation(name);
    }
    auto id = static_cast<RelationId>(v);
    if (BuiltinRelationName(id)) return id;
    std::string key(kMetaRelationById);
    key.push_back(static_cast<char>(id));
    std::string_view stored;
    if (v >= kFirstCustomRelation && Get(txn, dbs.meta, key, &stored)) return id;
    return UnknownRelation(name);
  }
  std::string key(kMetaRelationByName);
  key.append(name);
  std::string_view stored;
  if (!Get(txn, dbs.meta, key, &stored)) return UnknownRelation(name);
  if (stored.size() != 1) return Status::Corruption("relation table entry for " + key);
  return static_cast<RelationId>(stored[0]);
}

Result<std::string> RelationNameTxn(MDB_txn* txn, const Dbs& dbs, RelationId id) {
  if (const char* name = BuiltinRelationName(id)) return std::string(name);
  std::string key(kMetaRelationById);
  key.push_back(static_cast<char>(id));
  std::string_view stored;
  if (!Get(txn, dbs.meta, key, &stored)) {
    return Status::Corruption("an edge uses relation id " + std::to_string(id) +
                              ", which the relation table lacks");
  }
  return std::string(stored);
}

Status LoadRelations(MDB_txn* txn, const Dbs& dbs, const At& at,
                     std::vector<std::pair<RelationId, std::string>>* out) {
  out->clear();
  for (int i = 0; i < kBuiltinRelationCount; ++i) {
    out->emplace_back(static_cast<RelationId>(i), BuiltinRelationName(static_cast<RelationId>(i)));
  }
  Cursor c(txn, dbs.meta);
  for (bool ok = c.SeekRange(kMetaRelationById);
       ok && c.key().substr(0, kMetaRelationById.size()) == kMetaRelationById; ok = c.Next()) {
    if (c.key().size() != kMetaRelationById.size() + 1) {
      return Status::Corruption("relation table key");
    }
    out->emplace_back(static_cast<RelationId>(c.key().back()), std::string(c.value()));
  }
  if (at.latest) return Status::OK();
  // meta holds only the current table (ids never change once defined). A past
  // view drops the relations whose define_relation entry is logged after at.rev;
  // compaction keeps every log value at or after the floor, and at.rev >= floor.
  std::vector<std::string> later;
  Cursor log(txn, dbs.log);
  for (bool ok = log.SeekRange(RevKey(at.rev + 1)); ok; ok = log.Next()) {
    std::string_view in = log.value();
    uint64_t ts = 0;
    uint32_t count = 0;
    if (!GetFixed64(&in, &ts) || !GetVarint32(&in, &count)) {
      return Status::Corruption("log value after revision " + std::to_string(at.rev));
    }
    LogEntry e, prev;
    for (uint32_t i = 0; i < count; ++i) {
      AMEM_RETURN_IF_ERROR(e.DecodeFrom(&in, i == 0 ? nullptr : &prev).WithContext("log"));
      if (e.kind == static_cast<uint8_t>(Change::Kind::kDefineRelation)) later.emplace_back(e.relation_name());
      prev = e;
    }
  }
  if (later.empty()) return Status::OK();
  std::erase_if(*out, [&](const auto& rel) {
    return rel.first >= kFirstCustomRelation &&
           std::find(later.begin(), later.end(), rel.second) != later.end();
  });
  return Status::OK();
}

NodeView ToNodeView(uint64_t id, const NodeValue& v) {
  return {id,   v.key,   v.type,       v.content,    v.meta, v.confidence, v.scope,
          v.run, v.task, v.created_ts, v.updated_ts, v.rev,  v.vector_bytes};
}

EdgeView ToEdgeView(uint64_t src, RelationId rel, uint64_t dst, std::string_view rel_name,
                    const EdgeValue& v) {
  return {src,       dst,   v.src_key, v.dst_key,    rel,          rel_name, v.weight,
          v.payload, v.run, v.task,    v.created_ts, v.updated_ts, v.rev};
}

NodeRecord ToNodeRecord(const NodeView& v) {
  NodeRecord r;
  r.id = v.id;
  r.key = v.key;
  r.type = v.type;
  r.content = v.content;
  r.meta = v.meta;
  r.confidence = v.confidence;
  r.scope = v.scope;
  r.run = v.run;
  r.task = v.task;
  r.created_ts = v.created_ts;
  r.updated_ts = v.updated_ts;
  r.rev = v.rev;
  r.vector.resize(v.vector_bytes.size() / 4);
  for (size_t i = 0; i < r.vector.size(); ++i) r.vector[i] = DecodeFloat(v.vector_bytes.data() + 4 * i);
  return r;
}

EdgeRecord ToEdgeRecord(const EdgeView& v) {
  EdgeRecord r;
  r.src = v.src;
  r.dst = v.dst;
  r.rel = v.rel;
  r.src_key = v.src_key;
  r.dst_key = v.dst_key;
  r.rel_name = v.rel_name;
  r.weight = v.weight;
  r.payload = v.payload;
  r.run = v.run;
  r.task = v.task;
  r.created_ts = v.created_ts;
  r.updated_ts = v.updated_ts;
  r.rev = v.rev;
  return r;
}

KvRecord ToKvRecord(const KvView& v) {
  KvRecord r;
  r.scope = v.scope;
  r.ns = v.ns;
  r.key = v.key;
  r.value = v.value;
  r.run = v.run;
  r.task = v.task;
  r.ts = v.ts;
  r.rev = v.rev;
  return r;
}

NodeRecord ToNodeRecord(uint64_t id, const NodeValue& v) { return ToNodeRecord(ToNodeView(id, v)); }

EdgeRecord ToEdgeRecord(std::string_view edge_key, std::string rel_name, const EdgeValue& v) {
  uint64_t src = 0, dst = 0;
  RelationId rel = 0;
  DecodeEdgeKey(edge_key, &src, &rel, &dst);
  EdgeRecord r = ToEdgeRecord(ToEdgeView(src, rel, dst, {}, v));
  r.rel_name = std::move(rel_name);
  return r;
}

KvRecord ToKvRecord(std::string_view kv_key, const KvValue& v) {
  KvView view{{}, {}, {}, v.value, v.run, v.task, v.ts, v.rev};
  SplitKvKey(kv_key, &view.scope, &view.ns, &view.key);
  KvRecord r = ToKvRecord(view);
  r.deleted = v.tombstone;
  return r;
}

}  // namespace store_internal

EdgeView DecodeEdgeRef(const EdgeRef& ref) {
  EdgeValue v;
  // Checked by VisitState when it made the ref.
  (void)v.DecodeFrom(std::string_view(ref.value, ref.value_size));
  EdgeView e = ToEdgeView(0, ref.rel, 0, {}, v);
  e.src_node = ref.src_node;
  e.dst_node = ref.dst_node;
  return e;
}

uint32_t StoreFormatVersion() { return kStoreFormatVersion; }
uint32_t OldestReadableStoreFormat() { return kOldestReadableStoreFormat; }

namespace {
constexpr size_t kDefaultMapSize = size_t{1} << 30;
constexpr unsigned kMaxDbs = 16;

struct DbSpec {
  const char* name;
  MDB_dbi Dbs::*field;
  unsigned flags;
};
constexpr DbSpec kDbSpecs[] = {
    {"n", &Dbs::n, 0},
    {"e", &Dbs::e, 0},
    {"out", &Dbs::out, MDB_DUPSORT | MDB_DUPFIXED},
    {"in", &Dbs::in, MDB_DUPSORT | MDB_DUPFIXED},
    {"out_dead", &Dbs::out_dead, MDB_DUPSORT | MDB_DUPFIXED},
    {"in_dead", &Dbs::in_dead, MDB_DUPSORT | MDB_DUPFIXED},
    {"kv", &Dbs::kv, 0},
    {"hist", &Dbs::hist, 0},
    {"meta", &Dbs::meta, 0},
    {"log", &Dbs::log, 0},
    {"time", &Dbs::time, 0},
};

// Opens every database; false (without error) if one is missing and !create.
bool OpenDbs(MDB_txn* txn, Dbs* dbs, bool create) {
  for (const DbSpec& spec : kDbSpecs) {
    MDB_dbi dbi = 0;
    int rc = ::mdb_dbi_open(txn, spec.name, spec.flags | (create ? MDB_CREATE : 0), &dbi);
    if (rc == MDB_NOTFOUND && !create) return false;
    if (rc != MDB_SUCCESS) lmdb::error::raise("mdb_dbi_open", rc);
    dbs->*spec.field = dbi;
  }
  return true;
}
}  // namespace

namespace store_internal {
bool EnvSize(MDB_env* env, uint64_t* used, uint64_t* map_size) {
  MDB_envinfo info;
  MDB_stat stat;
  if (::mdb_env_info(env, &info) != MDB_SUCCESS || ::mdb_env_stat(env, &stat) != MDB_SUCCESS) {
    return false;
  }
  *used = (uint64_t{info.me_last_pgno} + 1) * stat.ms_psize;
  *map_size = info.me_mapsize;
  return true;
}

Status ReserveDisk(SharedEnv* shared, uint64_t hint) {
  MDB_env* env = shared->env.handle();
  uint64_t used = 0, map_size = 0;
  mdb_filehandle_t fd;
  if (!EnvSize(env, &used, &map_size) || ::mdb_env_get_fd(env, &fd) != MDB_SUCCESS) {
    return Status::IOError("store: cannot read the environment's size");
  }
  constexpr uint64_t kMinHeadroom = uint64_t{4} << 20;
  const uint64_t want = std::min<uint64_t>(map_size,
                                           used + hint + std::max(kMinHeadroom, used / 4));
  uint64_t have = shared->reserved.load(std::memory_order_acquire);
  if (want <= have) return Status::OK();
  // Ahead by another headroom when the disk has it, so that the next commits find
  // it allocated: an allocation per commit would make every durable commit sync
  // the file's metadata (extents, size) too.
  uint64_t target =
      std::min<uint64_t>(map_size, want + std::max(kMinHeadroom, used / 4));
  int rc;
  for (;;) {
    do {
      rc = ::posix_fallocate(fd, static_cast<off_t>(have), static_cast<off_t>(target - have));
    } while (rc == EINTR);
    if (rc == 0 || target == want) break;
    target = want;
  }
  if (rc != 0) {
    return Status::IOError("store: cannot allocate " + std::to_string((want - have) >> 20) +
                           " MiB of disk for the write (" + std::strerror(rc) +
                           "); nothing was written");
  }
  while (have < target && !shared->reserved.compare_exchange_weak(have, target)) {
  }
  return Status::OK();
}

bool UnwrittenRanges(int fd, uint64_t from, uint64_t to,
                     std::vector<std::pair<uint64_t, uint64_t>>* ranges) {
  ranges->clear();
  constexpr uint32_t kExtents = 64;
  alignas(fiemap) char buf[sizeof(fiemap) + kExtents * sizeof(fiemap_extent)];
  auto* map = reinterpret_cast<fiemap*>(buf);
  uint64_t at = from;  // everything before `at` is accounted for
  while (at < to) {
    std::memset(buf, 0, sizeof(buf));
    map->fm_start = at;
    map->fm_length = to - at;
    map->fm_extent_count = kExtents;
    if (::ioctl(fd, FS_IOC_FIEMAP, map) != 0) return false;
    if (map->fm_mapped_extents == 0) break;  // a hole to the end
    bool last = false;
    const uint64_t before = at;
    for (uint32_t i = 0; i < map->fm_mapped_extents && at < to; ++i) {
      const fiemap_extent& e = map->fm_extents[i];
      // Clamped to [at, to]: an extent outside it adds nothing.
      const uint64_t lo = std::clamp<uint64_t>(e.fe_logical, at, to);
      const uint64_t hi = std::clamp<uint64_t>(e.fe_logical + e.fe_length, lo, to);
      if (lo > at) ranges->emplace_back(at, lo);  // a hole
      if (hi > lo && (e.fe_flags & FIEMAP_EXTENT_UNWRITTEN) &&
          !(e.fe_flags & FIEMAP_EXTENT_DELALLOC)) {
        ranges->emplace_back(lo, hi);
      }
      at = std::max(at, hi);
      last = last || (e.fe_flags & FIEMAP_EXTENT_LAST);
    }
    if (last) break;
    if (at == before) return false;  // no progress: a filesystem's answer not understood
  }
  if (at < to) ranges->emplace_back(at, to);
  // Adjacent ranges as one.
  size_t out = 0;
  for (size_t i = 0; i < ranges->size(); ++i) {
    if (out > 0 && (*ranges)[out - 1].second == (*ranges)[i].first) {
      (*ranges)[out - 1].second = (*ranges)[i].second;
    } else {
      (*ranges)[out++] = (*ranges)[i];
    }
  }
  ranges->resize(out);
  return true;
}

bool ZeroAheadFilesystem(int fd) {
  struct statfs fs;
  if (::fstatfs(fd, &fs) != 0) return false;
  constexpr decltype(fs.f_type) kExt4 = 0xEF53, kXfs = 0x58465342;
  return fs.f_type == kExt4 || fs.f_type == kXfs;
}

void ZeroAhead(SharedEnv* shared) {
  if (shared->zero_ahead_off.load(std::memory_order_relaxed)) return;
  MDB_env* env = shared->env.handle();
  unsigned env_flags = 0;
  uint64_t used = 0, map_size = 0;
  mdb_filehandle_t lmdb_fd;
  if (::mdb_env_get_flags(env, &env_flags) != MDB_SUCCESS ||
      (env_flags & (MDB_NOSYNC | MDB_WRITEMAP)) || !EnvSize(env, &used, &map_size) ||
      ::mdb_env_get_fd(env, &lmdb_fd) != MDB_SUCCESS) {
    return;
  }
  const uint64_t zeroed = shared->zeroed.load(std::memory_order_acquire);
  if (zeroed >= used + kZeroAheadLow) return;
  constexpr uint64_t kBlock = 4096;
  const uint64_t from = std::max(zeroed, used);
  const uint64_t to = std::min({used + kZeroAhead, map_size,
                                shared->reserved.load(std::memory_order_acquire)}) &
                      ~(kBlock - 1);
  if (to <= from || from % kBlock != 0) return;
  // Any failure turns it off for this process: a filesystem that cannot do it
  // would otherwise pay for the try on every commit.
  auto off = [shared] { shared->zero_ahead_off.store(true, std::memory_order_relaxed); };
  if (!ZeroAheadFilesystem(lmdb_fd)) return off();
  // Straight to the disk (O_DIRECT): through the page cache the zeros would be
  // pages the next fdatasync writes, in folios as large as the write, which the
  // commits' 4 KiB writes then land in. The file LMDB has open, whatever its
  // path is now; only where the filesystem says the blocks were never written
  // (an earlier process may have written them).
  const int fd = ::open(("/proc/self/fd/" + std::to_string(lmdb_fd)).c_str(),
                        O_WRONLY | O_DIRECT | O_CLOEXEC);
  if (fd < 0) return off();
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  bool ok = UnwrittenRanges(fd, from, to, &ranges);
  constexpr uint64_t kChunk = uint64_t{256} << 10;
  static void* const zeros = [] {
    void* p = std::aligned_alloc(kBlock, kChunk);
    if (p != nullptr) std::memset(p, 0, kChunk);
    return p;
  }();
  ok = ok && zeros != nullptr;
  for (const auto& [lo, hi] : ranges) {
    for (uint64_t at = lo & ~(kBlock - 1); ok && at < hi;) {
      const uint64_t end = std::min<uint64_t>({at + kChunk, (hi + kBlock - 1) & ~(kBlock - 1), to});
      const ssize_t n = ::pwrite(fd, zeros, end - at, static_cast<off_t>(at));
      if (n < 0 && errno == EINTR) continue;
      ok = n > 0 && static_cast<uint64_t>(n) % kBlock == 0;
      if (ok) at += static_cast<uint64_t>(n);
    }
  }
  ::close(fd);
  if (!ok) return off();
  shared->zeroed.store(to, std::memory_order_release);
}
}  // namespace store_internal

StoreStateView ViewOf(const StoreState& state) {
  static_assert(std::endian::native == std::endian::little,
                "vector_bytes are the host floats' bytes");
  StoreStateView v;
  v.dimension = state.dimension;
  v.revision = state.revision;
  v.revision_ts = state.revision_ts;
  v.relations = state.relations;
  v.nodes.reserve(state.nodes.size());
  for (const NodeRecord& n : state.nodes) {
    v.nodes.push_back({n.id, n.key, n.type, n.content, n.meta, n.confidence, n.scope, n.run,
                       n.task, n.created_ts, n.updated_ts, n.rev,
                       std::string_view(reinterpret_cast<const char*>(n.vector.data()),
                                        n.vector.size() * sizeof(float))});
  }
  v.edges.reserve(state.edges.size());
  for (const EdgeRecord& e : state.edges) {
    v.edges.push_back({e.src, e.dst, e.src_key, e.dst_key, e.rel, e.rel_name, e.weight, e.payload,
                       e.run, e.task, e.created_ts, e.updated_ts, e.rev});
  }
  v.kv.reserve(state.kv.size());
  for (const KvRecord& kv : state.kv) {
    v.kv.push_back({kv.scope, kv.ns, kv.key, kv.value, kv.run, kv.task, kv.ts, kv.rev});
  }
  return v;
}

// Settles the size to map so as to hold `want` bytes, in *size, and returns 0
// when that map can be had, else the errno that says why not. The size is never
// below the data file's length: with MDB_WRITEMAP LMDB truncates the file to the
// map when it maps, and a shorter map would cut off pages another process's
// transaction is writing (or has reserved) past it. Checked here: address space
// for it and, with MDB_WRITEMAP, a file that long (LMDB extends the file to the
// map), because mdb_env_set_mapsize unmaps first, and a failed mmap or
// ftruncate there would leave the environment without a map.
static int SizeToMap(MDB_env* env, uint64_t want, uint64_t* size) {
  mdb_filehandle_t fd;
  struct stat st;
  unsigned flags = 0;
  if (::mdb_env_get_fd(env, &fd) != MDB_SUCCESS || ::fstat(fd, &st) != 0 ||
      ::mdb_env_get_flags(env, &flags) != MDB_SUCCESS) {
    return EBADF;
  }
  const uint64_t length = static_cast<uint64_t>(st.st_size);
  *size = std::max(want, length);
  void* p = ::mmap(nullptr, *size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) return errno;
  ::munmap(p, *size);
  if (!(flags & MDB_WRITEMAP) || length >= *size) return 0;
  return ::ftruncate(fd, static_cast<off_t>(*size)) == 0 ? 0 : errno;
}

Status Store::Rep::Remap(Retry why) const {
  std::unique_lock lock(shared->resize_mu);
  try {
    if (why == Retry::kAdopt) {
      // Another process grew the map: LMDB maps the size its meta page now
      // records, which is at least the data file's length (with MDB_WRITEMAP, as
      // amem ingest writes, exactly that). It unmaps before it maps again, so a
      // size this process cannot map is refused here, keeping the old map.
      uint64_t size = 0;
      if (int err = SizeToMap(env(), 0, &size); err != 0) {
        return Status::IOError("store: cannot map the store at the " + std::to_string(size >> 20) +
                               " MiB another process grew it to (" + std::strerror(err) + ")");
      }
      lmdb::env_set_mapsize(env(), 0);
    } else {
      uint64_t used = 0, map_size = 0;
      if (!EnvSize(env(), &used, &map_size)) {
        return Status::IOError("store: cannot read the environment's size");
      }
      uint64_t size = 0;
      if (int err = SizeToMap(env(), 2 * map_size, &size); err != 0) {
        return Status::IOError("store: cannot grow the map to " + std::to_string(size >> 20) +
                               " MiB (" + std::strerror(err) + "); nothing was written");
      }
      lmdb::env_set_mapsize(env(), size);
    }
  } catch (const lmdb::error& e) {
    return FromLmdb(e);
  }
  return Status::OK();
}

Status Store::ReserveMap(uint64_t bytes) const { return rep_->GrowMapFor(bytes); }

Status Store::Rep::GrowMapFor(uint64_t bytes) const {
  // The size wanted, in whole steps of the current map (0: it fits). Under the
  // shared lock first: a write that fits takes no exclusive lock.
  auto size_wanted = [&]() -> uint64_t {
    uint64_t used = 0, map_size = 0;
    if (!EnvSize(env(), &used, &map_size) || map_size == 0) return 0;
    const uint64_t need = used + std::min<uint64_t>(bytes, uint64_t{1} << 50);
    return need <= map_size ? 0 : (need + map_size - 1) / map_size * map_size;
  };
  {
    std::shared_lock lock(shared->resize_mu);
    if (size_wanted() == 0) return Status::OK();
  }
  std::unique_lock lock(shared->resize_mu);
  const uint64_t wanted = size_wanted();
  uint64_t size = 0;
  if (wanted == 0 || SizeToMap(env(), wanted, &size) != 0) {
    return Status::OK();  // advisory: a full map reruns
  }
  try {
    lmdb::env_set_mapsize(env(), size);
  } catch (const lmdb::error& e) {
    return FromLmdb(e);
  }
  return Status::OK();
}

Status Store::Rep::Resolve(MDB_txn* txn, const ReadView& view, At* at) const {
  uint64_t latest = GetMetaU64(txn, dbs, kMetaRevision, 0);
  uint64_t rev = latest;
  switch (view.kind) {
    case ReadView::Kind::kLatest:
      *at = At{latest, true};
      return Status::OK();
    case ReadView::Kind::kRevision:
      if (view.revision > latest) {
        return Status::InvalidArgument("revision " + std::to_string(view.revision) +
                                       " is after the latest revision " +
                                       std::to_string(latest));
      }
      rev = view.revision;
      break;
    case ReadView::Kind::kTimestamp: {
      rev = 0;
      Cursor c(txn, dbs.time);
      bool ok = view.timestamp == INT64_MAX ? false
                                            : c.SeekRange(TimeKey(view.timestamp + 1, 0));
      ok = ok ? c.Prev() : c.Last();
      if (ok) {
        if (c.key().size() != 16) return Status::Corruption("time index key");
        rev = DecodeTimeKeyRev(c.key());
      }
      break;
    }
  }
  if (rev == latest) {
    *at = At{latest, true};
    return Status::OK();
  }
  uint64_t floor = GetMetaU64(txn, dbs, kMetaFloor, 0);
  if (rev < floor) {
    return Status::InvalidArgument(HistoryGoneText(txn, dbs) + "; revision " +
                                   std::to_string(rev) + " can no longer be read");
  }
  *at = At{rev, false};
  return Status::OK();
}

void Store::Rep::ReadEvent(std::string_view op, uint64_t memory_id, std::string_view type,
                           std::string_view scope, std::string_view run,
                           std::string_view task) const {
  if (!telemetry.enabled()) return;
  std::string line;
  Telemetry::AddEvent(&line, op, memory_id, type, scope, run, task, NowSeconds());
  telemetry.Write(line);
}

namespace {
// LMDB's readers follow the txnid in the lock file, which a commit sets only after
// its meta page is written (and, durable, synced). A writer killed in between has
// committed, yet readers of other processes go on seeing the revision before
// until the next writer, finding the write mutex's owner dead, adopts the newest
// meta page: the batch would appear later, with someone else's write. When the
// newest meta page is ahead of what a reader gets, taking the write lock (and
// letting go at once) makes LMDB adopt it; a live writer in that window finishes
// first. Best effort: a store this process cannot write is read as LMDB gives it.
void AdoptDeadWriterCommit(MDB_env* env) {
  MDB_envinfo info;
  if (::mdb_env_info(env, &info) != MDB_SUCCESS) return;
  MDB_txn* txn = nullptr;
  if (::mdb_txn_begin(env, nullptr, MDB_RDONLY, &txn) != MDB_SUCCESS) return;
  const bool behind = ::mdb_txn_id(txn) < info.me_last_txnid;
  ::mdb_txn_abort(txn);
  if (!behind) return;
  if (::mdb_txn_begin(env, nullptr, 0, &txn) == MDB_SUCCESS) ::mdb_txn_abort(txn);
}

// Opens (creating when allowed) the environment and its databases.
Status OpenEnv(const std::string& dir, const StoreOptions& options, SharedEnv* shared) {
  shared->pid = ::getpid();
  try {
    shared->env = lmdb::env::create();
    MDB_env* env = shared->env.handle();
    lmdb::env_set_max_dbs(env, kMaxDbs);
    // Never a map shorter than the data file: with MDB_WRITEMAP, LMDB truncates
    // the file to the map, which would cut off what another process's
    // transaction is writing past it.
    uint64_t map_size = options.TEST_map_size ? options.TEST_map_size : kDefaultMapSize;
    std::error_code ec;
    const auto file_size = std::filesystem::file_size(std::filesystem::path(dir) / "data.mdb", ec);
    if (!ec) map_size = std::max<uint64_t>(map_size, file_size);
    lmdb::env_set_mapsize(env, map_size);
    // MDB_WRITEMAP (write_map): dirty pages live in the file mapping instead of
    // malloc'd buffers that commit then copies with pwrite; large batches touch
    // half as many fresh pages (the data file is sized to the map, sparsely). But
    // a durable commit then msyncs the whole map, so only bulk writers ask for it.
    // Without durable commits there is no msync, and MDB_WRITEMAP only saves work.
    unsigned flags = MDB_NOTLS | (options.write_map || !options.durable ? MDB_WRITEMAP : 0) |
                     (options.durable ? 0 : MDB_NOSYNC);
    shared->read_only = options.read_only;
    if (shared->read_only) flags = MDB_NOTLS | MDB_RDONLY;
    int rc = ::mdb_env_open(env, dir.c_str(), flags, 0644);
    if ((rc == EROFS || rc == EACCES) && !shared->read_only && options.read_only_if_needed) {
      // A read-only file system or no write permission: reads still work. LMDB
      // asks a failed environment to be closed, so a fresh one opens read-only.
      shared->read_only = true;
      shared->env = lmdb::env::create();
      env = shared->env.handle();
      lmdb::env_set_max_dbs(env, kMaxDbs);
      lmdb::env_set_mapsize(env, map_size);
      rc = ::mdb_env_open(env, dir.c_str(), MDB_NOTLS | MDB_RDONLY, 0644);
    }
    if (rc != MDB_SUCCESS) lmdb::error::raise("mdb_env_open", rc);
    if (!shared->read_only) AdoptDeadWriterCommit(env);
    bool opened = false;
    {
      auto txn = Txn::Begin(env, MDB_RDONLY);
      opened = OpenDbs(txn.handle(), &shared->dbs, false);
      if (opened) {
        shared->dimension = static_cast<uint32_t>(
            GetMetaU64(txn.handle(), shared->dbs, kMetaDimension, kDefaultDimension));
        uint64_t format = GetMetaU64(txn.handle(), shared->dbs, kMetaFormat, 0);
        if (format < kOldestReadableStoreFormat || format > kStoreFormatVersion) {
          return Status::NotSupported("store format " + std::to_string(format) +
                                      "; this build reads formats " +
                                      std::to_string(kOldestReadableStoreFormat) + " to " +
                                      std::to_string(kStoreFormatVersion));
        }
        txn.commit();
      }
    }
    if (!opened) {
      if (!options.create_if_missing || shared->read_only) return Status::NotFound("no store at " + dir);
      // Another process may be creating it too: whoever commits first writes meta.
      AMEM_RETURN_IF_ERROR(store_internal::ReserveDisk(shared, 0));
      auto txn = Txn::Begin(env, 0);
      OpenDbs(txn.handle(), &shared->dbs, true);
      std::string_view v;
      if (!Get(txn.handle(), shared->dbs.meta, kMetaFormat, &v)) {
        PutMetaU64(txn.handle(), shared->dbs, kMetaFormat, kStoreFormatVersion);
        PutMetaU64(txn.handle(), shared->dbs, kMetaDimension, options.dimension);
        PutMetaU64(txn.handle(), shared->dbs, kMetaRevision, 0);
        PutMetaU64(txn.handle(), shared->dbs, kMetaTombstones, 0);
      }
      shared->dimension = static_cast<uint32_t>(
          GetMetaU64(txn.handle(), shared->dbs, kMetaDimension, options.dimension));
      txn.commit();
    }
  } catch (const lmdb::error& e) {
    return FromLmdb(e).WithContext(dir);
  }
  if (shared->dimension == 0 || shared->dimension > kMaxDimension) {
    return Status::Corruption("store dimension " + std::to_string(shared->dimension));
  }
  return Status::OK();
}
}  // namespace

Store::Store(std::unique_ptr<Rep> rep) : rep_(std::move(rep)) {}
Store::~Store() = default;

Result<std::unique_ptr<Store>> Store::Open(const std::string& dir, const StoreOptions& options) {
  if (options.dimension == 0 || options.dimension > kMaxDimension) {
    return Status::InvalidArgument("dimension must be 1.." + std::to_string(kMaxDimension));
  }
  std::error_code ec;
  const bool create = options.create_if_missing && !options.read_only;
  if (!std::filesystem::is_directory(dir, ec)) {
    if (!create) return Status::NotFound("no store at " + dir);
    std::filesystem::create_directories(dir, ec);
    if (ec) return Status::IOError("cannot create " + dir + ": " + ec.message());
  } else if (!create &&
             !std::filesystem::exists(std::filesystem::path(dir) / "data.mdb", ec)) {
    // Checked before LMDB opens the directory: opening creates data.mdb and lock.mdb.
    return Status::NotFound("no store at " + dir);
  }
  auto rep = std::make_unique<Rep>();
  rep->path = dir;
  rep->options = options;
  rep->telemetry = Telemetry(options.telemetry_path);
  std::string canonical = std::filesystem::weakly_canonical(dir, ec).string();
  if (ec) canonical = dir;

  static std::mutex registry_mu;
  static std::map<std::string, std::weak_ptr<SharedEnv>> registry;
  std::lock_guard registry_lock(registry_mu);
  std::shared_ptr<SharedEnv> shared = registry[canonical].lock();
  if (!shared || shared->pid != ::getpid()) {
    auto fresh = std::make_shared<SharedEnv>();
    AMEM_RETURN_IF_ERROR(OpenEnv(dir, options, fresh.get()));
    registry[canonical] = fresh;
    shared = std::move(fresh);
  }
  rep->shared = shared;
  rep->dbs = shared->dbs;
  rep->dimension = shared->dimension;
  return std::unique_ptr<Store>(new Store(std::move(rep)));
}

uint32_t Store::dimension() const { return rep_->dimension; }
bool Store::read_only() const { return rep_->shared->read_only || rep_->options.read_only; }

Result<uint64_t> Store::RevisionIdentity(uint64_t rev) const {
  uint64_t id = 0;
  AMEM_RETURN_IF_ERROR(rep_->Read([&](MDB_txn* txn) -> Status {
    const uint64_t latest = GetMetaU64(txn, rep_->dbs, kMetaRevision, 0);
    if (rev > latest) {
      return Status::InvalidArgument("revision " + std::to_string(rev) + " is after the latest (" +
                                     std::to_string(latest) + ")");
    }
    if (rev == 0) {
      id = 1;  // the empty state before the first commit is the same in every store
      return Status::OK();
    }
    std::string_view log;
    if (!Get(txn, rep_->dbs.log, RevKey(rev), &log)) {
      return Status::InvalidArgument("the history of revision " + std::to_string(rev) +
                                     " was compacted away");
    }
    if (log.size() < 8) return Status::Corruption("log value of revision " + std::to_string(rev));
    const int64_t ts = static_cast<int64_t>(DecodeFixed64(log.data()));
    std::string_view nonce;
    // The commit's random nonce (§4.6); a revision written before nonces were
    // kept is known by its log value (what it changed, and when).
    if (Get(txn, rep_->dbs.time, TimeKey(ts, rev), &nonce) && nonce.size() == kCommitNonceLength) {
      id = Hash64(nonce.data(), nonce.size(), rev);
    } else {
      id = Hash64(log.data(), log.size(), ~rev);
    }
    if (id == 0) id = 1;
    return Status::OK();
  }));
  return id;
}
const std::string& Store::path() const { return rep_->path; }

Result<uint64_t> Store::revision() const {
  uint64_t rev = 0;
  AMEM_RETURN_IF_ERROR(rep_->Read([&](MDB_txn* txn) {
    rev = GetMetaU64(txn, rep_->dbs, kMetaRevision, 0);
    return Status::OK();
  }));
  return rev;
}

Result<uint64_t> Store::ResolveRevision(const ReadView& view) const {
  At at;
  AMEM_RETURN_IF_ERROR(rep_->Read([&](MDB_txn* txn) { return rep_->Resolve(txn, view, &at); }));
  return at.rev;
}

Result<RelationId> Store::LookupRelation(std::string_view name_or_id) const {
  RelationId id = 0;
  AMEM_RETURN_IF_ERROR(rep_->Read([&](MDB_txn* txn) {
    auto r = LookupRelationTxn(txn, rep_->dbs, name_or_id);
    if (!r.ok()) return r.status();
    id = *r;
    return Status::OK();
  }));
  return id;
}

namespace {
// Reads one node by id at `at`; NotFound if absent or deleted.
Status ReadNode(MDB_txn* txn, const Dbs& dbs, uint64_t id, const At& at, NodeRecord* out) {
  std::string_view value;
  bool found = false;
  std::string key = NodeKey(id);
  AMEM_RETURN_IF_ERROR(VersionAt(txn, dbs, dbs.n, kHistNode, key, at, &value, &found));
  if (!found) return Status::NotFound("node " + FormatHexId(id));
  NodeValue v;
  AMEM_RETURN_IF_ERROR(v.DecodeFrom(value).WithContext("node " + FormatHexId(id)));
  if (v.tombstone) return Status::NotFound("node " + FormatHexId(id) + " is deleted");
  *out = ToNodeRecord(id, v);
  return Status::OK();
}

std::string Quoted(std::string_view s) { return "'" + std::string(s) + "'"; }
}  // namespace

Result<NodeRecord> Store::GetNode(std::string_view key, const ReadView& view) const {
  NodeRecord rec;
  uint64_t id = rep_->HashKey(key);
  AMEM_RETURN_IF_ERROR(rep_->Read([&](MDB_txn* txn) {
    At at;
    AMEM_RETURN_IF_ERROR(rep_->Resolve(txn, view, &at));
    Status s = ReadNode(txn, rep_->dbs, id, at, &rec);
    if (s.ok() && rec.key != key) return Status::NotFound("node " + Quoted(key));
    return s.IsNotFound() ? Status::NotFound("node " + Quoted(key)) : s;
  }));
  rep_->ReadEvent("read", id, NodeTypeName(rec.type), rec.scope, rec.run, rec.task);
  return rec;
}

Result<NodeRecord> Store::GetNodeById(uint64_t id, const ReadView& view) const {
  NodeRecord rec;
  AMEM_RETURN_IF_ERROR(rep_->Read([&](MDB_txn* txn) {
    At at;
    AMEM_RETURN_IF_ERROR(rep_->Resolve(txn, view, &at));
    return ReadNode(txn, rep_->dbs, id, at, &rec);
  }));
  rep_->ReadEvent("read", id, NodeTypeName(rec.type), rec.scope, rec.run, rec.task);
  return rec;
}

Result<NodeRecord> Store::ResolveNode(std::string_view arg, const ReadView& view) const {
  auto by_key = GetNode(arg, view);
  uint64_t id = 0;
  if (by_key.ok() || !by_key.status().IsNotFound() || !ParseHexId(arg, &id)) return by_key;
  return GetNodeById(id, view);
}

Result<EdgeRecord> Store::GetEdge(std::string_view src, std::string_view rel,
                                  std::string_view dst, const ReadView& view) const {
  EdgeRecord rec;
  std::string edge_key;
  AMEM_RETURN_IF_ERROR(rep_->Read([&](MDB_txn* txn) {
    At at;
    AMEM_RETURN_IF_ERROR(rep_->Resolve(txn, view, &at));
    auto rel_id = LookupRelationTxn(txn, rep_->dbs, rel);
    if (!rel_id.ok()) return rel_id.status();
    edge_key = EdgeKey(rep_->HashKey(src), *rel_id, rep_->HashKey(dst));
    std::string_view value;
    bool found = false;
    AMEM_RETURN_IF_ERROR(
        VersionAt(txn, rep_->dbs, rep_->dbs.e, kHistEdge, edge_key, at, &value, &found));
    Status missing = Status::NotFound("edge " + Quoted(src) + " " + std::string(rel) + " " +
                                      Quoted(dst));
    if (!found) return missing;
    EdgeValue v;
    AMEM_RETURN_IF_ERROR(v.DecodeFrom(value));
    if (v.tombstone || v.src_key != src || v.dst_key != dst) return missing;
    auto name = RelationNameTxn(txn, rep_->dbs, *rel_id);
    if (!name.ok()) return name.status();
    rec = ToEdgeRecord(edge_key, std::move(name).value(), v);
    return Status::OK();
  }));
  rep_->ReadEvent("read", Hash64(edge_key), "edge", "", rec.run, rec.task);
  return rec;
}

namespace {
struct AdjTriple {
  RelationId rel;
  uint64_t other;
  bool live_list;  // from out/in (must have an edge record), not from a dead list
  bool operator<(const AdjTriple& o) const {
    return rel != o.rel ? rel < o.rel : other != o.other ? other < o.other : live_list > o.live_list;
  }
};

// The live edges at `at` leaving (outgoing) or entering node `id`.
Status ListAdjacent(MDB_txn* txn, const Dbs& dbs, uint64_t id, std::optional<RelationId> rel,
                    const At& at, bool outgoing, std::vector<EdgeRecord>* out) {
  std::string node_key = NodeKey(id);
  std::vector<AdjTriple> triples;
  auto corrupt = [&](const std::string& what) {
    return Status::Corruption(std::string(outgoing ? "out" : "in") + " adjacency of node " +
                              FormatHexId(id) + ": " + what);
  };
  auto scan = [&](MDB_dbi dbi, size_t entry_size, bool live_list) -> Status {
    Cursor c(txn, dbi);
    bool ok = rel ? c.SeekDupRange(node_key, AdjEntry(*rel, 0)) : c.SeekExact(node_key);
    for (; ok; ok = c.NextDup()) {
      std::string_view v = c.value();
      if (v.size() != entry_size) {
        return corrupt("entry of " + std::to_string(v.size()) + " bytes, expected " +
                       std::to_string(entry_size));
      }
      auto r = static_cast<RelationId>(v[0]);
      if (rel && r != *rel) break;
      if (!live_list && at.Sees(DecodeBig64(v.data() + 9))) continue;  // deleted by then
      triples.push_back({r, DecodeBig64(v.data() + 1), live_list});
    }
    return Status::OK();
  };
  AMEM_RETURN_IF_ERROR(scan(outgoing ? dbs.out : dbs.in, kAdjEntrySize, true));
  if (!at.latest) {
    AMEM_RETURN_IF_ERROR(scan(outgoing ? dbs.out_dead : dbs.in_dead, kDeadAdjEntrySize, false));
    std::sort(triples.begin(), triples.end());
    triples.erase(std::unique(triples.begin(), triples.end(),
                              [](const AdjTriple& a, const AdjTriple& b) {
                                return a.rel == b.rel && a.other == b.other;
                              }),
                  triples.end());
  }
  std::string names[kMaxRelationId + 1];
  for (const AdjTriple& t : triples) {
    std::string edge_key = outgoing ? EdgeKey(id, t.rel, t.other) : EdgeKey(t.other, t.rel, id);
    std::string_view value;
    bool found = false;
    if (t.live_list && !Get(txn, dbs.e, edge_key, &value)) {
      return corrupt("entry (rel " + std::to_string(t.rel) + ", node " + FormatHexId(t.other) +
                     ") points at no edge record");
    }
    AMEM_RETURN_IF_ERROR(VersionAt(txn, dbs, dbs.e, kHistEdge, edge_key, at, &value, &found));
    if (!found) continue;
    EdgeValue v;
    AMEM_RETURN_IF_ERROR(v.DecodeFrom(value).WithContext("edge record"));
    if (v.tombstone) continue;
    if (names[t.rel].empty()) {
      auto name = RelationNameTxn(txn, dbs, t.rel);
      if (!name.ok()) return name.status();
      names[t.rel] = std::move(name).value();
    }
    out->push_back(ToEdgeRecord(edge_key, names[t.rel], v));
  }
  return Status::OK();
}
}  // namespace

namespace {
// Store::Out (outgoing) or Store::In.
Result<std::vector<EdgeRecord>> ListEdges(const Store::Rep& rep, std::string_view key,
                                          std::string_view rel, const ReadView& view, bool outgoing) {
  std::vector<EdgeRecord> edges;
  uint64_t id = rep.HashKey(key);
  AMEM_RETURN_IF_ERROR(rep.Read([&](MDB_txn* txn) {
    edges.clear();
    At at;
    AMEM_RETURN_IF_ERROR(rep.Resolve(txn, view, &at));
    std::optional<RelationId> rel_id;
    if (!rel.empty()) {
      auto r = LookupRelationTxn(txn, rep.dbs, rel);
      if (!r.ok()) return r.status();
      rel_id = *r;
    }
    return ListAdjacent(txn, rep.dbs, id, rel_id, at, outgoing, &edges);
  }));
  rep.ReadEvent("query", id, "edge");
  return edges;
}
}  // namespace

Result<std::vector<EdgeRecord>> Store::Out(std::string_view key, std::string_view rel,
                                           const ReadView& view) const {
  return ListEdges(*rep_, key, rel, view, /*outgoing=*/true);
}

Result<std::vector<EdgeRecord>> Store::In(std::string_view key, std::string_view rel,
                                          const ReadView& view) const {
  return ListEdges(*rep_, key, rel, view, /*outgoing=*/false);
}

Result<KvRecord> Store::GetKv(std::string_view scope, std::string_view ns, std::string_view key,
                              const ReadView& view) const {
  KvRecord rec;
  std::string kv_key = KvKey(scope, ns, key);
  AMEM_RETURN_IF_ERROR(rep_->Read([&](MDB_txn* txn) {
    At at;
    AMEM_RETURN_IF_ERROR(rep_->Resolve(txn, view, &at));
    std::string_view value;
    bool found = false;
    AMEM_RETURN_IF_ERROR(
        VersionAt(txn, rep_->dbs, rep_->dbs.kv, kHistKv, kv_key, at, &value, &found));
    KvValue v;
    if (found) AMEM_RETURN_IF_ERROR(v.DecodeFrom(value));
    if (!found || v.tombstone) {
      return Status::NotFound("kv " + std::string(scope) + "/" + std::string(ns) + "/" +
                              std::string(key));
    }
    rec = ToKvRecord(kv_key, v);
    return Status::OK();
  }));
  rep_->ReadEvent("read", Hash64(kv_key), "kv", rec.scope, rec.run, rec.task);
  return rec;
}

Result<std::vector<KvRecord>> Store::ListKv(std::string_view scope, std::string_view ns,
                                            const ReadView& view) const {
  std::vector<KvRecord> out;
  std::string prefix = KvPrefix(scope, ns);
  AMEM_RETURN_IF_ERROR(rep_->Read([&](MDB_txn* txn) {
    out.clear();
    At at;
    AMEM_RETURN_IF_ERROR(rep_->Resolve(txn, view, &at));
    return ForEachAt(txn, rep_->dbs, rep_->dbs.kv, kHistKv, prefix, at,
                     [&](std::string_view k, std::string_view value) {
                       KvValue v;
                       AMEM_RETURN_IF_ERROR(v.DecodeFrom(value));
                       if (!v.tombstone) out.push_back(ToKvRecord(k, v));
                       return Status::OK();
                     });
  }));
  rep_->ReadEvent("query", Hash64(prefix), "kv", scope);
  return out;
}

Result<std::vector<KvRecord>> Store::KvHistory(std::string_view scope, std::string_view ns,
                                               std::string_view key) const {
  std::vector<KvRecord> out;
  std::string kv_key = KvKey(scope, ns, key);
  AMEM_RETURN_IF_ERROR(rep_->Read([&](MDB_txn* txn) {
    out.clear();
    std::string prefix(1, kHistKv);
    prefix.append(kv_key);
    Cursor c(txn, rep_->dbs.hist);
    for (bool ok = c.SeekRange(prefix); ok; ok = c.Next()) {
      std::string_view k = c.key();
      if (k.size() != prefix.size() + kRevSuffixSize || k.substr(0, prefix.size()) != prefix) {
        break;
      }
      KvValue v;
      AMEM_RETURN_IF_ERROR(v.DecodeFrom(c.value()));
      out.push_back(ToKvRecord(kv_key, v));
    }
    std::string_view value;
    if (Get(txn, rep_->dbs.kv, kv_key, &value)) {
      KvValue v;
      AMEM_RETURN_IF_ERROR(v.DecodeFrom(value));
      out.push_back(ToKvRecord(kv_key, v));
    }
    return Status::OK();
  }));
  rep_->ReadEvent("query", Hash64(kv_key), "kv", scope);
  return out;
}

Result<uint64_t> Store::DeleteKv(std::string_view scope, std::string_view ns,
                                std::string_view key, const WriteOptions& options) {
  Batch b;
  b.DeleteKv(std::string(scope), std::string(ns), std::string(key));
  return rep_->ApplyDelete(
      b, options, "kv " + std::string(scope) + "/" + std::string(ns) + "/" + std::string(key));
}

namespace {

// The changes of revisions > rev in `txn`, in order, to fn (ChangesSinceRevision,
// ForEachChangeSinceRevision).
Status EachChangeSince(MDB_txn* txn, const store_internal::Dbs& dbs, uint64_t rev,
                       const std::function<Status(const Change&)>& fn) {
  AMEM_RETURN_IF_ERROR(CheckHistorySince(
      txn, dbs, rev, "changes since revision " + std::to_string(rev) + " are no longer known"));
  std::vector<std::string> rel_names;  // by id, looked up once each
  Cursor c(txn, dbs.log);
  for (bool ok = c.SeekRange(RevKey(rev + 1)); ok; ok = c.Next()) {
    if (c.key().size() != 8) return Status::Corruption("log key");
    const uint64_t r = DecodeBig64(c.key().data());
    int64_t ts = 0;
    AMEM_RETURN_IF_ERROR(DecodeLogValue(
        txn, dbs, r, c.value(), &ts, &rel_names,
        [&](const LogEntry& e, const std::string& rel_name) {
          Change ch;
          ch.rev = r;
          ch.ts = ts;
          ch.kind = static_cast<Change::Kind>(e.kind);
          ch.overwrite = (e.flags & kLogOverwrite) != 0;
          ch.src_missing = (e.flags & kLogSrcMissing) != 0;
          ch.dst_missing = (e.flags & kLogDstMissing) != 0;
          ch.run = e.run;
          ch.task = e.task;
          switch (ch.kind) {
            case Change::Kind::kPutNode:
            case Change::Kind::kDeleteNode:
            case Change::Kind::kDefineRelation:
              ch.key = e.node_key();
              if (ch.kind == Change::Kind::kDefineRelation) ch.rel_name = e.relation_name();
              break;
            case Change::Kind::kPutEdge:
            case Change::Kind::kDeleteEdge:
              ch.src_key = e.src_key();
              ch.rel_name = rel_name;
              ch.dst_key = e.dst_key();
              break;
            case Change::Kind::kPutKv:
            case Change::Kind::kDeleteKv:
              ch.scope = e.kv_scope();
              ch.ns = e.kv_ns();
              ch.key = e.kv_key();
              break;
          }
          return fn(ch);
        }));
  }
  return Status::OK();
}

}  // namespace

Result<std::vector<Change>> Store::ChangesSinceRevision(uint64_t rev) const {
  std::vector<Change> out;
  if (rev == UINT64_MAX) return out;  // nothing can follow it
  AMEM_RETURN_IF_ERROR(rep_->Read([&](MDB_txn* txn) {
    out.clear();
    return EachChangeSince(txn, rep_->dbs, rev, [&](const Change& ch) {
      out.push_back(ch);
      return Status::OK();
    });
  }));
  return out;
}

Status Store::ForEachChangeSinceRevision(uint64_t rev,
                                         const std::function<Status(const Change&)>& fn) const {
  if (rev == UINT64_MAX) return Status::OK();
  return rep_->Read([&](MDB_txn* txn) { return EachChangeSince(txn, rep_->dbs, rev, fn); });
}

Result<std::vector<Change>> Store::ChangesSinceTime(int64_t ts) const {
  uint64_t first = 0;
  AMEM_RETURN_IF_ERROR(rep_->Read([&](MDB_txn* txn) {
    Cursor c(txn, rep_->dbs.time);
    if (ts != INT64_MAX && c.SeekRange(TimeKey(ts + 1, 0))) {
      if (c.key().size() != 16) return Status::Corruption("time index key");
      first = DecodeTimeKeyRev(c.key());
    }
    return Status::OK();
  }));
  if (first == 0) return std::vector<Change>{};
  return ChangesSinceRevision(first - 1);
}

}  // namespace amem
