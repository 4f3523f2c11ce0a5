#include "store/internal/lmdb_env.h"

namespace amem::store_internal {

Status FromLmdb(const lmdb::error& e) {
  if (e.code() == MDB_CORRUPTED || e.code() == MDB_PANIC) {
    return Status::Corruption(std::string("lmdb: ") + e.what());
  }
  return Status::IOError(std::string("lmdb: ") + e.what());
}

bool Get(MDB_txn* txn, MDB_dbi dbi, std::string_view key, std::string_view* value) {
  MDB_val k = Val(key), v{0, nullptr};
  if (!lmdb::dbi_get(txn, dbi, &k, &v)) return false;
  *value = View(v);
  return true;
}

void Put(MDB_txn* txn, MDB_dbi dbi, std::string_view key, std::string_view value,
         unsigned int flags) {
  MDB_val k = Val(key), v = Val(value);
  int rc = ::mdb_put(txn, dbi, &k, &v, flags);
  if (rc != MDB_SUCCESS) lmdb::error::raise("mdb_put", rc);
}

bool Del(MDB_txn* txn, MDB_dbi dbi, std::string_view key, std::string_view dup) {
  MDB_val k = Val(key), d = Val(dup);
  return lmdb::dbi_del(txn, dbi, &k, dup.empty() ? nullptr : &d);
}

bool PutDup(MDB_txn* txn, MDB_dbi dbi, std::string_view key, std::string_view dup) {
  MDB_val k = Val(key), v = Val(dup);
  int rc = ::mdb_put(txn, dbi, &k, &v, MDB_NODUPDATA);
  if (rc == MDB_KEYEXIST) return false;
  if (rc != MDB_SUCCESS) lmdb::error::raise("mdb_put", rc);
  return true;
}

AscendingWriter::AscendingWriter(MDB_txn* txn, MDB_dbi dbi)
    : txn_(txn), dbi_(dbi), cursor_(lmdb::cursor::open(txn, dbi)) {
  MDB_val k{0, nullptr}, v{0, nullptr};
  empty_ = !lmdb::cursor_get(cursor_, &k, &v, MDB_LAST);
  if (!empty_) last_.assign(static_cast<const char*>(k.mv_data), k.mv_size);
}

bool AscendingWriter::Absent(std::string_view key) const {
  return empty_ || key > std::string_view(last_);
}

void AscendingWriter::Put(std::string_view key, std::string_view value) {
  bool append = Absent(key);
  store_internal::Put(txn_, dbi_, key, value, append ? MDB_APPEND : 0);
  if (append) {
    last_.assign(key);
    empty_ = false;
  }
}

void AscendingWriter::PutDups(std::string_view key, std::string_view dups, size_t size) {
  bool append = Absent(key);
  MDB_val k = Val(key);
  MDB_val data[2] = {{size, const_cast<char*>(dups.data())}, {dups.size() / size, nullptr}};
  int rc = ::mdb_cursor_put(cursor_, &k, data, MDB_MULTIPLE | (append ? MDB_APPEND : 0));
  if (rc != MDB_SUCCESS) lmdb::error::raise("mdb_cursor_put", rc);
  if (append) {
    last_.assign(key);
    empty_ = false;
  }
}

bool Cursor::Op(std::string_view key, MDB_cursor_op op) {
  if (op == MDB_SET_RANGE || op == MDB_SET_KEY) key_ = Val(key);
  return lmdb::cursor_get(cursor_, &key_, &value_, op);
}

bool Cursor::SeekDupRange(std::string_view key, std::string_view dup) {
  key_ = Val(key);
  value_ = Val(dup);
  return lmdb::cursor_get(cursor_, &key_, &value_, MDB_GET_BOTH_RANGE);
}

}  // namespace amem::store_internal
