// The optional JSON Lines telemetry sink (docs/STORE.md, docs/DESIGN.md §3). One line per
// event: {"op","memory_id","entity_type","scope","run_id","task_id","timestamp"}.
#ifndef AMEM_STORE_INTERNAL_TELEMETRY_H_
#define AMEM_STORE_INTERNAL_TELEMETRY_H_

#include <cstdint>
#include <string>
#include <string_view>

namespace amem::store_internal {

class Telemetry {
 public:
  explicit Telemetry(std::string path) : path_(std::move(path)) {}
  bool enabled() const { return !path_.empty(); }

  // Appends one event line to *lines.
  static void AddEvent(std::string* lines, std::string_view op, uint64_t memory_id,
                       std::string_view entity_type, std::string_view scope,
                       std::string_view run, std::string_view task, int64_t ts);
  // Appends `lines` to the sink with one O_APPEND write, so that events from
  // several processes never interleave inside a line. Failures are ignored:
  // telemetry never fails an operation.
  void Write(const std::string& lines) const;

 private:
  std::string path_;
};

}  // namespace amem::store_internal

#endif  // AMEM_STORE_INTERNAL_TELEMETRY_H_
