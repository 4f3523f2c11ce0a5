// libFuzzer target for the JSON Lines ingest parser (tools/io/ingest.h): any bytes
// must parse into a batch or give InvalidArgument naming a line, never a crash, a
// hang or an allocation its input does not justify. And the fast path
// (FastLineParser) must accept only lines the reference parser accepts, making
// the same operation of each, floats bit for bit. Built and run by
// tests/fuzz.cmake through tests/run_fuzz.sh with the inputs in
// tests/data/fuzz_tools_ingest/ (among them a line nested far past the limit).
// fuzz-link: tools/io/ingest.cc tools/io/ingest_line.cc tools/io/json_input.cc store/*.cc store/internal/*.cc common/*.cc
// fuzz-pkg: lmdb libxxhash simdjson
#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <tuple>

#include "tools/io/ingest.h"
#include "tools/io/ingest_line.h"

namespace {

bool SameFloats(const std::vector<float>& a, const std::vector<float>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::bit_cast<uint32_t>(a[i]) != std::bit_cast<uint32_t>(b[i])) return false;
  }
  return true;
}

bool SameOp(const amem::Batch::Op& a, const amem::Batch::Op& b) {
  if (a.kind != b.kind || a.input.index() != b.input.index()) return false;
  if (const auto* x = std::get_if<amem::NodeInput>(&a.input)) {
    const amem::NodeInput& y = b.node();
    return std::tie(x->key, x->type, x->content, x->meta, x->ts, x->run, x->task, x->scope) ==
               std::tie(y.key, y.type, y.content, y.meta, y.ts, y.run, y.task, y.scope) &&
           std::bit_cast<uint32_t>(x->confidence) == std::bit_cast<uint32_t>(y.confidence) &&
           SameFloats(x->vector, y.vector);
  }
  if (const auto* x = std::get_if<amem::EdgeInput>(&a.input)) {
    const amem::EdgeInput& y = b.edge();
    return std::tie(x->src, x->rel, x->dst, x->payload, x->ts, x->run, x->task) ==
               std::tie(y.src, y.rel, y.dst, y.payload, y.ts, y.run, y.task) &&
           std::bit_cast<uint32_t>(x->weight) == std::bit_cast<uint32_t>(y.weight);
  }
  const amem::KvInput& x = a.kv();
  const amem::KvInput& y = b.kv();
  return std::tie(x.scope, x.ns, x.key, x.value, x.ts, x.run, x.task) ==
         std::tie(y.scope, y.ns, y.key, y.value, y.ts, y.run, y.task);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = amem::io::ParseIngest(text);
  if (!parsed.ok()) {
    const std::string& msg = parsed.status().message();
    if (!parsed.status().IsInvalidArgument() || msg.rfind("line ", 0) != 0) __builtin_trap();
  } else if (parsed->op_lines.size() != parsed->batch.ops().size()) {
    __builtin_trap();
  }
  // Each line through both parsers.
  amem::io::FastLineParser fast;
  std::string padded;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    padded.assign(line);
    padded.append(amem::io::kLinePadding, '\0');
    amem::Batch by_fast, by_reference;
    if (!fast.Add(padded.data(), line.size(), &by_fast)) continue;
    if (!amem::io::AddIngestLine(line, &by_reference).ok()) __builtin_trap();
    if (by_fast.size() != 1 || by_reference.size() != 1 ||
        !SameOp(by_fast.ops()[0], by_reference.ops()[0])) {
      __builtin_trap();
    }
  }
  return 0;
}
