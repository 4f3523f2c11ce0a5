// common/files.h: the path check, the one writer of whole files (AtomicFile), the
// removal of stale temp files and appends that never block.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "common/files.h"
#include "tests/store/store_test_util.h"  // TempDir

namespace amem {
namespace {

namespace fs = std::filesystem;
using amem::testing::DeadPid;
using amem::testing::TempDir;

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

size_t CountEntries(const std::string& dir) {
  size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += !e.path().empty();
  return n;
}

}  // namespace

TEST_CASE("CheckPathArgument refuses NUL and every control character", "[common][files]") {
  CHECK(CheckPathArgument("snapshots/v1.amem", "path").ok());
  CHECK(CheckPathArgument("-", "FILE").ok());
  CHECK(CheckPathArgument("caf\xc3\xa9/\xe2\x82\xac.amem", "path").ok());  // UTF-8 is fine
  for (std::string bad : {std::string(".npmrc\0.amem", 13), std::string("a\nb"),
                          std::string("a\x1b[31m"), std::string("a\x7f"),
                          std::string("a\xc2\x85z"), std::string("\t")}) {
    Status s = CheckPathArgument(bad, "path");
    INFO(s.ToString());
    CHECK(s.IsInvalidArgument());
    CHECK(s.message().rfind("path: the path holds a control character", 0) == 0);
  }
}

TEST_CASE("AtomicFile writes through no link and leaves nothing on failure",
          "[common][files]") {
  TempDir d;
  const std::string target = d.Sub("out.log"), victim = d.Sub("victim");
  { std::ofstream(victim) << "precious"; }
  // The temp file is a new regular file of its own (O_EXCL | O_NOFOLLOW: never a
  // name planted before, never through a link); the CLI test plants the link.
  AtomicFile f;
  REQUIRE(f.Open(target).ok());
  const std::string tmp = f.temp_path();
  CHECK(tmp.rfind(target + kTempInfix, 0) == 0);
  struct stat st {};
  REQUIRE(::lstat(tmp.c_str(), &st) == 0);
  CHECK(S_ISREG(st.st_mode));
  REQUIRE(f.Append("new contents\n").ok());
  REQUIRE(f.Commit(Durability::kSynced).ok());
  CHECK(Slurp(target) == "new contents\n");
  CHECK(Slurp(victim) == "precious");
  CHECK_FALSE(fs::exists(tmp));

  // Abandoned (or destroyed) before Commit: the temp file goes, the target stays.
  {
    AtomicFile g;
    REQUIRE(g.Open(target).ok());
    REQUIRE(g.Append("half").ok());
  }
  CHECK(Slurp(target) == "new contents\n");
  CHECK(CountEntries(d.path()) == 2);
  // A NUL in the target is refused before anything is created.
  AtomicFile h;
  CHECK(h.Open(d.Sub(std::string("x\0y", 3))).IsInvalidArgument());
  CHECK(CountEntries(d.path()) == 2);
}

TEST_CASE("AtomicFile with write-behind keeps every byte of appends of any size",
          "[common][files]") {
  // A write-behind file hands its pages to the disk in 4 MB steps, splitting an
  // Append that crosses a step: appends smaller than, across and many times a
  // step give the same file, byte for byte.
  TempDir d;
  const std::string target = d.Sub("big.amem");
  std::string expect;
  AtomicFile f;
  REQUIRE(f.Open(target, /*write_behind=*/true).ok());
  auto add = [&](size_t n, char seed) {
    std::string piece(n, '\0');
    for (size_t i = 0; i < n; ++i) piece[i] = static_cast<char>(seed + i * 7 + (i >> 12));
    REQUIRE(f.Append(piece).ok());
    expect += piece;
    CHECK(f.bytes() == expect.size());
  };
  add(1, 'a');
  add((size_t{4} << 20) - 2, 'b');  // ends one byte short of the first step
  add(3, 'c');                       // crosses it
  add(size_t{11} << 20, 'd');        // one Append of almost three steps
  add(0, 'e');
  for (int i = 0; i < 40; ++i) add(100003, static_cast<char>('f' + i));
  REQUIRE(f.Commit(Durability::kSynced).ok());
  CHECK(fs::file_size(target) == expect.size());
  CHECK(Slurp(target) == expect);
}

TEST_CASE("RemoveStaleTempFiles removes only dead writers' temp files", "[common][files]") {
  TempDir d;
  const long dead = DeadPid();
  const std::string hex = "0123456789abcdef";
  auto make = [&](const std::string& name) { std::ofstream(d.Sub(name)) << "x"; };
  const std::string stale = "x.amem.tmp." + std::to_string(dead) + "." + hex;
  const std::string live = "x.amem.tmp." + std::to_string(::getppid()) + "." + hex;
  const std::string other = "y.amem.tmp." + std::to_string(dead) + "." + hex;
  const std::string odd = "x.amem.tmp." + std::to_string(dead) + ".not-hex-digits!";
  make(stale);
  make(live);
  make(other);
  make(odd);
  make("x.amem");
  fs::create_symlink(d.Sub("x.amem"), d.Sub("x.amem.tmp." + std::to_string(dead) + ".fedcba9876543210"));

  // One target's: only its stale file.
  CHECK(RemoveStaleTempFilesOf(d.Sub("x.amem")) == 1);
  CHECK_FALSE(fs::exists(d.Sub(stale)));
  CHECK(fs::exists(d.Sub(live)));
  CHECK(fs::exists(d.Sub(other)));
  CHECK(fs::exists(d.Sub(odd)));
  CHECK(fs::is_symlink(d.Sub("x.amem.tmp." + std::to_string(dead) + ".fedcba9876543210")));
  // Every target's: the other target's stale file too; never a link, a live
  // writer's file or a name amem does not make.
  CHECK(RemoveStaleTempFiles(d.path()) == 1);
  CHECK_FALSE(fs::exists(d.Sub(other)));
  CHECK(fs::exists(d.Sub(live)));
  CHECK(fs::exists(d.Sub(odd)));
  CHECK(fs::exists(d.Sub("x.amem")));
}

TEST_CASE("RemoveStaleTempFiles counts a zombie writer as gone", "[common][files]") {
  // A detached merge process killed under an init that reaps it late (some
  // containers' never) stays a zombie: its temp file is stale all the same.
  TempDir d;
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) ::_exit(0);
  // Not reaped yet: wait until it is a zombie (its exit was seen by the kernel).
  siginfo_t info{};
  REQUIRE(::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT) == 0);
  const std::string name = "x.amem.tmp." + std::to_string(child) + ".0123456789abcdef";
  std::ofstream(d.Sub(name)) << "x";
  CHECK(RemoveStaleTempFiles(d.path()) == 1);
  CHECK_FALSE(fs::exists(d.Sub(name)));
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
}

