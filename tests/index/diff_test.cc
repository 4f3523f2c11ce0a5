// The unified diff reader (tools/index/diff.h): git and plain diffs, every header
// git writes, any context, quoting, prefixes, CRLF; malformed input refused with
// the line named.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "tools/index/diff.h"

namespace Catch {
template <>
struct StringMaker<amem::query::FileChange> {
  static std::string convert(const amem::query::FileChange& c) {
    std::string s = "{" + c.old_path + " -> " + c.new_path + " " +
                    amem::query::ChangeKindName(c.kind) + (c.binary ? " binary" : "") + " [";
    for (const auto& l : c.old_lines) {
      s += std::to_string(l.first) + "-" + std::to_string(l.last) + " ";
    }
    return s + "]}";
  }
};
}  // namespace Catch

namespace amem::index {
namespace {

std::vector<FileChange> Parse(const std::string& text) {
  auto r = ParseUnifiedDiff(text);
  INFO(r.status().ToString());
  REQUIRE(r.ok());
  return std::move(r).value();
}

std::string Error(const std::string& text) {
  auto r = ParseUnifiedDiff(text);
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == Status::Code::kInvalidArgument);
  return r.status().message();
}

FileChange Change(std::string old_path, std::string new_path, ChangeKind kind,
                  std::vector<LineSpan> lines, bool binary = false) {
  return FileChange{std::move(old_path), std::move(new_path), kind, std::move(lines), binary};
}

TEST_CASE("diff: git diff with context maps only the changed old lines", "[diff]") {
  const std::string text =
      "diff --git a/src/a.cc b/src/a.cc\n"
      "index 3b18e51..a9c2f0e 100644\n"
      "--- a/src/a.cc\n"
      "+++ b/src/a.cc\n"
      "@@ -10,7 +10,8 @@ int Parse() {\n"
      " l10\n"
      " l11\n"
      " l12\n"
      "-l13\n"
      "+l13 changed\n"
      "+l13b\n"
      " l14\n"
      " l15\n"
      " l16\n"
      "@@ -30,6 +31,7 @@\n"
      " l30\n"
      " l31\n"
      " l32\n"
      "+inserted after 32\n"
      " l33\n"
      " l34\n"
      " l35\n";
  CHECK(Parse(text) == std::vector<FileChange>{
                           Change("src/a.cc", "src/a.cc", ChangeKind::kModified,
                                  {{13, 13}, {32, 32}})});
}

TEST_CASE("diff: -U0 hunks, counts omitted, insertion at the top", "[diff]") {
  const std::string text =
      "--- a/x.py\n"
      "+++ b/x.py\n"
      "@@ -0,0 +1,2 @@\n"
      "+import os\n"
      "+import sys\n"
      "@@ -5 +7 @@\n"
      "-old five\n"
      "+new five\n"
      "@@ -8,3 +9,0 @@\n"
      "-a\n"
      "-b\n"
      "-c\n"
      "@@ -20,0 +21,1 @@\n"
      "+after twenty\n";
  CHECK(Parse(text) == std::vector<FileChange>{
                           Change("x.py", "x.py", ChangeKind::kModified,
                                  {{0, 0}, {5, 5}, {8, 10}, {20, 20}})});
}

TEST_CASE("diff: added, deleted, renamed, copied, binary and mode-only files", "[diff]") {
  const std::string text =
      "diff --git a/new.cc b/new.cc\n"
      "new file mode 100644\n"
      "index 0000000..e69de29\n"
      "--- /dev/null\n"
      "+++ b/new.cc\n"
      "@@ -0,0 +1,2 @@\n"
      "+int a;\n"
      "+int b;\n"
      "diff --git a/gone.cc b/gone.cc\n"
      "deleted file mode 100644\n"
      "index e69de29..0000000\n"
      "--- a/gone.cc\n"
      "+++ /dev/null\n"
      "@@ -1,2 +0,0 @@\n"
      "-int a;\n"
      "-int b;\n"
      "diff --git a/old name.cc b/new name.cc\n"
      "similarity index 90%\n"
      "rename from old name.cc\n"
      "rename to new name.cc\n"
      "index 1111111..2222222 100644\n"
      "--- a/old name.cc\t\n"
      "+++ b/new name.cc\t\n"
      "@@ -3,1 +3,1 @@\n"
      "-x\n"
      "+y\n"
      "diff --git a/p.cc b/q.cc\n"
      "similarity index 100%\n"
      "rename from p.cc\n"
      "rename to q.cc\n"
      "diff --git a/src.cc b/copy.cc\n"
      "similarity index 100%\n"
      "copy from src.cc\n"
      "copy to copy.cc\n"
      "diff --git a/img.png b/img.png\n"
      "index 1111111..2222222 100644\n"
      "Binary files a/img.png and b/img.png differ\n"
      "diff --git a/bin.dat b/bin.dat\n"
      "index 1111111..2222222 100644\n"
      "GIT binary patch\n"
      "literal 3\n"
      "Kcmb=e000310RR91\n"
      "\n"
      "literal 0\n"
      "HcmV?d00001\n"
      "\n"
      "diff --git a/run.sh b/run.sh\n"
      "old mode 100644\n"
      "new mode 100755\n";
  CHECK(Parse(text) ==
        std::vector<FileChange>{
            Change("", "new.cc", ChangeKind::kAdded, {}),
            Change("gone.cc", "", ChangeKind::kDeleted, {{1, 2}}),
            Change("old name.cc", "new name.cc", ChangeKind::kRenamed, {{3, 3}}),
            Change("p.cc", "q.cc", ChangeKind::kRenamed, {}),
            Change("", "copy.cc", ChangeKind::kAdded, {}),
            Change("img.png", "img.png", ChangeKind::kModified, {}, true),
            Change("bin.dat", "bin.dat", ChangeKind::kModified, {}, true),
            Change("run.sh", "run.sh", ChangeKind::kModified, {}),
        });
}

TEST_CASE("diff: quoted paths, --no-prefix, ./ and CRLF", "[diff]") {
  const std::string quoted =
      "diff --git \"a/dir/tab\\there.c\" \"b/dir/tab\\there.c\"\r\n"
      "--- \"a/dir/tab\\there.c\"\r\n"
      "+++ \"b/dir/tab\\there.c\"\r\n"
      "@@ -2,2 +2,2 @@\r\n"
      " keep\r\n"
      "-old\r\n"
      "+new\r\n"
      "\\ No newline at end of file\r\n"
      "diff --git a/caf\\303\\251.c \"b/caf\\303\\251.c\"\n"
      "deleted file mode 100644\n"
      "diff --git a/a/x.c b/a/x.c\n"
      "--- a/a/x.c\n"
      "+++ b/a/x.c\n"
      "@@ -1 +1 @@\n"
      "-1\n"
      "+2\n";
  auto changes = Parse(quoted);
  REQUIRE(changes.size() == 3);
  CHECK(changes[0] == Change("dir/tab\there.c", "dir/tab\there.c", ChangeKind::kModified,
                             {{3, 3}}));
  CHECK(changes[1].old_path == "caf\\303\\251.c");  // an unquoted path is taken as written
  CHECK(changes[1].kind == ChangeKind::kDeleted);
  // A directory named a/ keeps its name: only the diff's own prefix goes.
  CHECK(changes[2].old_path == "a/x.c");

  const std::string no_prefix =
      "diff --git src/my file.c src/my file.c\n"
      "--- src/my file.c\t\n"
      "+++ src/my file.c\t\n"
      "@@ -4,2 +4,1 @@\n"
      "-gone\n"
      " kept\n";
  CHECK(Parse(no_prefix) == std::vector<FileChange>{
                                Change("src/my file.c", "src/my file.c",
                                       ChangeKind::kModified, {{4, 4}})});

  const std::string plain =
      "Only in b: extra\n"
      "diff -u ./lib/x.c ./lib/x.c\n"
      "--- ./lib/x.c\t2024-01-01 10:00:00.000000000 +0000\n"
      "+++ ./lib/x.c\t2024-01-02 10:00:00.000000000 +0000\n"
      "@@ -1,3 +1,3 @@\n"
      " a\n"
      "-b\n"
      "+B\n"
      "\n"  // an empty context line, its space stripped by a mailer
      "--- x.orig\n"
      "+++ x\n"
      "@@ -1 +1 @@\n"
      "-q\n"
      "+r\n"
      "Binary files a/logo.png and b/logo.png differ\n";
  CHECK(Parse(plain) ==
        std::vector<FileChange>{
            Change("lib/x.c", "lib/x.c", ChangeKind::kModified, {{2, 2}}),
            Change("x.orig", "x", ChangeKind::kRenamed, {{1, 1}}),
            Change("logo.png", "logo.png", ChangeKind::kModified, {}, true),
        });
}

TEST_CASE("diff: a removed line that looks like a header stays a hunk line", "[diff]") {
  const std::string text =
      "From 1234 Mon Sep 17 00:00:00 2001\n"
      "Subject: [PATCH] drop the separator\n"
      "---\n"
      " x.md | 2 --\n"
      "\n"
      "diff --git a/x.md b/x.md\n"
      "--- a/x.md\n"
      "+++ b/x.md\n"
      "@@ -1,3 +1,1 @@\n"
      "--- a/x.md\n"
      "-+++ b/x.md\n"
      " end\n"
      "-- \n"
      "2.40.0\n";
  CHECK(Parse(text) == std::vector<FileChange>{
                           Change("x.md", "x.md", ChangeKind::kModified, {{1, 2}})});
}

TEST_CASE("diff: empty text is no change; text with no file section is refused", "[diff]") {
  CHECK(Parse("").empty());
  CHECK(Parse("\n  \n").empty());
  CHECK(Error("just some words\nand more\n").find("not a unified diff") != std::string::npos);
}

TEST_CASE("diff: malformed input names its line", "[diff]") {
  const std::string head = "--- a/f\n+++ b/f\n";
  struct Bad {
    std::string text;
    std::string needle;
  };
  const std::vector<Bad> bad = {
      {"@@ -1 +1 @@\n-a\n+b\n", "line 1: hunk header before its file's --- and +++"},
      {"diff --git a/f b/f\n@@ -1 +1 @@\n-a\n+b\n", "line 2: hunk header before"},
      {head + "@@ -1,2 +1,2 @@\n-a\n+b\n", "line 3: hunk cut short"},
      {head + "@@ -1,2 +1,2 @@\n-a\n+b\nxyz\n", "line 6: hunk ends early: 1 old and 1 new"},
      {head + "@@ -1 +1 @@\n-a\n-b\n+c\n", "line 5: removed line beyond"},
      {head + "@@ -1 +1 @@\n+a\n+b\n-c\n", "line 5: added line beyond"},
      {head + "@@ -1 +1,2 @@\n a\n b\n", "line 5: context line beyond"},
      {head + "@@ -1 +1 @@\n-a\n+b\n+c\n", "line 6: more lines than the hunk at line 3"},
      {head + "@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\n c\n",
       "line 7: more lines than the hunk at line 3"},
      {head + "@@ -1 +1 @@\n-a\n+b\n-c\n", "line 6: more lines than the hunk"},
      {head + "@@ -x +1 @@\n", "line 3: malformed hunk header (expected a number)"},
      {head + "@@ -1 1 @@\n", "line 3: malformed hunk header (expected '+')"},
      {head + "@@ -1 +1\n", "line 3: malformed hunk header"},
      {head + "@@ -99999999999 +1 @@\n", "line 3: malformed hunk header (a line number beyond"},
      {head + "@@ -1,99999999999 +1 @@\n", "a line count beyond"},
      {head + "@@ -4294967295,2 +1 @@\n", "run past line 4294967295"},
      {head + "@@ -0,1 +1 @@\n", "line 0 with a non-zero count"},
      {head + "@@ -0,0 +0,0 @@\n", "line 3: hunk with no lines"},
      {head + "@@ -5 +5 @@\n-a\n+b\n@@ -3 +3 @@\n-a\n+b\n", "line 6: hunk overlaps or precedes"},
      {head + "@@@ -1 -1 +1 @@@\n", "line 3: a combined (merge) diff"},
      {"--- /dev/null\n+++ /dev/null\n", "line 1: both sides are /dev/null"},
      {"--- \"a/f\n+++ b/f\n", "line 1: bad quoted path"},
      {"--- a/f\n+++ \"b/\\q\"\n", "line 2: bad quoted path"},
      {"diff --git a/x y b/z w\nold mode 1\nnew mode 2\n", "line 1: cannot tell the paths"},
  };
  for (const Bad& b : bad) {
    INFO(b.text);
    CHECK_THAT(Error(b.text), Catch::Contains(b.needle));
  }
}

}  // namespace
}  // namespace amem::index
