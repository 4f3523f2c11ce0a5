// RAII over LMDB for the store: the only file that includes <lmdb++.h>.
//
// Everything LMDB-specific the rest of store/ needs is here: the write/read
// transaction handle, the named databases, error conversion and the few put/get
// helpers whose LMDB return codes need care (MDB_KEYEXIST is an answer, not an
// error). Bytes returned by Get/cursors point into the map and stay valid until
// the transaction ends or the next write in it.
#ifndef AMEM_STORE_INTERNAL_LMDB_ENV_H_
#define AMEM_STORE_INTERNAL_LMDB_ENV_H_

#include <lmdb++.h>

#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"

namespace amem::store_internal {

class Txn : public lmdb::txn {
 public:
  static Txn Begin(MDB_env* env, unsigned int flags = 0) {
    MDB_txn* handle = nullptr;
    lmdb::txn_begin(env, nullptr, flags, &handle);
    return Txn(handle);
  }
  // mdb_txn_commit frees the txn even when it fails. Drop our handle first so
  // ~txn() cannot abort it a second time (the packaged lmdb++.h 0.9.14 would).
  void commit() { lmdb::txn_commit(std::exchange(_handle, nullptr)); }

 private:
  explicit Txn(MDB_txn* handle) noexcept : lmdb::txn(handle) {}
};

// The named databases (docs/STORE.md §2).
struct Dbs {
  MDB_dbi n = 0, e = 0, out = 0, in = 0, out_dead = 0, in_dead = 0;
  MDB_dbi kv = 0, hist = 0, meta = 0, log = 0, time = 0;
};

// MDB_CORRUPTED / MDB_PANIC -> Corruption, everything else -> IOError.
Status FromLmdb(const lmdb::error& e);

inline MDB_val Val(std::string_view s) {
  return MDB_val{s.size(), const_cast<char*>(s.data())};
}
inline std::string_view View(const MDB_val& v) {
  return std::string_view(static_cast<const char*>(v.mv_data), v.mv_size);
}

// false when absent. *value is valid until the txn ends or its next write.
bool Get(MDB_txn* txn, MDB_dbi dbi, std::string_view key, std::string_view* value);
void Put(MDB_txn* txn, MDB_dbi dbi, std::string_view key, std::string_view value,
         unsigned int flags = 0);
// Deletes key (and, for a DUPSORT database with non-empty `dup`, only that
// duplicate). false when absent.
bool Del(MDB_txn* txn, MDB_dbi dbi, std::string_view key, std::string_view dup = {});
// Adds a duplicate to a DUPSORT database; false when it was already there.
bool PutDup(MDB_txn* txn, MDB_dbi dbi, std::string_view key, std::string_view dup);

// Puts keys that arrive in ascending order. While a key is past every key the
// database held when the writer was created (and past the previous key), it is
// known to be absent and is appended with MDB_APPEND, which fills pages
// completely instead of splitting them in half.
class AscendingWriter {
 public:
  AscendingWriter(MDB_txn* txn, MDB_dbi dbi);
  // True when `key` is certainly not in the database. REQUIRES: keys passed to
  // Absent/Put never decrease.
  bool Absent(std::string_view key) const;
  void Put(std::string_view key, std::string_view value);
  // DUPSORT only: adds `dups` (sorted, fixed size, all `size` bytes) under `key`.
  void PutDups(std::string_view key, std::string_view dups, size_t size);

 private:
  MDB_txn* txn_;
  MDB_dbi dbi_;
  lmdb::cursor cursor_;  // for PutDups: one cursor serves every key
  std::string last_;     // the largest key seen, or the database's last key
  bool empty_ = false;
};

// A cursor over one database; Seek/Next return false at the end.
class Cursor {
 public:
  Cursor(MDB_txn* txn, MDB_dbi dbi) : cursor_(lmdb::cursor::open(txn, dbi)) {}
  // First key >= `key`.
  bool SeekRange(std::string_view key) { return Op(key, MDB_SET_RANGE); }
  // Exact key; positions on its first duplicate.
  bool SeekExact(std::string_view key) { return Op(key, MDB_SET_KEY); }
  // In a DUPSORT db: key == `key` and the first duplicate >= `dup`.
  bool SeekDupRange(std::string_view key, std::string_view dup);
  bool First() { return Op({}, MDB_FIRST); }
  bool Last() { return Op({}, MDB_LAST); }
  bool Next() { return Op({}, MDB_NEXT); }
  bool Prev() { return Op({}, MDB_PREV); }
  bool NextDup() { return Op({}, MDB_NEXT_DUP); }
  bool NextNoDup() { return Op({}, MDB_NEXT_NODUP); }
  // Deletes the entry under the cursor (one duplicate in a DUPSORT db).
  void Delete() { lmdb::cursor_del(cursor_, 0); }
  std::string_view key() const { return View(key_); }
  std::string_view value() const { return View(value_); }

 private:
  bool Op(std::string_view key, MDB_cursor_op op);

  lmdb::cursor cursor_;
  MDB_val key_{0, nullptr}, value_{0, nullptr};
};

}  // namespace amem::store_internal

#endif  // AMEM_STORE_INTERNAL_LMDB_ENV_H_