TEST_CASE("OpenAppendFile refuses a FIFO without blocking", "[common][files]") {
  TempDir d;
  const std::string fifo = d.Sub("queries.fifo");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // No reader: an ordinary open would wait forever.
  Status s = AppendToFile(fifo, "line\n", "query log");
  CHECK(s.IsInvalidArgument());
  CHECK(s.message().find("not a regular file") != std::string::npos);
  // With a reader the open succeeds, and the file is still refused: nothing is
  // written into the pipe.
  const int reader = ::open(fifo.c_str(), O_RDONLY | O_NONBLOCK);
  REQUIRE(reader >= 0);
  s = AppendToFile(fifo, "line\n", "query log");
  CHECK(s.IsInvalidArgument());
  char buf[8];
  CHECK(::read(reader, buf, sizeof buf) <= 0);
  ::close(reader);

  const std::string log = d.Sub("queries.jsonl");
  REQUIRE(AppendToFile(log, "a\n", "query log").ok());
  REQUIRE(AppendToFile(log, "b\n", "query log").ok());
  CHECK(Slurp(log) == "a\nb\n");
  CHECK(fs::is_directory(d.path()));
  CHECK(AppendToFile(d.path(), "c\n", "query log").IsIOError());  // EISDIR
}

}  // namespace amem
