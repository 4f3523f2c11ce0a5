#include "tools/mcp/resources.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <tuple>
#include <utility>

#include "common/model.h"
#include "common/utf8.h"
#include "tools/mcp/memory_tools.h"
#include "tools/mcp/server.h"

namespace amem::mcp {
namespace {

constexpr int kRpcInvalidParams = -32602;
constexpr int kRpcInternalError = -32603;

constexpr std::string_view kAmemScheme = "amem://";
constexpr const char* kServedUris =
    "amem serves amem://node/{key}, amem://kv/{scope}/{ns}/{key} and amem://stats";
constexpr const char* kJsonMimeType = "application/json";

std::string HexByte(unsigned char c) {
  char buf[4];
  std::snprintf(buf, sizeof(buf), "%02X", c);
  return buf;
}

int HexDigitValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A character the URI may not hold as it is: InvalidArgument naming it and its
// byte, else OK. The URI is valid UTF-8.
Status CheckUriCharacters(std::string_view uri) {
  for (size_t i = 0; i < uri.size(); ++i) {
    const auto c = static_cast<unsigned char>(uri[i]);
    const std::string at = " at byte " + std::to_string(i);
    if (c < 0x20 || c == 0x7f) {
      return Status::InvalidArgument("control character U+00" + HexByte(c) + at +
                                     ": percent-encode it (%" + HexByte(c) + ")");
    }
    if (c == 0xc2 && i + 1 < uri.size() && static_cast<unsigned char>(uri[i + 1]) <= 0x9f) {
      const auto c1 = static_cast<unsigned char>(uri[i + 1]);
      return Status::InvalidArgument("control character U+00" + HexByte(c1) + at +
                                     ": percent-encode it (%C2%" + HexByte(c1) + ")");
    }
    if (c == '?' || c == '#') {
      return Status::InvalidArgument(std::string("'") + static_cast<char>(c) + "'" + at +
                                     ": amem URIs take no " + (c == '?' ? "query" : "fragment") +
                                     "; percent-encode it (%" + HexByte(c) + ") in a key");
    }
    if (std::string_view(" \"<>\\^`{|}").find(static_cast<char>(c)) != std::string_view::npos) {
      std::string what =
          c == ' ' ? std::string("a space") : "'" + std::string(1, static_cast<char>(c)) + "'";
      return Status::InvalidArgument(
          what + at + " must be percent-encoded (%" + HexByte(c) + ")" +
          (c == '{' || c == '}' ? "; fill in the template's {...}" : ""));
    }
  }
  return Status::OK();
}

// `part` percent-decoded. `offset`: where it starts in the URI, for messages.
Result<std::string> PercentDecodePart(std::string_view part, size_t offset) {
  std::string out;
  out.reserve(part.size());
  for (size_t i = 0; i < part.size(); ++i) {
    if (part[i] != '%') {
      out.push_back(part[i]);
      continue;
    }
    int hi = i + 2 < part.size() ? HexDigitValue(part[i + 1]) : -1;
    int lo = i + 2 < part.size() ? HexDigitValue(part[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
      return Status::InvalidArgument("bad percent-encoding at byte " + std::to_string(offset + i) +
                                     ": '%' must be followed by two hex digits (%25 is '%')");
    }
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

// A decoded part checked as the store checks it: 1..max_bytes bytes of UTF-8 (and
// no NUL in a name).
Result<std::string> DecodeUriPart(std::string_view part, size_t offset, std::string_view what,
                                  size_t max_bytes, bool allow_nul) {
  auto decoded = PercentDecodePart(part, offset);
  if (!decoded.ok()) return decoded.status();
  std::string w(what);
  if (decoded->empty()) return Status::InvalidArgument("empty " + w);
  if (decoded->size() > max_bytes) {
    return Status::InvalidArgument(w + " longer than " + std::to_string(max_bytes) +
                                   " bytes once decoded");
  }
  if (!IsValidUtf8(*decoded)) return Status::InvalidArgument(w + " not valid UTF-8 once decoded");
  if (!allow_nul && decoded->find('\0') != std::string::npos) {
    return Status::InvalidArgument(w + " holds NUL (%00)");
  }
  return decoded;
}

ResourceAnswer ErrorAnswer(int code, std::string message, Json data = nullptr) {
  ResourceAnswer a;
  a.code = code;
  a.message = std::move(message);
  a.data = std::move(data);
  return a;
}

ResourceAnswer ResultAnswer(Json result) {
  ResourceAnswer a;
  a.result = std::move(result);
  return a;
}

// A resource (field "uri") or a template (field "uriTemplate") as the lists give it.
Json DescribeResource(std::string_view field, std::string_view uri, std::string_view name,
                      std::string_view title, std::string_view description) {
  return Json{{field, uri},
              {"name", name},
              {"title", title},
              {"description", description},
              {"mimeType", kJsonMimeType}};
}

// params.uri, or an error answer.
Result<std::string> UriParam(const Json& params, std::string_view method) {
  auto it = params.find("uri");
  if (it == params.end() || !it->is_string()) {
    return Status::InvalidArgument(std::string(method) + ": params.uri must be a string");
  }
  return it->get<std::string>();
}

// The error answer of a URI ParseResourceUri refused (or a read that failed).
ResourceAnswer UriErrorAnswer(const std::string& uri, const Status& s, std::string_view method) {
  const std::string message = std::string(method) + " " + uri + ": " + s.message();
  if (s.IsNotFound()) return ErrorAnswer(kResourceNotFound, message, Json{{"uri", uri}});
  if (s.IsInvalidArgument()) return ErrorAnswer(kRpcInvalidParams, message, Json{{"uri", uri}});
  return ErrorAnswer(kRpcInternalError, message);
}

}  // namespace

Result<ResourceUri> ParseResourceUri(std::string_view uri) {
  if (uri.empty()) return Status::InvalidArgument(std::string("empty URI; ") + kServedUris);
  if (!IsValidUtf8(uri)) return Status::InvalidArgument("the URI is not valid UTF-8");
  AMEM_RETURN_IF_ERROR(CheckUriCharacters(uri));
  if (!uri.starts_with(kAmemScheme)) {
    return Status::NotFound(std::string("not an amem URI; ") + kServedUris);
  }
  const std::string_view rest = uri.substr(kAmemScheme.size());
  const size_t slash = rest.find('/');
  const std::string_view kind = rest.substr(0, slash);
  const std::string_view path =
      slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
  const size_t path_at = kAmemScheme.size() + kind.size() + 1;
  ResourceUri r;
  if (kind == "stats") {
    if (slash != std::string_view::npos) {
      return Status::InvalidArgument("amem://stats takes no path");
    }
    return r;
  }
  if (kind == "node") {
    if (slash == std::string_view::npos) {
      return Status::InvalidArgument("missing node key: amem://node/{key}");
    }
    r.kind = ResourceUri::Kind::kNode;
    AMEM_ASSIGN_OR_RETURN(key, DecodeUriPart(path, path_at, "node key", kMaxKeyBytes, true));
    r.key = std::move(key);
    return r;
  }
  if (kind == "kv") {
    const size_t s1 = path.find('/');
    const size_t s2 = s1 == std::string_view::npos ? s1 : path.find('/', s1 + 1);
    if (slash == std::string_view::npos || s2 == std::string_view::npos) {
      return Status::InvalidArgument(
          "missing parts: amem://kv/{scope}/{ns}/{key} (a '/' in the scope or namespace is "
          "%2F)");
    }
    r.kind = ResourceUri::Kind::kKv;
    AMEM_ASSIGN_OR_RETURN(
        scope, DecodeUriPart(path.substr(0, s1), path_at, "scope", kMaxNameBytes, false));
    AMEM_ASSIGN_OR_RETURN(ns, DecodeUriPart(path.substr(s1 + 1, s2 - s1 - 1), path_at + s1 + 1,
                                            "namespace", kMaxNameBytes, false));
    AMEM_ASSIGN_OR_RETURN(
        key, DecodeUriPart(path.substr(s2 + 1), path_at + s2 + 1, "kv key", kMaxNameBytes, false));
    r.scope = std::move(scope);
    r.ns = std::move(ns);
    r.key = std::move(key);
    return r;
  }
  return Status::NotFound("no resource amem://" + std::string(kind) + "/...; " + kServedUris);
}

Result<Json> Resources::Read(const ResourceUri& r) const {
  if (r.kind == ResourceUri::Kind::kStats) return StoreStatsJson(*store_);
  // One revision for the whole document.
  AMEM_ASSIGN_OR_RETURN(revision, store_->revision());
  const ReadView view = ReadView::AtRevision(revision);
  Json doc = Json::object();
  if (r.kind == ResourceUri::Kind::kKv) {
    AMEM_ASSIGN_OR_RETURN(kv, store_->GetKv(r.scope, r.ns, r.key, view));
    doc["entry"] = KvJson(kv);
  } else {
    AMEM_ASSIGN_OR_RETURN(node, store_->GetNode(r.key, view));
    AMEM_ASSIGN_OR_RETURN(out, store_->Out(node.key, {}, view));
    AMEM_ASSIGN_OR_RETURN(in, store_->In(node.key, {}, view));
    doc["node"] = NodeJson(node);
    doc["out_total"] = out.size();
    doc["in_total"] = in.size();
  }
  doc["revision"] = revision;
  return doc;
}

std::optional<ResourceAnswer> Resources::Handle(std::string_view method, const Json& params) {
  if (method == "resources/list") {
    // One fixed resource: nodes and entries are reached through the templates, never
    // listed (a store holds millions). There is no second page.
    if (auto c = params.find("cursor"); c != params.end() && !c->is_null()) {
      return ErrorAnswer(kRpcInvalidParams,
                         "resources/list: unknown cursor (the list has one page)");
    }
    return ResultAnswer(Json{{"resources", Json::array({DescribeResource(
                                               "uri", "amem://stats", "stats", "Store statistics",
                                               "Path, revision and counts of the store (as "
                                               "store_stats).")})}});
  }
  if (method == "resources/templates/list") {
    return ResultAnswer(Json{
        {"resourceTemplates",
         Json::array(
             {DescribeResource("uriTemplate", "amem://node/{key}", "node", "Memory",
                               "A memory by key (percent-encoded): its record and edge counts."),
              DescribeResource("uriTemplate", "amem://kv/{scope}/{ns}/{key}", "kv", "Policy entry",
                               "A policy entry (scope project, ns decisions, ...), parts "
                               "percent-encoded.")})}});
  }
  if (method == "resources/read") return ReadAnswer(params);
  if (method == "resources/subscribe") return Subscribe(params, true);
  if (method == "resources/unsubscribe") return Subscribe(params, false);
  return std::nullopt;
}

ResourceAnswer Resources::ReadAnswer(const Json& params) const {
  auto uri = UriParam(params, "resources/read");
  if (!uri.ok()) return ErrorAnswer(kRpcInvalidParams, uri.status().message());
  auto parsed = ParseResourceUri(*uri);
  if (!parsed.ok()) return UriErrorAnswer(*uri, parsed.status(), "resources/read");
  auto doc = Read(*parsed);
  if (!doc.ok()) {
    // A key the store refuses to look up is a bad URI too; a missing record is
    // not found.
    return UriErrorAnswer(*uri, doc.status(), "resources/read");
  }
  return ResultAnswer(Json{
      {"contents",
       Json::array({Json{{"uri", *uri}, {"mimeType", kJsonMimeType}, {"text", DumpLine(*doc)}}})}});
}

ResourceAnswer Resources::Subscribe(const Json& params, bool subscribe) {
  const char* method = subscribe ? "resources/subscribe" : "resources/unsubscribe";
  auto uri = UriParam(params, method);
  if (!uri.ok()) return ErrorAnswer(kRpcInvalidParams, uri.status().message());
  auto parsed = ParseResourceUri(*uri);
  if (!parsed.ok()) return UriErrorAnswer(*uri, parsed.status(), method);
  if (!subscribe) {
    std::erase_if(subscriptions_, [&](const auto& s) { return s.second.resource == *parsed; });
    return ResultAnswer(Json::object());
  }
  // A repeated subscribe keeps its place: changes it has not been told are still told.
  if (subscriptions_.contains(*uri)) return ResultAnswer(Json::object());
  if (subscriptions_.size() >= kMaxSubscriptions) {
    return ErrorAnswer(kRpcInvalidParams, std::string(method) + ": at most " +
                                              std::to_string(kMaxSubscriptions) +
                                              " subscriptions; unsubscribe some first");
  }
  // A node or entry that does not exist yet may be subscribed: its creation is a
  // change. Changes from now on are reported.
  auto revision = store_->revision();
  if (!revision.ok()) return UriErrorAnswer(*uri, revision.status(), method);
  subscriptions_[*uri] = Subscription{*parsed, *revision};
  return ResultAnswer(Json::object());
}

std::vector<std::string> Resources::CheckForUpdates() {
  std::vector<std::string> updated;
  if (subscriptions_.empty()) return updated;
  auto latest = store_->revision();
  if (!latest.ok()) {
    std::fprintf(stderr, "amem mcp: cannot check subscribed resources: %s\n",
                 latest.status().ToString().c_str());
    return updated;
  }
  uint64_t since = UINT64_MAX;
  for (const auto& [uri, s] : subscriptions_) since = std::min(since, s.seen);
  if (since == *latest) return updated;
  // Which subscriptions a change concerns: by node key, and by kv scope/ns/key.
  std::multimap<std::string, Subscription*, std::less<>> nodes;
  std::multimap<std::tuple<std::string, std::string, std::string>, Subscription*> entries;
  std::set<const Subscription*> changed;
  for (auto& [uri, s] : subscriptions_) {
    if (s.resource.kind == ResourceUri::Kind::kNode) nodes.emplace(s.resource.key, &s);
    if (s.resource.kind == ResourceUri::Kind::kKv) {
      entries.emplace(std::make_tuple(s.resource.scope, s.resource.ns, s.resource.key), &s);
    }
    // The stats change with every revision; a store that went back (restored from
    // a backup, recreated) may have changed anything.
    if (s.resource.kind == ResourceUri::Kind::kStats || *latest < s.seen) {
      if (*latest != s.seen) changed.insert(&s);
    }
  }
  auto touch_node = [&](std::string_view key, uint64_t rev) {
    auto [lo, hi] = nodes.equal_range(key);
    for (auto it = lo; it != hi; ++it) {
      if (rev > it->second->seen) changed.insert(it->second);
    }
  };
  Status s = Status::OK();
  if (since < *latest) {
    s = store_->ForEachChangeSinceRevision(since, [&](const Change& c) {
      if (c.rev > *latest) return Status::OK();  // committed after `latest`: next time
      switch (c.kind) {
        case Change::Kind::kPutNode:
        case Change::Kind::kDeleteNode:
          touch_node(c.key, c.rev);
          break;
        case Change::Kind::kPutEdge:
        case Change::Kind::kDeleteEdge:
          touch_node(c.src_key, c.rev);
          touch_node(c.dst_key, c.rev);
          break;
        case Change::Kind::kPutKv:
        case Change::Kind::kDeleteKv: {
          auto [lo, hi] = entries.equal_range(std::make_tuple(c.scope, c.ns, c.key));
          for (auto it = lo; it != hi; ++it) {
            if (c.rev > it->second->seen) changed.insert(it->second);
          }
          break;
        }
        case Change::Kind::kDefineRelation:
          break;
      }
      return Status::OK();
    });
  }
  if (!s.ok()) {
    // The log since then was compacted away: every subscription may have changed.
    std::fprintf(stderr, "amem mcp: subscribed resources: %s; reporting all as updated\n",
                 s.ToString().c_str());
  }
  for (auto& [uri, sub] : subscriptions_) {
    if (changed.contains(&sub) || (!s.ok() && sub.seen != *latest)) updated.push_back(uri);
    sub.seen = *latest;
  }
  return updated;
}

}  // namespace amem::mcp
