// What every command that reads a snapshot shares (the queries in tools/cli/cmd_query.cc,
// diff, replay-queries): the snapshot it runs on.
//
//   --snapshot FILE      query that .amem file, or else
//   --as-of REV|--at TS  the store's state then (snapshot/live.h: the base snapshot
//                        plus a delta of the changes since it, or an older file)
#ifndef AMEM_TOOLS_CLI_QUERY_ARGS_H_
#define AMEM_TOOLS_CLI_QUERY_ARGS_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "query/render.h"
#include "snapshot/live.h"
#include "snapshot/reader.h"
#include "tools/cli/command.h"
#include "tools/io/query_table.h"

namespace amem::cli {

// How the tools open a snapshot file from outside (--snapshot, diff,
// replay-queries): indexes checked against the records (Reader::CheckIndexes).
extern const snapshot::ReadOptions kCheckedRead;

struct SnapshotArgs {
  std::string snapshot;  // empty: the store's snapshot
  ReadViewFlags view;
};

// Adds --snapshot FILE, --as-of and --at to `cmd`.
void AddSnapshotFlags(CLI::App* cmd, SnapshotArgs* args);

// Opens the snapshot the flags name: --snapshot FILE with kCheckedRead, else the
// store's own snapshot as of the view (then also in *live when given). --as-of/--at
// with --snapshot is a usage error.
Result<std::shared_ptr<const snapshot::Reader>> OpenSnapshot(Context& ctx, const SnapshotArgs& args,
                                                             snapshot::LiveView* live = nullptr);

// Starts `amem --store store_dir merge-base` in a detached process of its own
// that outlives this one (tools/cli/cmd_merge.cc) and returns at once; nothing
// when a merge of that store runs. What a CLI query sets as
// snapshot::LiveOptions::spawn_merge.
Status SpawnMergeProcess(const std::string& store_dir);

// After `failed` (a status of opening or reading the store's live view, as
// OpenSnapshot gave it in `live`, or none): when it is a Corruption of the cache
// files (snapshot::DiscardLiveCache), removes them and says so on stderr, and
// returns true: the caller runs once more on a view compiled again.
bool DiscardBadLiveCache(Context& ctx, const Status& failed, const snapshot::LiveView* live);

// ---- the query commands' arguments (tools/cli/cmd_query.cc), shared with
// `amem view` (tools/cli/cmd_view.cc) so that each query's flags keep their meaning.

// Where CLI11 stores one parameter's value.
struct Slot {
  const io::Param* param = nullptr;
  CLI::Option* option = nullptr;
  std::string text;
  int64_t integer = 0;
  double number = 0;
  bool flag = false;
  std::vector<std::string> list;
};

struct QueryArgs {
  SnapshotArgs snap;
  WriteFlags write;
  std::deque<Slot> slots;  // stable addresses: CLI11 keeps pointers into them
};

// Adds `def`'s parameters (from the query table), --snapshot/--as-of/--at and, when
// it writes, the write attribution flags to `cmd`, storing into *a; not the
// parameters named in `skip` (view: context's text/json --format).
void AddQueryParams(CLI::App* cmd, const io::QueryDef& def, QueryArgs* a,
                    const std::vector<std::string>& skip = {});

// Runs `def` with what the command line gave: checks the arguments (usage errors
// exit 2), reads file arguments, opens the snapshot the flags name and answers,
// once more on a view compiled again when the store's cache was damaged. *reader,
// when given, receives the snapshot the answer was read from.
Result<io::QueryAnswer> AnswerQuery(Context& ctx, const io::QueryDef& def, const QueryArgs& a,
                                    std::shared_ptr<const snapshot::Reader>* reader = nullptr);

// After a command's commit (amem ingest, amem replay): makes the view the next
// query reads, so that no query pays for it in the foreground: exports the base
// (current.amem and current.rev) when there is none or the delta since it passed
// its bound, else compiles and caches the delta (current.amdl). `who` names the
// progress line ("amem ingest"). It only prepares a cache: a failure is said on
// stderr (the next query makes the view) and never fails the command.
void CompileQueryView(const Store& store, const std::string& who);
// The help of their --no-compile flag, which skips it.
inline constexpr char kNoCompileHelp[] =
    "Skip compiling the view queries read (the base snapshot, or the delta since it) after "
    "the commit; the next query compiles it";

}  // namespace amem::cli

#endif  // AMEM_TOOLS_CLI_QUERY_ARGS_H_
