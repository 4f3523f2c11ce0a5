// Helpers for the store tests: a temporary directory per TEST_CASE and small
// builders for inputs.
#ifndef AMEM_TESTS_STORE_STORE_TEST_UTIL_H_
#define AMEM_TESTS_STORE_STORE_TEST_UTIL_H_

#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <memory>
#include <string>

#include "store/store.h"

namespace amem::testing {

// The pid of a process that has exited and been reaped (for the removal of temp
// files that dead writers left: common/files.h).
inline long DeadPid() {
  pid_t pid = ::fork();
  if (pid == 0) ::_exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
}

// A fresh directory under $TMPDIR, removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "amem-store-XXXXXX").string();
    char* p = ::mkdtemp(tmpl.data());
    REQUIRE(p != nullptr);
    path_ = p;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  std::string Sub(const std::string& name) const { return path_ + "/" + name; }
  std::string operator/(const std::string& name) const { return Sub(name); }

 private:
  std::string path_;
};

inline std::unique_ptr<Store> OpenStore(const std::string& dir, StoreOptions options = {}) {
  auto s = Store::Open(dir, options);
  INFO(s.status().ToString());
  REQUIRE(s.ok());
  return std::move(s).value();
}

inline NodeInput Node(std::string key, std::string content = "", NodeType type = NodeType::kFact) {
  NodeInput n;
  n.key = std::move(key);
  n.type = type;
  n.content = std::move(content);
  return n;
}

inline EdgeInput Edge(std::string src, std::string rel, std::string dst, float weight = 1.0f) {
  EdgeInput e;
  e.src = std::move(src);
  e.rel = std::move(rel);
  e.dst = std::move(dst);
  e.weight = weight;
  return e;
}

inline KvInput Kv(std::string scope, std::string ns, std::string key, std::string value) {
  KvInput kv;
  kv.scope = std::move(scope);
  kv.ns = std::move(ns);
  kv.key = std::move(key);
  kv.value = std::move(value);
  return kv;
}

inline WriteOptions At(int64_t ts) {
  WriteOptions w;
  w.ts = ts;
  return w;
}

// Unwraps a Result, failing the test with its status otherwise.
template <typename T>
T Must(Result<T> r) {
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return std::move(r).value();
}

}  // namespace amem::testing

#endif  // AMEM_TESTS_STORE_STORE_TEST_UTIL_H_
