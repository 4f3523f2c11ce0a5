// A tmpfs of a given size mounted on a fresh directory for the life of the object:
// a small disk to fill (a full disk during writes or a cache export), or, remounted
// read-only, a truly read-only file system. Mounting takes root (or CAP_SYS_ADMIN);
// where it fails the tests say so with WARN and skip.
#ifndef AMEM_TESTS_SMALL_DISK_H_
#define AMEM_TESTS_SMALL_DISK_H_

#include <sys/mount.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>

#include "tests/store/store_test_util.h"

namespace amem::testing {

class SmallDisk {
 public:
  explicit SmallDisk(const std::string& size = "8m") {
    dir_ = tmp_.Sub("disk");
    std::filesystem::create_directories(dir_);
    const std::string options = "size=" + size;
    if (::mount("tmpfs", dir_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
      why_ = std::strerror(errno);
    }
  }
  ~SmallDisk() {
    if (why_.empty()) ::umount2(dir_.c_str(), MNT_DETACH);
  }
  SmallDisk(const SmallDisk&) = delete;
  SmallDisk& operator=(const SmallDisk&) = delete;
  bool mounted() const { return why_.empty(); }
  const std::string& why() const { return why_; }
  const std::string& dir() const { return dir_; }
  // Makes the file system read-only (true) or writable again; false on failure.
  bool SetReadOnly(bool read_only) {
    const unsigned long flags =
        MS_REMOUNT | MS_NOSUID | MS_NODEV | (read_only ? static_cast<unsigned long>(MS_RDONLY) : 0UL);
    return ::mount("tmpfs", dir_.c_str(), "tmpfs", flags, nullptr) == 0;
  }

 private:
  TempDir tmp_;
  std::string dir_;
  std::string why_;
};

}  // namespace amem::testing

#endif  // AMEM_TESTS_SMALL_DISK_H_
