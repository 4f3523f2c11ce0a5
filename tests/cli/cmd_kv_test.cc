// Drives the real amem binary: the kv (policy memory) commands.
#include <catch2/catch.hpp>
#include <set>
#include <sstream>

#include "common/hash.h"
#include "tests/store/raw_lmdb.h"
#include "tests/cli/amem_runner.h"

namespace amem::testing {
namespace {

TEST_CASE("kv commands: put, get, list, history, delete, as-of", "[tools][cli]") {
  TempStore s;
  RequireOk(s.Run({"kv-put", "proj", "decisions", "db", "sqlite", "--ts", "100", "--run", "r1"}));
  RequireOk(s.Run({"kv-put", "proj", "decisions", "db", "lmdb", "--ts", "200", "--run", "r2"}));
  RequireOk(s.Run({"kv-put", "proj", "decisions", "lang", "c++20", "--ts", "200"}));
  RequireOk(s.Run({"kv-put", "other", "decisions", "db", "x", "--ts", "200"}));

  RunResult r = s.Run({"kv-get", "proj", "decisions", "db", "--json"});
  RequireOk(r);
  nlohmann::json j = r.json();
  CHECK(j["scope"] == "proj");
  CHECK(j["ns"] == "decisions");
  CHECK(j["key"] == "db");
  CHECK(j["value"] == "lmdb");
  CHECK(j["run"] == "r2");
  CHECK(j["ts"] == 200);
  CHECK(j["rev"] == 2);
  CHECK(s.Run({"kv-get", "proj", "decisions", "db", "--as-of", "1", "--json"}).json()["value"] ==
        "sqlite");

  r = s.Run({"kv-list", "proj", "decisions"});
  RequireOk(r);
  CHECK(r.out == "db = lmdb  (rev 2)\nlang = c++20  (rev 3)\n");
  j = s.Run({"kv-list", "proj", "decisions", "--at", "150", "--json"}).json();
  REQUIRE(j["entries"].size() == 1);
  CHECK(j["entries"][0]["value"] == "sqlite");

  RequireOk(s.Run({"kv-del", "proj", "decisions", "db", "--ts", "300"}));
  RequireError(s.Run({"kv-get", "proj", "decisions", "db"}), 3, "kv-get");
  RequireError(s.Run({"kv-del", "proj", "decisions", "db"}), 3, "kv-del");
  r = s.Run({"kv-history", "proj", "decisions", "db"});
  RequireOk(r);
  CHECK(r.out ==
        "rev 1 ts 100 run r1  sqlite\n"
        "rev 2 ts 200 run r2  lmdb\n"
        "rev 5 ts 300 (deleted)\n");
  j = s.Run({"kv-history", "proj", "decisions", "db", "--as-of", "2", "--json"}).json();
  REQUIRE(j["versions"].size() == 2);
  CHECK(j["versions"][1]["deleted"] == false);
  RequireError(s.Run({"kv-history", "proj", "decisions", "nothing"}), 3, "kv-history");
  RequireError(s.Run({"kv-put", "proj", "decisions", "k", "bad \xff"}), 4, "kv-put");
}

}  // namespace
}  // namespace amem::testing
