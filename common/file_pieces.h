// Reading a file in pieces of a fixed size, for callers that digest or send it
// without holding all of it (amem verify-replica, publish-snapshot).
#ifndef AMEM_COMMON_FILE_PIECES_H_
#define AMEM_COMMON_FILE_PIECES_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace amem {

// Reads the file at `path` from start to end and calls fn with its bytes in pieces
// of at most `piece` bytes (only the last one shorter), stopping at fn's first
// error, which it returns. Returns how many bytes were read; IOError when the file
// cannot be read.
Result<uint64_t> ReadFileInPieces(const std::string& path, size_t piece,
                                  const std::function<Status(std::string_view)>& fn);

}  // namespace amem

#endif  // AMEM_COMMON_FILE_PIECES_H_
