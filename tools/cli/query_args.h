// What every query subcommand shares (the query families in tools/cli/cmd_query_*.cc):
// the snapshot it runs on and how its answer is printed.
//
//   --snapshot FILE      query that .amem file, or else
//   --as-of REV|--at TS  the store's state then (snapshot/live.h: the base snapshot
//                        plus a delta of the changes since it, or an older file)
#ifndef AMEM_TOOLS_CLI_QUERY_ARGS_H_
#define AMEM_TOOLS_CLI_QUERY_ARGS_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "query/render.h"
#include "snapshot/reader.h"
#include "tools/cli/command.h"

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
// store's own snapshot as of the view. --as-of/--at with --snapshot is a usage error.
Result<std::shared_ptr<const snapshot::Reader>> OpenSnapshot(Context& ctx, const SnapshotArgs& args);

// Buffers `doc`, built from `reader`, as the command's answer: JSON with --json,
// else query::RenderText. Corruption (exit 5, nothing printed) when the answer
// needed the reader's content and its content block would not decode.
Status EmitQuery(Context& ctx, const snapshot::Reader& reader, const query::Json& doc);

}  // namespace amem::cli

#endif  // AMEM_TOOLS_CLI_QUERY_ARGS_H_
