// What every query subcommand shares (the query families in tools/cmd_query_*.cc):
// the snapshot it runs on and how its answer is printed.
//
//   --snapshot FILE      query that .amem file, or else
//   --as-of REV|--at TS  the store's snapshot of that state (query/current.h: the
//                        current one is exported again only when the store changed)
#ifndef AMEM_TOOLS_QUERY_CLI_H_
#define AMEM_TOOLS_QUERY_CLI_H_

#include <memory>
#include <string>

#include "common/status.h"
#include "query/render.h"
#include "snapshot/reader.h"
#include "tools/command.h"

namespace amem::cli {

struct SnapshotArgs {
  std::string snapshot;  // empty: the store's snapshot
  ReadViewFlags view;
};

// Adds --snapshot FILE, --as-of and --at to `cmd`.
void AddSnapshotFlags(CLI::App* cmd, SnapshotArgs* args);

// Opens the snapshot the flags name. --as-of/--at with --snapshot is a usage error.
Result<std::unique_ptr<snapshot::Reader>> OpenSnapshot(Context& ctx, const SnapshotArgs& args);

// Buffers `doc` as the command's answer: JSON with --json, else query::RenderText.
void EmitQuery(Context& ctx, const query::Json& doc);

}  // namespace amem::cli

#endif  // AMEM_TOOLS_QUERY_CLI_H_
