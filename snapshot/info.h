// `amem info FILE` and `amem verify FILE` as library functions returning plain
// structs; the CLI renders them and maps them to exit codes.
#ifndef AMEM_SNAPSHOT_INFO_H_
#define AMEM_SNAPSHOT_INFO_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/status.h"
#include "snapshot/reader.h"

namespace amem::snapshot {

struct InfoResult {
  uint16_t version = 0, flags = 0;
  uint32_t features = 0;
  uint64_t file_size = 0;
  uint32_t nodes = 0, edges = 0, stubs = 0, kv = 0, terms = 0;
  uint32_t dimension = 0, sessions = 0;
  bool has_vectors = false, has_term_index = false, has_doc_lengths = false;
  bool has_extensions = false, has_checksum = false, content_compressed = false;
  bool index_ignored = false;  // a seed v0.1 index section, ignored (Reader)
  // The memory server's entity search block (docs/FORMAT.md §8.23) and its entities.
  bool has_entity_search = false;
  uint32_t search_entities = 0;
  // Its odd labels (block 0x08, §8.24): how many, nullopt without the block.
  std::optional<uint32_t> search_odd_labels;
  uint64_t content_bytes = 0, content_uncompressed = 0;
  int64_t newest_ts = 0;
  std::vector<uint32_t> type_counts;  // index = node type (0..10)
  struct Session {
    std::string run;
    uint32_t nodes = 0;
  };
  std::vector<Session> session_list;  // by session id
  struct Block {
    uint32_t tag = 0;
    std::string name;
    uint64_t offset = 0, length = 0;
  };
  std::vector<Block> blocks;
};

InfoResult SnapshotInfo(const Reader& reader);
// Opens `path` (structure validation only) and describes it.
Result<InfoResult> SnapshotInfo(const std::string& path);
std::string InfoToJson(const InfoResult& info);
std::string InfoToText(const InfoResult& info);

// `amem verify`: which check failed decides the exit code.
struct VerifyReport {
  enum class Outcome : uint8_t {
    kOk,         // structure valid, checksum and content frame intact
    kIOError,    // the file could not be read
    kStructure,  // Reader::Open or CheckIndexes rejected it (header, extents,
                 // records, indexes)
    kChecksum,   // opened, but the checksum or the content frame does not match
  };
  Outcome outcome = Outcome::kOk;
  Status status;  // OK, or what failed
  // False for a file without a checksum block: kOk then means only that the
  // structure, the indexes and the content frame hold; changed bytes elsewhere
  // (a weight, a key) cannot be detected.
  bool has_checksum = true;
};
VerifyReport VerifySnapshotFile(const std::string& path);

}  // namespace amem::snapshot

#endif  // AMEM_SNAPSHOT_INFO_H_
