// The store as MCP resources (docs/MCP.md "Resources"): amem://node/{key},
// amem://kv/{scope}/{ns}/{key} and amem://stats; resources/list, /templates/list,
// /read, /subscribe and /unsubscribe, and the check that finds which subscribed
// resources other writes changed (notifications/resources/updated).
//
// URIs: the parts are percent-encoded UTF-8 (RFC 3986). A node key is everything
// after amem://node/, so a '/' in it may stay as it is; a kv scope and namespace are
// one segment each (a '/' in them is %2F) and the kv key is the rest. A character a
// URI cannot hold (a control character, a space, " < > \ ^ ` { | }) and '?' or '#'
// must be percent-encoded; each part must decode to valid UTF-8 within the store's
// limits. Errors (JSON-RPC):
//   -32602 invalid params   a malformed amem URI: bad percent-encoding, an empty or
//                           too long part, a missing part, a raw control character
//   -32002 not found        no such node or kv entry (deleted ones included), or a
//                           URI that names no resource of this server (another
//                           scheme, amem://edge/...); error.data is {"uri": URI}
#ifndef AMEM_TOOLS_MCP_RESOURCES_H_
#define AMEM_TOOLS_MCP_RESOURCES_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "store/store.h"
#include "tools/mcp/server.h"
#include "tools/mcp/tool.h"

namespace amem::mcp {

inline constexpr int kResourceNotFound = -32002;  // MCP's code for an unknown resource

struct ResourceUri {
  enum class Kind { kStats, kNode, kKv };
  Kind kind = Kind::kStats;
  std::string key;         // the node key, or the kv key
  std::string scope, ns;   // kv only
  bool operator==(const ResourceUri&) const = default;
};

// Parses an amem resource URI. InvalidArgument for a malformed amem URI (the
// message says what and where); NotFound for a URI that names no amem resource.
Result<ResourceUri> ParseResourceUri(std::string_view uri);

// At most this many subscriptions per session; more is -32602.
inline constexpr size_t kMaxSubscriptions = 10000;

class Resources : public ResourceProvider {
 public:
  // `store` must outlive this.
  explicit Resources(const Store* store) : store_(store) {}

  // Answers resources/list, resources/templates/list, resources/read,
  // resources/subscribe and resources/unsubscribe; nullopt for any other method.
  std::optional<ResourceAnswer> Handle(std::string_view method, const Json& params) override;

  // The JSON document resources/read gives for `r` (as of the latest revision).
  Result<Json> Read(const ResourceUri& r) const;

  bool has_subscriptions() const override { return !subscriptions_.empty(); }
  // The subscribed URIs (as the client wrote them) whose resources changed since
  // they were subscribed or last reported: a put or delete of the node, or of an
  // edge leaving or entering it; a put or delete of the kv entry; for amem://stats,
  // any new revision. Reads the store's revision and, when it moved, its change log
  // since then; each change is reported once. Writes of this process count too.
  // When that log was compacted away, every subscription behind it is reported.
  // Server::Serve calls it at most every kResourceCheckIntervalMs.
  std::vector<std::string> CheckForUpdates() override;

 private:
  struct Subscription {
    ResourceUri resource;
    uint64_t seen = 0;  // the store revision up to which changes are known
  };
  ResourceAnswer ReadAnswer(const Json& params) const;
  ResourceAnswer Subscribe(const Json& params, bool subscribe);

  const Store* store_;
  std::map<std::string, Subscription> subscriptions_;  // by the URI as written
};

}  // namespace amem::mcp

#endif  // AMEM_TOOLS_MCP_RESOURCES_H_
