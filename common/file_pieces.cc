#include "common/file_pieces.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace amem {

Result<uint64_t> ReadFileInPieces(const std::string& path, size_t piece,
                                  const std::function<Status(std::string_view)>& fn) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return Status::IOError(path + ": " + std::strerror(errno));
  std::string buf(piece, '\0');
  uint64_t total = 0;
  Status status;
  for (;;) {
    size_t have = 0;  // fill the piece: read may return less than asked
    while (have < piece) {
      const ssize_t n = ::read(fd, buf.data() + have, piece - have);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) status = Status::IOError(path + ": " + std::strerror(errno));
      if (n <= 0) break;
      have += static_cast<size_t>(n);
    }
    if (status.ok() && have > 0) status = fn(std::string_view(buf.data(), have));
    total += have;
    if (!status.ok() || have < piece) break;
  }
  ::close(fd);
  AMEM_RETURN_IF_ERROR(status);
  return total;
}

}  // namespace amem
