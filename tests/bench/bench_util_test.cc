#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "bench/bench_util.h"

using namespace amem::bench;

namespace {
struct Argv {
  explicit Argv(std::vector<std::string> a) : args(std::move(a)) {
    for (std::string& s : args) ptrs.push_back(s.data());
  }
  int argc() { return static_cast<int>(ptrs.size()); }
  std::vector<std::string> args;
  std::vector<char*> ptrs;
};
}  // namespace

TEST_CASE("Flags parse db_bench style arguments", "[bench][flags]") {
  Argv a({"prog", "--num=100", "--benchmarks=a,,b,c", "--vectors", "--sync=0", "--numx=3",
          "stray", "--num=200"});
  Flags f(a.argc(), a.ptrs.data());
  CHECK(f.Uint("num", 7) == 200);  // the last occurrence wins
  CHECK(f.Uint("runs", 7) == 7);
  CHECK(f.List("benchmarks", "z") == std::vector<std::string>{"a", "b", "c"});
  CHECK(f.List("absent", "x,y") == std::vector<std::string>{"x", "y"});
  CHECK(f.List("absent", "").empty());
  CHECK(f.Bool("vectors", false));
  CHECK_FALSE(f.Bool("sync", true));
  CHECK(f.Bool("missing", true));
  CHECK(f.String("out", "-") == "-");
  // "--numx" is not "--num"; both it and the stray word stay unread.
  CHECK(f.Unknown() == std::vector<std::string>{"--numx=3", "stray"});
}

TEST_CASE("Median of odd and even counts", "[bench][flags]") {
  CHECK(Median({3}) == 3);
  CHECK(Median({5, 1, 3}) == 3);
  CHECK(Median({4, 1, 3, 2}) == 2.5);
}

TEST_CASE("ScratchDir creates a fresh directory and removes it", "[bench][flags]") {
  std::string path;
  {
    ScratchDir a("amem-test"), b("amem-test");
    path = a.path();
    CHECK(a.path() != b.path());
    CHECK(std::filesystem::is_directory(a.path()));
    std::filesystem::create_directories(a.Sub("x/y"));
    std::ofstream(a.Sub("x/y/f")) << "data";
  }
  CHECK_FALSE(std::filesystem::exists(path));
  RemoveAll(path);  // missing is fine
}
