// What the delta fuzz targets (snapshot/delta_fuzz.cc, snapshot/layered_fuzz.cc)
// share: a base snapshot and a delta compiled against it from a small store made
// once per process (puts, an overwrite in place, a node moved to another run, a run
// whose last node is deleted (a removed session), a
// delete, dangling and deleted edges, a custom relation, kv), and the way an input
// damages them: patches whose checksums are then redone, so that the damage meets
// Delta::Open's and the layered view's checks instead of the checksum.
#ifndef AMEM_TESTS_SNAPSHOT_DELTA_FUZZ_FIXTURE_H_
#define AMEM_TESTS_SNAPSHOT_DELTA_FUZZ_FIXTURE_H_

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "common/coding.h"
#include "common/hash.h"
#include "snapshot/delta.h"
#include "snapshot/format.h"
#include "snapshot/reader.h"
#include "snapshot/writer.h"
#include "store/store.h"

namespace amem::fuzz {

struct DeltaFixture {
  std::string base, delta;  // the files' bytes
};

inline void Check(bool ok) {
  if (!ok) std::abort();  // the fixture itself failed: not a finding
}

inline const DeltaFixture& Fixture() {
  static const DeltaFixture* fixture = [] {
    char dir[] = "/tmp/amem-delta-fuzz-XXXXXX";
    Check(::mkdtemp(dir) != nullptr);
    auto* f = new DeltaFixture;
    {
      auto store = Store::Open(dir);
      Check(store.ok());
      Store& s = **store;
      int64_t ts = 1000;
      auto w = [&](std::string run = "r1") {
        WriteOptions o;
        o.ts = ++ts;
        o.run = std::move(run);
        return o;
      };
      auto node = [&](const std::string& key, const std::string& content, std::string run = "r1") {
        NodeInput n;
        n.key = key;
        n.type = NodeType::kFact;
        n.content = content;
        Check(s.PutNode(n, w(std::move(run))).ok());
      };
      auto edge = [&](const std::string& a, const std::string& rel, const std::string& b) {
        EdgeInput e;
        e.src = a;
        e.rel = rel;
        e.dst = b;
        Check(s.PutEdge(e, w()).ok());
      };
      Batch def;
      def.DefineRelation("mentions");
      Check(s.Apply(def, w()).ok());
      for (int i = 0; i < 12; ++i) node("fact:n" + std::to_string(i), "retry cache " + std::to_string(i));
      node("fact:gone", "the only node of its run", "r2");
      for (int i = 0; i < 12; ++i) {
        edge("fact:n" + std::to_string(i), "supports", "fact:n" + std::to_string((i + 1) % 12));
        edge("fact:n" + std::to_string(i), i % 2 ? "caused_by" : "mentions",
             "fact:n" + std::to_string((i + 5) % 12));
      }
      edge("fact:n3", "supports", "fact:ghost");
      KvInput kv;
      kv.scope = "s";
      kv.ns = "n";
      kv.key = "k1";
      kv.value = "v1";
      Check(s.PutKv(kv, w()).ok());
      const uint64_t base_rev = *s.revision();
      auto state = s.ReadState(ReadView::AtRevision(base_rev));
      Check(state.ok());
      auto base = snapshot::BuildSnapshot(*state);
      Check(base.ok());
      f->base = std::move(*base);
      // The changes: in place, moved run, new, deleted, edges of kept nodes.
      node("fact:n2", "retry cache two, overwritten");
      node("fact:n7", "moved to another run", "r0");
      node("fact:new", "a new node");
      Check(s.DeleteNode("fact:n9", w()).ok());
      Check(s.DeleteNode("fact:gone", w()).ok());  // its run goes: a removed session
      edge("fact:n4", "caused_by", "fact:n10");
      edge("fact:new", "supports", "fact:n1");
      Check(s.DeleteEdge("fact:n5", "supports", "fact:n6", w()).ok());
      kv.key = "k2";
      Check(s.PutKv(kv, w()).ok());
      auto reader = snapshot::Reader::OpenBuffer(f->base);
      Check(reader.ok());
      Check(snapshot::CompileDelta(s, **reader, base_rev, *s.revision(), &f->delta).ok());
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    return f;
  }();
  return *fixture;
}

// A delta's checksum: XXH3 of every byte before the checksum block's header.
inline void RedoDeltaChecksum(std::string* d) {
  if (d->size() < snapshot::kDeltaHeaderLength + snapshot::kBlockHeaderLength + 8) return;
  const size_t sum_at = d->size() - snapshot::kBlockHeaderLength - 8;
  EncodeFixed64(d->data() + d->size() - 8, Hash64(d->data(), sum_at, 0));
}

// A snapshot's checksum (docs/FORMAT.md §8.21): the same over its last block.
inline void RedoSnapshotChecksum(std::string* b) {
  if (b->size() < snapshot::Header::kEncodedLength + 16) return;
  const size_t sum_at = b->size() - 8;
  EncodeFixed64(b->data() + sum_at, Hash64(b->data(), sum_at - 8, 0));
}

// Applies the input's patches to *delta (and, when `base` is given, to *base):
// 6 bytes each, a 16-bit offset (its top bit picks the base) and a 32-bit value
// written there; a trailing byte cuts the delta by that many 8-byte words.
inline void Patch(const uint8_t* data, size_t size, std::string* delta, std::string* base) {
  size_t k = 0;
  for (; k + 6 <= size; k += 6) {
    const uint32_t at = DecodeFixed16(reinterpret_cast<const char*>(data + k));
    std::string* target = (base != nullptr && (at & 0x8000)) ? base : delta;
    const size_t off = target == delta ? at : at & 0x7FFF;
    if (target->size() < 4) continue;
    const size_t where = off % (target->size() - 3);
    std::memcpy(target->data() + where, data + k + 2, 4);
  }
  if (k < size) {
    const size_t cut = 8 * size_t{data[k]};
    delta->resize(delta->size() > cut ? delta->size() - cut : 0);
  }
}

}  // namespace amem::fuzz

#endif  // AMEM_TESTS_SNAPSHOT_DELTA_FUZZ_FIXTURE_H_
