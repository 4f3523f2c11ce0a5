// ImportSnapshot is a function of the file alone: importing one snapshot into two
// empty stores gives the same store state, the imported revision's commit time
// included (snapshot/export.h, ImportOptions::revision_ts), for a snapshot whose
// records carry timestamps and for one that holds none.
#include <catch2/catch.hpp>
#include <string>

#include "snapshot/export.h"
#include "snapshot/reader.h"
#include "tests/snapshot/snapshot_test_util.h"
#include "tests/store/store_test_util.h"

namespace amem::snapshot {
namespace {

using amem::testing::Must;
using amem::testing::Node;
using amem::testing::OpenStore;
using amem::testing::TempDir;
using snapshot_test::ReadFileBytes;

// What an imported store is: its base (revision, commit time), the revision time
// an export of it reports, and the export's bytes.
struct Imported {
  StoreBase base;
  int64_t export_ts = 0;
  std::string bytes;
};

Imported ImportInto(const std::string& file, const std::string& dir, const ImportOptions& o) {
  auto store = OpenStore(dir);
  Result<ImportResult> r = ImportSnapshot(file, store.get(), o);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  Imported out;
  out.base = Must(store->Base());
  Result<ExportResult> e = ExportSnapshot(*store, dir + ".amem");
  REQUIRE(e.ok());
  out.export_ts = e->revision_ts;
  out.bytes = ReadFileBytes(dir + ".amem");
  return out;
}

TEST_CASE("Import of one snapshot twice gives the same store, commit time included",
          "[snapshot][export][import]") {
  TempDir dir;
  auto src = OpenStore(dir / "src");
  NodeInput gone = Node("fact:gone", "deleted before the export");
  gone.ts = 1000;
  REQUIRE(src->PutNode(gone).ok());
  REQUIRE(src->DeleteNode("fact:gone").ok());
  // No record left: the file has no timestamp but its Info block's newest_ts, 0.
  REQUIRE(ExportSnapshot(*src, dir / "empty.amem").ok());
  {
    auto reader = snapshot::Reader::Open(dir / "empty.amem");
    REQUIRE(reader.ok());
    REQUIRE((*reader)->node_count() == 0);
    REQUIRE((*reader)->newest_timestamp() == 0);
  }
  NodeInput kept = Node("fact:kept", "a record with its time");
  kept.ts = 1500;
  REQUIRE(src->PutNode(kept).ok());
  REQUIRE(ExportSnapshot(*src, dir / "one.amem").ok());

  for (const char* name : {"empty", "one"}) {
    const std::string file = dir / (std::string(name) + ".amem");
    for (uint64_t rev : {uint64_t{1}, uint64_t{9}}) {
      DYNAMIC_SECTION(name << " snapshot imported at revision " << rev) {
        ImportOptions o;
        o.revision = rev;
        const Imported a = ImportInto(file, dir / "a", o);
        const Imported b = ImportInto(file, dir / "b", o);
        CHECK(a.base.rev == rev);
        CHECK(b.base.rev == rev);
        CHECK(a.base.ts == b.base.ts);
        CHECK(a.export_ts == b.export_ts);
        CHECK(a.bytes == b.bytes);
        CHECK(a.bytes == ReadFileBytes(file));
        // The newest record's time, else the file's newest_ts (0), never the clock.
        CHECK(a.base.ts == (std::string(name) == "one" ? 1500 : 0));
        // A commit time given by the caller (amem clone: the stream's) is kept.
        o.revision_ts = 77;
        CHECK(ImportInto(file, dir / "c", o).base.ts == 77);
      }
    }
  }
}

}  // namespace
}  // namespace amem::snapshot
