#include "store/internal/telemetry.h"

#include <nlohmann/json.hpp>

#include "common/files.h"
#include "common/hash.h"

namespace amem::store_internal {

void Telemetry::AddEvent(std::string* lines, std::string_view op, uint64_t memory_id,
                         std::string_view entity_type, std::string_view scope,
                         std::string_view run, std::string_view task, int64_t ts) {
  // nlohmann's ordered output would sort keys; the field order here is the one docs/STORE.md lists.
  auto str = [](std::string_view s) {
    return nlohmann::json(std::string(s))
        .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  };
  lines->append("{\"op\":").append(str(op));
  lines->append(",\"memory_id\":\"").append(FormatHexId(memory_id)).append("\"");
  lines->append(",\"entity_type\":").append(str(entity_type));
  lines->append(",\"scope\":").append(str(scope));
  lines->append(",\"run_id\":").append(str(run));
  lines->append(",\"task_id\":").append(str(task));
  lines->append(",\"timestamp\":").append(std::to_string(ts)).append("}\n");
}

void Telemetry::Write(const std::string& lines) const {
  if (path_.empty() || lines.empty()) return;
  // Best effort, as documented: a failure (or a FIFO, refused) writes nothing.
  (void)AppendToFile(path_, lines, "telemetry");
}

}  // namespace amem::store_internal
