#include "snapshot/entity_search.h"

#include <algorithm>
#include <bit>

#include "common/coding.h"
#include "common/json_parse.h"

namespace amem::snapshot {
namespace {

constexpr size_t kHashSuffix = 17;  // "#" + 16 hex digits

}  // namespace

bool EntityNameOf(std::string_view key, std::string_view* name) {
  if (!key.starts_with(kEntityKeyPrefix)) return false;
  *name = key.substr(kEntityKeyPrefix.size());
  return true;
}

bool ObservationEntityOf(std::string_view key, std::string_view* entity) {
  if (!key.starts_with(kObservationKeyPrefix) ||
      key.size() < kObservationKeyPrefix.size() + kHashSuffix) {
    return false;
  }
  if (key[key.size() - kHashSuffix] != '#') return false;
  *entity = key.substr(kObservationKeyPrefix.size(),
                       key.size() - kObservationKeyPrefix.size() - kHashSuffix);
  return true;
}

std::string ObservationKeyPrefix(std::string_view name) {
  std::string prefix(kObservationKeyPrefix);
  prefix.append(name).push_back('#');
  return prefix;
}

std::string EntityTypeFrom(std::string_view meta_text, NodeType type) {
  auto fallback = [type] { return NodeTypeName(type) ? NodeTypeName(type) : "entity"; };
  // Neither member's name in the text, not even escaped: no need to parse it
  // (the exporter asks for a million entities' types).
  if (meta_text.find("entityType") == std::string_view::npos &&
      meta_text.find("kind") == std::string_view::npos &&
      meta_text.find('\\') == std::string_view::npos) {
    return fallback();
  }
  Result<nlohmann::json> meta = ParseJsonLimited<nlohmann::json>(meta_text, "stored JSON");
  if (meta.ok() && meta->is_object()) {
    for (const char* field : {"entityType", "kind"}) {
      if (auto it = meta->find(field); it != meta->end() && it->is_string()) return *it;
    }
  }
  return fallback();
}

bool LabelsInTexts(std::string_view name, std::string_view content, std::string_view meta,
                   std::string_view type) {
  if (content != name) return false;
  if (type.empty()) return true;
  // '"' + type + '"' in meta, without building it.
  for (size_t at = meta.find(type); at != std::string_view::npos; at = meta.find(type, at + 1)) {
    if (at > 0 && meta[at - 1] == '"' && at + type.size() < meta.size() && meta[at + type.size()] == '"') {
      return true;
    }
  }
  return false;
}

std::string AsciiLower(std::string_view s) {
  std::string out;
  AppendAsciiLower(s, &out);
  return out;
}

void AppendAsciiLower(std::string_view s, std::string* out) {
  const size_t at = out->size();
  out->append(s);
  for (size_t i = at; i < out->size(); ++i) {
    char& c = (*out)[i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
}

uint32_t GramOf(std::string_view bytes) {
  uint32_t g = static_cast<uint32_t>(bytes.size()) << 24;
  for (size_t i = 0; i < bytes.size(); ++i) {
    g |= uint32_t{static_cast<uint8_t>(bytes[i])} << (8 * (bytes.size() - 1 - i));
  }
  return g;
}

std::vector<uint32_t> QueryGrams(std::string_view lowered) {
  if (lowered.size() < 3) return {GramOf(lowered)};
  std::vector<uint32_t> grams;
  for (size_t p = 0; p + 3 <= lowered.size(); ++p) grams.push_back(GramOf(lowered.substr(p, 3)));
  return grams;
}

bool DecodeGramList(const GramList& list, uint32_t limit, std::vector<uint32_t>* out) {
  out->clear();
  if (list.count > list.bytes.size()) return false;  // a number takes a byte at least
  out->reserve(list.count);
  std::string_view in = list.bytes;
  uint32_t v = 0, gap = 0;
  for (uint32_t k = 0; k < list.count; ++k) {
    if (!GetVarint32(&in, &gap)) return false;
    if (k > 0 && (gap == 0 || gap > UINT32_MAX - v)) return false;
    v = k == 0 ? gap : v + gap;
    if (v >= limit) return false;
    out->push_back(v);
  }
  return in.empty();
}

GramIndex::GramIndex() = default;

void GramIndex::Add(List* list, uint32_t k) {
  if (list->count != 0 && list->last == k) return;
  const size_t before = list->bytes.size();
  PutVarint32(&list->bytes, list->count == 0 ? k : k - list->last);
  posting_bytes_ += list->bytes.size() - before;
  list->last = k;
  ++list->count;
}

void GramIndex::AddField(uint32_t k, std::string_view field) {
  // The direct table (2.6 MB) only once there is text: a writer makes an index
  // for every file, a delta's of a few nodes included.
  if (short_.empty()) short_.resize(kShortGrams);
  ForEachGram(field, [&](uint32_t g) { Add((g >> 24) < 3 ? &short_[ShortSlot(g)] : &Get(g), k); });
}

GramList GramIndex::Find(uint32_t gram) const {
  const uint32_t length = gram >> 24;
  if (length == 0 || length > 3 || (length == 1 && (gram & 0xFFFF00)) || (length == 2 && (gram & 0xFF0000))) {
    return {};
  }
  if (length < 3 && short_.empty()) return {};
  const List* list = length < 3 ? &short_[ShortSlot(gram)] : Lookup(gram);
  return list == nullptr ? GramList{} : GramList{list->bytes, list->count};
}

std::vector<uint32_t> GramIndex::SortedGrams() const {
  std::vector<uint32_t> grams;
  for (uint32_t b = 0; b < 256 && !short_.empty(); ++b) {
    if (short_[b].count != 0) grams.push_back(uint32_t{1} << 24 | b);
  }
  for (uint32_t ab = 0; ab < 65536 && !short_.empty(); ++ab) {
    if (short_[256 + ab].count != 0) grams.push_back(uint32_t{2} << 24 | ab);
  }
  const size_t shorts = grams.size();
  for (uint32_t g : keys_) {
    if (g != kEmpty) grams.push_back(g);
  }
  std::sort(grams.begin() + static_cast<ptrdiff_t>(shorts), grams.end());
  return grams;
}

const GramIndex::List* GramIndex::Lookup(uint32_t g) const {
  if (keys_.empty()) return nullptr;
  for (size_t i = Slot(g);; i = (i + 1) & mask_) {
    if (keys_[i] == g) return &lists_[index_[i]];
    if (keys_[i] == kEmpty) return nullptr;
  }
}

GramIndex::List& GramIndex::Get(uint32_t g) {
  if (2 * (lists_.size() + 1) > keys_.size()) Grow();
  size_t i = Slot(g);
  for (; keys_[i] != g; i = (i + 1) & mask_) {
    if (keys_[i] == kEmpty) {
      keys_[i] = g;
      index_[i] = static_cast<uint32_t>(lists_.size());
      lists_.emplace_back();
      break;
    }
  }
  return lists_[index_[i]];
}

void GramIndex::Grow() {
  const size_t capacity = keys_.empty() ? 1024 : 2 * keys_.size();
  std::vector<uint32_t> keys(capacity, kEmpty), index(capacity);
  mask_ = capacity - 1;
  shift_ = 32 - std::countr_zero(capacity);
  for (size_t j = 0; j < keys_.size(); ++j) {
    if (keys_[j] == kEmpty) continue;
    size_t i = Slot(keys_[j]);
    while (keys[i] != kEmpty) i = (i + 1) & mask_;
    keys[i] = keys_[j];
    index[i] = index_[j];
  }
  keys_.swap(keys);
  index_.swap(index);
}

}  // namespace amem::snapshot
