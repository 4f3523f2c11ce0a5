#include "store/internal/telemetry.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <nlohmann/json.hpp>

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
  int fd = ::open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return;
  size_t done = 0;
  while (done < lines.size()) {
    ssize_t n = ::write(fd, lines.data() + done, lines.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

}  // namespace amem::store_internal
