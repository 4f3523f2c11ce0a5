// Raw LMDB access to a store directory, for tests that damage a store or edit
// it the way an older amem left it (docs/STORE.md names every database and key).
// No Store may have the directory open in this process.
#ifndef AMEM_TESTS_STORE_RAW_LMDB_H_
#define AMEM_TESTS_STORE_RAW_LMDB_H_

#include <lmdb.h>

#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <string_view>

#include "common/coding.h"
#include "common/hash.h"
#include "common/model.h"

namespace amem::testing {

// Runs `fn` in one committed write transaction on the store in `dir`; `db(name,
// flags)` opens one of its databases.
inline void RawLmdbWrite(
    const std::string& dir,
    const std::function<void(MDB_txn*, const std::function<MDB_dbi(const char*, unsigned)>&)>&
        fn) {
  MDB_env* env = nullptr;
  REQUIRE(mdb_env_create(&env) == 0);
  REQUIRE(mdb_env_set_maxdbs(env, 16) == 0);
  REQUIRE(mdb_env_open(env, dir.c_str(), 0, 0644) == 0);
  MDB_txn* txn = nullptr;
  REQUIRE(mdb_txn_begin(env, nullptr, 0, &txn) == 0);
  fn(txn, [txn](const char* name, unsigned flags) {
    MDB_dbi dbi = 0;
    REQUIRE(mdb_dbi_open(txn, name, flags, &dbi) == 0);
    return dbi;
  });
  REQUIRE(mdb_txn_commit(txn) == 0);
  mdb_env_close(env);
}

// A node key (n, out, in) and an adjacency entry `rel | other id` (STORE.md §3).
inline std::string RawNodeKey(std::string_view key) {
  std::string out;
  PutBig64(&out, NodeIdForKey(key));
  return out;
}
inline std::string RawAdjEntry(RelationId rel, std::string_view other) {
  std::string out(1, static_cast<char>(rel));
  PutBig64(&out, NodeIdForKey(other));
  return out;
}

inline MDB_val RawVal(std::string& s) { return MDB_val{s.size(), s.data()}; }

}  // namespace amem::testing

#endif  // AMEM_TESTS_STORE_RAW_LMDB_H_
