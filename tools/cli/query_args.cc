#include "tools/cli/query_args.h"

#include <cstdio>

#include "snapshot/live.h"

namespace amem::cli {

const snapshot::ReadOptions kCheckedRead{.check_indexes = true};

void AddSnapshotFlags(CLI::App* cmd, SnapshotArgs* args) {
  PathArgument(cmd->add_option("--snapshot", args->snapshot,
                  "Query this .amem file instead of the store's current snapshot "
                  "(the base snapshot plus the changes since it)"))
      ->type_name("FILE");
  AddReadViewFlags(cmd, &args->view);
}

Result<std::shared_ptr<const snapshot::Reader>> OpenSnapshot(Context& ctx, const SnapshotArgs& args,
                                                             snapshot::LiveView* live_out) {
  if (!args.snapshot.empty()) {
    if (args.view.view().kind != ReadView::Kind::kLatest) {
      return ctx.UsageError("--as-of/--at read the store; they cannot apply to --snapshot");
    }
    ctx.SetQueryRevision(std::nullopt);
    auto r = snapshot::Reader::Open(args.snapshot, kCheckedRead);
    if (!r.ok()) return r.status();
    return std::shared_ptr<const snapshot::Reader>(std::move(r).value());
  }
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return store.status();
  Result<snapshot::LiveOptions> options = snapshot::LiveOptionsFromEnv();
  if (!options.ok()) return ctx.UsageError(options.status().message());
  // Past the delta's bound the query answers from base + delta and leaves the
  // merge to a process of its own.
  options->spawn_merge = SpawnMergeProcess;
  // The store's base and delta, written by amem itself: their indexes are the
  // writer's, so the O(nodes + edges) check is kept for files from outside.
  Result<snapshot::LiveView> live = snapshot::OpenLive(**store, args.view.view(), *options);
  if (!live.ok()) return live.status();
  snapshot::PrintNote(*live, "amem " + ctx.command_name());
  ctx.SetQueryRevision(live->revision);
  if (live_out) *live_out = *live;
  return std::move(live->reader);
}

void CompileQueryView(const Store& store, const std::string& who) {
  Result<snapshot::LiveOptions> options = snapshot::LiveOptionsFromEnv();
  Status s = options.status();
  if (s.ok()) {
    options->progress = who + ": compiling the query base";
    Result<snapshot::LiveView> live = snapshot::OpenLive(store, ReadView::Latest(), *options);
    if (live.ok()) snapshot::PrintNote(*live, who);
    s = live.status();
  }
  if (!s.ok()) {
    const std::string line = who + ": the store's query view was not compiled (" +
                             s.ToString() + "); the next query compiles it\n";
    std::fwrite(line.data(), 1, line.size(), stderr);
  }
}

bool DiscardBadLiveCache(Context& ctx, const Status& failed, const snapshot::LiveView* live) {
  if (!snapshot::IsLiveCacheCorruption(failed)) return false;
  Result<Store*> store = ctx.OpenStore();
  if (!store.ok()) return false;
  Result<std::string> removed = snapshot::DiscardLiveCache(**store, live);
  if (!removed.ok()) return false;
  std::string line = "amem: the store's cached snapshot is damaged (" + failed.ToString() +
                     "); discarded " + (removed->empty() ? std::string("nothing") : *removed) +
                     " and compiling it again\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  return true;
}

}  // namespace amem::cli
