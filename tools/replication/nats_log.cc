// cli::RevisionLog on NATS JetStream, through the nats.c client (libnats-dev).
#include "tools/replication/nats_log.h"

#include <dlfcn.h>

#include <sys/random.h>

#include <array>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nats/nats.h>
#include <nlohmann/json.hpp>

#include "common/file_pieces.h"
#include "common/hash.h"
#include "common/sha256.h"

namespace amem::replication {

namespace {

// libnats is opened when a bound store first needs its stream, not linked: the
// client library brings OpenSSL, whose loading cost every amem process about 4 ms
// (15 ms against 11 ms for `amem --version`) whether it replicates or not.
#define AMEM_NATS_FUNCTIONS(X) \
  X(natsMsg_Destroy) \
  X(natsMsgHeader_Set) \
  X(natsMsgHeader_Get) \
  X(js_PublishMsgAsync) \
  X(js_PublishAsyncComplete) \
  X(js_PublishAsyncGetPendingList) \
  X(natsMsgList_Destroy) \
  X(jsPubOptions_Init) \
  X(nats_GetLastError) \
  X(natsStatus_GetText) \
  X(natsOptions_SetUserCredentialsFromFiles) \
  X(natsOptions_SetTimeout) \
  X(natsOptions_SetServers) \
  X(natsOptions_SetSecure) \
  X(natsOptions_SetReconnectWait) \
  X(natsOptions_SetMaxReconnect) \
  X(natsOptions_LoadCertificatesChain) \
  X(natsOptions_LoadCATrustedCertificates) \
  X(natsOptions_Destroy) \
  X(natsOptions_Create) \
  X(natsMsg_GetDataLength) \
  X(natsMsg_GetData) \
  X(natsMsg_Create) \
  X(natsConnection_JetStream) \
  X(natsConnection_Destroy) \
  X(natsConnection_Status) \
  X(natsConnection_Connect) \
  X(js_PublishMsg) \
  X(js_GetStreamInfo) \
  X(js_GetMsg) \
  X(js_GetLastMsg) \
  X(js_AddStream) \
  X(js_PurgeStream) \
  X(jsStreamInfo_Destroy) \
  X(jsStreamConfig_Init) \
  X(jsPubAck_Destroy) \
  X(jsOptions_Init) \
  X(jsCtx_Destroy) \
  X(jsSubOptions_Init) \
  X(js_SubscribeSync) \
  X(natsSubscription_NextMsg) \
  X(natsSubscription_Unsubscribe) \
  X(natsSubscription_Destroy) \
  X(natsMsg_GetMetaData) \
  X(jsMsgMetaData_Destroy) \
  X(kvConfig_Init) \
  X(js_CreateKeyValue) \
  X(js_KeyValue) \
  X(kvStore_Destroy) \
  X(kvStore_Get) \
  X(kvStore_Create) \
  X(kvEntry_Value) \
  X(kvEntry_ValueLen) \
  X(kvEntry_Destroy)

struct NatsApi {
#define AMEM_NATS_DECLARE(f) decltype(&::f) f = nullptr;
  AMEM_NATS_FUNCTIONS(AMEM_NATS_DECLARE)
#undef AMEM_NATS_DECLARE
};

NatsApi g_nats;

// Opens libnats (its runtime package's soname first) and finds every function
// used here, once. NotSupported saying what to install when it cannot.
Status LoadNats() {
  static Status loaded = [] {
    void* lib = nullptr;
    for (const char* name : {"libnats.so.3.4", "libnats.so"}) {
      lib = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
      if (lib != nullptr) break;
    }
    if (lib == nullptr) {
      return Status::NotSupported(std::string("cannot load the NATS client library (") +
                                  ::dlerror() + "): install libnats-dev (Debian)");
    }
#define AMEM_NATS_LOAD(f)                                                          \
  g_nats.f = reinterpret_cast<decltype(g_nats.f)>(::dlsym(lib, #f));               \
  if (g_nats.f == nullptr) {                                                       \
    return Status::NotSupported("the NATS client library lacks " #f               \
                                "; install libnats-dev 3.4 or later (Debian)");     \
  }
    AMEM_NATS_FUNCTIONS(AMEM_NATS_LOAD)
#undef AMEM_NATS_LOAD
    return Status::OK();
  }();
  return loaded;
}

const NatsApi& Nats() { return g_nats; }

std::string NatsError(natsStatus s, jsErrCode code = static_cast<jsErrCode>(0)) {
  std::string text = Nats().natsStatus_GetText(s);
  natsStatus last = NATS_OK;
  const char* detail = Nats().nats_GetLastError(&last);
  // The last error repeats the status's text after where it was raised: add it
  // only when it says more.
  if (detail != nullptr && *detail != '\0' && std::string(detail).find(text) == std::string::npos) {
    text += std::string(" (") + detail + ")";
  }
  if (code != 0) text += " [JetStream error " + std::to_string(static_cast<int>(code)) + "]";
  return text;
}

// A JetStream object store's object id: 22 characters of [0-9A-Za-z], random.
std::string NewNuid() {
  static constexpr char kDigits[] =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  unsigned char bytes[22];
  size_t got = 0;
  while (got < sizeof(bytes)) {
    const ssize_t n = ::getrandom(bytes + got, sizeof(bytes) - got, 0);
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  const auto salt = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  std::string id;
  for (size_t i = 0; i < sizeof(bytes); ++i) {
    const unsigned v = i < got ? bytes[i] : static_cast<unsigned>(salt >> (i % 8 * 8));
    id.push_back(kDigits[v % 62]);
  }
  return id;
}

// SHA-256 through OpenSSL's libcrypto, which libnats loads anyway (it uses the
// CPU's SHA instructions: 24 MB in about 0.02 s, against 0.13 s for
// common/sha256), else common/sha256.
struct Crypto {
  void* (*md_ctx_new)() = nullptr;
  void (*md_ctx_free)(void*) = nullptr;
  const void* (*sha256)() = nullptr;
  int (*init)(void*, const void*, void*) = nullptr;
  int (*update)(void*, const void*, size_t) = nullptr;
  int (*final)(void*, unsigned char*, unsigned int*) = nullptr;
};

const Crypto* LoadCrypto() {
  static const Crypto* crypto = []() -> const Crypto* {
    void* lib = ::dlopen("libcrypto.so.3", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) return nullptr;
    static Crypto c;
    c.md_ctx_new = reinterpret_cast<decltype(c.md_ctx_new)>(::dlsym(lib, "EVP_MD_CTX_new"));
    c.md_ctx_free = reinterpret_cast<decltype(c.md_ctx_free)>(::dlsym(lib, "EVP_MD_CTX_free"));
    c.sha256 = reinterpret_cast<decltype(c.sha256)>(::dlsym(lib, "EVP_sha256"));
    c.init = reinterpret_cast<decltype(c.init)>(::dlsym(lib, "EVP_DigestInit_ex"));
    c.update = reinterpret_cast<decltype(c.update)>(::dlsym(lib, "EVP_DigestUpdate"));
    c.final = reinterpret_cast<decltype(c.final)>(::dlsym(lib, "EVP_DigestFinal_ex"));
    const bool all = c.md_ctx_new && c.md_ctx_free && c.sha256 && c.init && c.update && c.final;
    return all ? &c : nullptr;
  }();
  return crypto;
}

class Digest256 {
 public:
  Digest256() {
    if (crypto_ == nullptr) return;
    ctx_ = crypto_->md_ctx_new();
    if (ctx_ != nullptr && crypto_->init(ctx_, crypto_->sha256(), nullptr) != 1) {
      crypto_->md_ctx_free(ctx_);
      ctx_ = nullptr;
    }
  }
  ~Digest256() {
    if (ctx_ != nullptr) crypto_->md_ctx_free(ctx_);
  }
  Digest256(const Digest256&) = delete;
  Digest256& operator=(const Digest256&) = delete;
  void Update(std::string_view bytes) {
    if (ctx_ != nullptr) {
      ok_ = crypto_->update(ctx_, bytes.data(), bytes.size()) == 1 && ok_;
    } else {
      own_.Update(bytes);
    }
  }
  // 64 lower-case hex digits; empty when libcrypto failed midway.
  std::string Hex() {
    std::array<uint8_t, 32> d{};
    if (ctx_ != nullptr) {
      unsigned int n = 0;
      if (!ok_ || crypto_->final(ctx_, d.data(), &n) != 1 || n != d.size()) return "";
    } else {
      d = own_.Finish();
    }
    return HexBytes(d.data(), d.size());
  }

 private:
  const Crypto* crypto_ = LoadCrypto();
  void* ctx_ = nullptr;
  bool ok_ = true;
  Sha256 own_;
};

// The SHA-256 and size of a file's bytes.
Status DigestFile(const std::string& path, std::string* sha256, uint64_t* bytes) {
  Digest256 hasher;
  Result<uint64_t> read = ReadFileInPieces(path, 1 << 20, [&](std::string_view piece) {
    hasher.Update(piece);
    return Status::OK();
  });
  if (!read.ok()) return read.status();
  *bytes = *read;
  *sha256 = hasher.Hex();
  if (sha256->empty()) return Status::IOError(path + ": libcrypto could not digest it");
  return Status::OK();
}

using Headers = std::vector<std::pair<const char*, std::string>>;
constexpr char kExpectedLastHeader[] = "Nats-Expected-Last-Sequence";

class NatsLog final : public cli::RevisionLog {
 public:
  NatsLog(cli::RemoteBinding binding, cli::RemoteAccess access)
      : binding_(std::move(binding)), access_(std::move(access)) {}
  ~NatsLog() override {
    if (kv_ != nullptr) Nats().kvStore_Destroy(kv_);
    if (js_async_ != nullptr) Nats().jsCtx_Destroy(js_async_);
    if (js_ != nullptr) Nats().jsCtx_Destroy(js_);
    if (nc_ != nullptr) Nats().natsConnection_Destroy(nc_);
    if (opts_ != nullptr) Nats().natsOptions_Destroy(opts_);
  }

  Status Connect() {
    std::vector<const char*> urls;
    for (const std::string& u : binding_.servers) urls.push_back(u.c_str());
    natsStatus s = Nats().natsOptions_Create(&opts_);
    if (s == NATS_OK) s = Nats().natsOptions_SetServers(opts_, urls.data(), static_cast<int>(urls.size()));
    if (s == NATS_OK) s = Nats().natsOptions_SetTimeout(opts_, access_.timeout_ms);
    // A connection never gives up reconnecting (negative: no limit): a long-lived
    // process (the Python module, amem mcp, follow) writes again once a server is
    // back; each request still fails after the timeout meanwhile.
    if (s == NATS_OK) s = Nats().natsOptions_SetMaxReconnect(opts_, -1);
    if (s == NATS_OK) s = Nats().natsOptions_SetReconnectWait(opts_, 100);
    if (s == NATS_OK && !access_.creds.empty()) {
      s = Nats().natsOptions_SetUserCredentialsFromFiles(opts_, access_.creds.c_str(), nullptr);
    }
    if (s == NATS_OK && !access_.tls_ca.empty()) {
      s = Nats().natsOptions_SetSecure(opts_, true);
      if (s == NATS_OK) s = Nats().natsOptions_LoadCATrustedCertificates(opts_, access_.tls_ca.c_str());
    }
    if (s == NATS_OK && !access_.tls_cert.empty()) {
      s = Nats().natsOptions_LoadCertificatesChain(opts_, access_.tls_cert.c_str(),
                                            access_.tls_key.c_str());
    }
    if (s != NATS_OK) return Status::InvalidArgument("NATS options: " + NatsError(s));
    s = Nats().natsConnection_Connect(&nc_, opts_);
    if (s != NATS_OK) {
      return Status::IOError("cannot reach stream " + binding_.stream + " at " + Servers() +
                             ": " + NatsError(s));
    }
    jsOptions jo;
    Nats().jsOptions_Init(&jo);
    jo.Wait = access_.timeout_ms;
    s = Nats().natsConnection_JetStream(&js_, nc_, &jo);
    if (s != NATS_OK) return Status::IOError("JetStream: " + NatsError(s));
    return Status::OK();
  }

  // A cluster that has just started (or lost a node) may not have elected its
  // JetStream leaders yet: its answers are errors for a moment. Asks again, every
  // 100 ms, while `ask` fails with IOError, until the timeout.
  template <typename Ask>
  auto UntilLeader(Ask ask) {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(access_.timeout_ms);
    for (;;) {
      auto got = ask();
      if (got.ok() || !got.status().IsIOError() || std::chrono::steady_clock::now() >= deadline) {
        return got;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  Result<cli::LogInfo> Open(bool create, uint32_t dimension) override {
    return UntilLeader([&] { return TryOpen(create, dimension); });
  }

  Result<std::string> Get(uint64_t seq) override {
    return UntilLeader([&] { return TryGet(seq); });
  }

  Result<std::string> TryGet(uint64_t seq) {
    natsMsg* msg = nullptr;
    jsErrCode code = static_cast<jsErrCode>(0);
    natsStatus s = Nats().js_GetMsg(&msg, js_, binding_.stream.c_str(), seq, nullptr, &code);
    if (s == NATS_NOT_FOUND || code == JSNoMessageFoundErr) {
      return Status::NotFound("no message");
    }
    if (s != NATS_OK) return Status::IOError("cannot read the message: " + NatsError(s, code));
    std::string data(Nats().natsMsg_GetData(msg), static_cast<size_t>(Nats().natsMsg_GetDataLength(msg)));
    Nats().natsMsg_Destroy(msg);
    return data;
  }

  // Up to kGetUpTo messages one request each (js_GetMsg: the short tails `follow`
  // mostly sees need no consumer), more through an ordered consumer: an ephemeral
  // consumer from `from` on that pushes the messages in order, with flow control,
  // and that the client recreates from where it was when it misses one.
  static constexpr uint64_t kGetUpTo = 16;
  Status Read(uint64_t from, uint64_t to,
              const std::function<Status(uint64_t seq, std::string record)>& fn) override {
    if (to - from < kGetUpTo) return cli::RevisionLog::Read(from, to, fn);
    jsSubOptions so;
    Nats().jsSubOptions_Init(&so);
    so.Stream = binding_.stream.c_str();
    so.Ordered = true;
    so.Config.DeliverPolicy = js_DeliverByStartSequence;
    so.Config.OptStartSeq = from;
    natsSubscription* sub = nullptr;
    jsErrCode code = static_cast<jsErrCode>(0);
    natsStatus s = Nats().js_SubscribeSync(&sub, js_, subject_.c_str(), nullptr, &so, &code);
    // No consumer (a cluster still electing a leader after a node restarted times
    // the request out): the same messages one request each, as a short tail.
    if (s != NATS_OK) return cli::RevisionLog::Read(from, to, fn);
    Status result;
    uint64_t seq = from;
    bool stalled = false;  // the consumer stopped sending: read the rest one by one
    while (seq <= to && result.ok()) {
      natsMsg* msg = nullptr;
      s = Nats().natsSubscription_NextMsg(&msg, sub, access_.timeout_ms);
      if (s != NATS_OK) {
        stalled = true;
        break;
      }
      jsMsgMetaData* meta = nullptr;
      s = Nats().natsMsg_GetMetaData(&meta, msg);
      const uint64_t got = s == NATS_OK ? meta->Sequence.Stream : 0;
      if (meta != nullptr) Nats().jsMsgMetaData_Destroy(meta);
      if (s != NATS_OK || got > seq) {
        result = Status::IOError("sequence " + std::to_string(seq) + ": the stream sent " +
                                 (s != NATS_OK ? "a message without its sequence"
                                               : "sequence " + std::to_string(got)) +
                                 " in its place");
      } else if (got == seq) {
        std::string data(Nats().natsMsg_GetData(msg),
                         static_cast<size_t>(Nats().natsMsg_GetDataLength(msg)));
        result = fn(seq, std::move(data));
        ++seq;
      }  // else a message already read, sent again: skipped
      Nats().natsMsg_Destroy(msg);
    }
    // Unsubscribing deletes the ephemeral consumer at once.
    Nats().natsSubscription_Unsubscribe(sub);
    Nats().natsSubscription_Destroy(sub);
    if (stalled) return cli::RevisionLog::Read(seq, to, fn);
    return result;
  }

  Result<std::string> GetDigest(uint64_t rev) override {
    AMEM_RETURN_IF_ERROR(OpenBucket(/*create=*/false));
    kvEntry* entry = nullptr;
    const std::string key = std::to_string(rev);
    natsStatus s = Nats().kvStore_Get(&entry, kv_, key.c_str());
    if (s == NATS_NOT_FOUND) return Status::NotFound("no key " + key);
    if (s != NATS_OK) return Status::IOError("cannot read key " + key + ": " + NatsError(s));
    std::string value(static_cast<const char*>(Nats().kvEntry_Value(entry)),
                      static_cast<size_t>(Nats().kvEntry_ValueLen(entry)));
    Nats().kvEntry_Destroy(entry);
    return value;
  }

  Result<std::string> PublishDigest(uint64_t rev, const std::string& value,
                                    bool* created) override {
    *created = false;
    AMEM_RETURN_IF_ERROR(OpenBucket(/*create=*/true));
    const std::string key = std::to_string(rev);
    uint64_t kv_rev = 0;
    // Create, not Put: a key written once is never replaced, so a replica that
    // disagrees cannot overwrite what another published.
    natsStatus s = Nats().kvStore_Create(&kv_rev, kv_, key.c_str(), value.data(),
                                         static_cast<int>(value.size()));
    if (s == NATS_OK) {
      *created = true;
      return value;
    }
    const std::string why = NatsError(s);
    Result<std::string> there = GetDigest(rev);
    if (there.ok() || !there.status().IsNotFound()) return there;
    return Status::IOError("cannot write key " + key + ": " + why);
  }

  // ---- snapshots: JetStream's object store layout (ADR-20) on the stream
  // OBJ_<bucket>: chunks on $O.<bucket>.C.<nuid>, the object's description (JSON)
  // on $O.<bucket>.M.<base64url(name)>, rolled up to its latest.
  Result<cli::PublishedSnapshot> PutSnapshot(const std::string& path, uint64_t rev,
                                             int64_t rev_ts, bool* created) override {
    *created = false;
    cli::PublishedSnapshot snap;
    snap.rev = rev;
    snap.rev_ts = rev_ts;
    AMEM_RETURN_IF_ERROR(DigestFile(path, &snap.sha256, &snap.bytes));
    snap.name = cli::SnapshotObjectName(rev, snap.sha256);
    Result<std::vector<std::string>> names = UntilLeader([&] { return ListSnapshots(true); });
    if (!names.ok()) return names.status();
    const std::string prefix = "rev-" + std::to_string(rev) + "-";
    for (const std::string& name : *names) {
      if (name.compare(0, prefix.size(), prefix) != 0) continue;
      if (name != snap.name) {
        return Status::InvalidArgument(
            "bucket " + Bucket() + " holds snapshot " + name + " of revision " +
            std::to_string(rev) + ", whose SHA-256 is not this store's export's (" +
            snap.sha256 + "): the store that published it differs from this one there");
      }
      return GetSnapshotMeta(name);
    }
    snap.nuid = NewNuid();
    const std::string chunk_subject = "$O." + Bucket() + ".C." + snap.nuid;
    Result<uint64_t> sent = ReadFileInPieces(path, cli::kSnapshotChunkBytes, [&](std::string_view piece) {
      ++snap.chunks;
      return Publish(chunk_subject, piece, nullptr);
    });
    if (!sent.ok()) return sent.status();
    if (*sent != snap.bytes) return Status::IOError(path + ": changed while it was published");
    AMEM_RETURN_IF_ERROR(Publish(MetaSubject(snap.name), SnapshotMetaJson(snap), "sub"));
    *created = true;
    return snap;
  }

  Result<cli::PublishedSnapshot> NewestSnapshot() override {
    Result<std::vector<std::string>> names = UntilLeader([&] { return ListSnapshots(false); });
    if (!names.ok()) return names.status();
    std::string newest;
    uint64_t newest_rev = 0;
    for (const std::string& name : *names) {
      uint64_t rev = 0;
      if (!ParseObjectName(name, &rev, nullptr)) continue;  // not one of amem's
      if (rev > newest_rev) {
        newest_rev = rev;
        newest = name;
      }
    }
    if (newest.empty()) return Status::NotFound("no snapshot in bucket " + Bucket());
    return GetSnapshotMeta(newest);
  }

  Result<std::vector<cli::PublishedSnapshot>> Snapshots() override {
    Result<std::vector<std::string>> names = UntilLeader([&] { return ListSnapshots(false); });
    if (!names.ok()) return names.status();
    std::vector<cli::PublishedSnapshot> out;
    for (const std::string& name : *names) {
      uint64_t rev = 0;
      if (!ParseObjectName(name, &rev, nullptr)) continue;  // not one of amem's
      Result<cli::PublishedSnapshot> snap = GetSnapshotMeta(name);
      if (!snap.ok()) return snap.status();
      out.push_back(std::move(snap).value());
    }
    return out;
  }

  // The description first: once it is gone the object is no longer listed, so a
  // clone never picks an object whose chunks are being purged.
  Status DeleteSnapshot(const cli::PublishedSnapshot& snap) override {
    AMEM_RETURN_IF_ERROR(Purge(MetaSubject(snap.name), snap.name));
    return Purge("$O." + Bucket() + ".C." + snap.nuid, snap.name);
  }

  Status FetchSnapshot(const cli::PublishedSnapshot& snap, const std::string& path) override {
    Status s = TryFetch(snap, path);
    if (!s.ok()) {
      std::error_code ec;
      std::filesystem::remove(path, ec);
    }
    return s;
  }

  Status AppendNext(uint64_t expected_last, const std::string& record) override {
    if (window_.sent == 0) {
      AMEM_RETURN_IF_ERROR(UntilConnected());
      if (js_async_ == nullptr) {
        jsOptions jo;
        Nats().jsOptions_Init(&jo);
        jo.Wait = access_.timeout_ms;
        jo.PublishAsync.AckHandler = &NatsLog::OnAck;
        jo.PublishAsync.AckHandlerClosure = &window_;
        jo.PublishAsync.MaxPending = static_cast<int64_t>(2 * cli::kAppendWindow);
        jo.PublishAsync.StallWait = access_.timeout_ms;
        natsStatus s = Nats().natsConnection_JetStream(&js_async_, nc_, &jo);
        if (s != NATS_OK) return Status::IOError("JetStream: " + NatsError(s));
      }
      std::lock_guard<std::mutex> lock(window_.mu);
      window_.base = expected_last;
      window_.answers.clear();
      window_.last_id.clear();
    }
    {
      std::lock_guard<std::mutex> lock(window_.mu);
      if (expected_last != window_.base + window_.sent) {
        return Status::InvalidArgument("AppendNext: sequence " + std::to_string(expected_last + 1) +
                                       " does not follow the messages sent before it");
      }
      // Answers come in order: after a refusal every later message is refused too.
      for (const Answer& a : window_.answers) {
        if (a.state == Answer::kRefused) return Status::Aborted("not sent: one before it was refused");
      }
      window_.answers.resize(window_.sent + 1);
    }
    // Expecting the last sequence is not enough for a message sent before the one
    // ahead of it was answered: when that one is refused (another writer came
    // first), the stream may have reached this one's expected sequence through the
    // other writer's messages. So each message has an id (its revision and a hash
    // of its record), and the ones after the first also expect the one before.
    Headers headers = ExpectHeaders(expected_last);
    const std::string id = "amem-" + std::to_string(expected_last + 1) + "-" +
                           FormatHexId(Hash64(record));
    headers.emplace_back("Nats-Msg-Id", id);
    if (!window_.last_id.empty()) headers.emplace_back("Nats-Expected-Last-Msg-Id", window_.last_id);
    natsMsg* msg = nullptr;
    natsStatus s = MakeMsg(subject_, record, headers, &msg);
    if (s == NATS_OK) s = Nats().js_PublishMsgAsync(js_async_, &msg, nullptr);
    if (msg != nullptr) Nats().natsMsg_Destroy(msg);
    if (s != NATS_OK) {
      std::lock_guard<std::mutex> lock(window_.mu);
      window_.answers.pop_back();
      return Status::IOError("cannot send revision " + std::to_string(expected_last + 1) +
                             " to stream " + binding_.stream + ": " + NatsError(s));
    }
    ++window_.sent;
    window_.last_id = id;
    return Status::OK();
  }

  Status WaitAppended(uint64_t* last) override {
    if (window_.sent == 0) return Status::OK();
    jsPubOptions po;
    Nats().jsPubOptions_Init(&po);
    po.MaxWait = access_.timeout_ms;
    natsStatus waited = Nats().js_PublishAsyncComplete(js_async_, &po);
    if (waited != NATS_OK) {
      // The unanswered ones are given up (their answers, if they come, are dropped).
      natsMsgList pending{};
      if (Nats().js_PublishAsyncGetPendingList(&pending, js_async_) == NATS_OK) {
        Nats().natsMsgList_Destroy(&pending);
      }
    }
    std::lock_guard<std::mutex> lock(window_.mu);
    const size_t n = window_.sent;
    window_.sent = 0;
    size_t ok = 0;
    while (ok < n && window_.answers[ok].state == Answer::kAccepted) {
      if (window_.answers[ok].seq != window_.base + ok + 1) {
        return Status::Corruption("stream " + binding_.stream + " took revision " +
                                  std::to_string(window_.base + ok + 1) + " as sequence " +
                                  std::to_string(window_.answers[ok].seq));
      }
      ++ok;
    }
    if (ok > 0) *last = window_.base + ok;
    if (ok == n) return Status::OK();
    const uint64_t first = window_.base + ok + 1;
    for (size_t i = ok + 1; i < n; ++i) {
      if (window_.answers[i].state == Answer::kAccepted) {
        return Status::IOError("stream " + binding_.stream + " accepted revision " +
                               std::to_string(window_.base + i + 1) + " but not " +
                               std::to_string(first) + ": the revisions from " +
                               std::to_string(first) + " may or may not be in the stream "
                               "(amem sync applies those that are)");
      }
    }
    const Answer& a = window_.answers[ok];
    if (a.state == Answer::kRefused &&
        (a.code == JSStreamWrongLastSequenceErr || a.code == JSStreamWrongLastMsgIDErr)) {
      return Status::Aborted("stream " + binding_.stream + " is past sequence " +
                             std::to_string(first - 1));
    }
    if (a.state == Answer::kRefused) {
      return Status::IOError("stream " + binding_.stream + " did not accept revision " +
                             std::to_string(first) + ": " + a.error);
    }
    return Status::IOError("no answer from stream " + binding_.stream + " for revision " +
                           std::to_string(first) + " within " +
                           std::to_string(access_.timeout_ms) +
                           " ms: the revisions from it may or may not be in the stream "
                           "(amem sync applies those that are)");
  }

  Result<uint64_t> Append(uint64_t expected_last, const std::string& record) override {
    const std::string expected = std::to_string(expected_last);
    AMEM_RETURN_IF_ERROR(UntilConnected());
    jsErrCode code = static_cast<jsErrCode>(0);
    uint64_t seq = 0;
    bool built = false;
    // No responders: no server took the message, so nothing was stored and it is
    // sent again, every 100 ms up to the timeout, while the stream elects its
    // leader (a writer does not ask for the stream's state first: one round trip
    // less a write).
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(access_.timeout_ms);
    natsStatus s = NATS_OK;
    for (;;) {
      s = PublishMsg(subject_, record, ExpectHeaders(expected_last), &seq, &code, &built);
      if (s != NATS_NO_RESPONDERS || std::chrono::steady_clock::now() >= deadline) break;
      // A stream that is gone does not come back by waiting.
      Result<cli::LogInfo> info = TryOpen(/*create=*/false, 0);
      if (info.status().IsNotFound()) return info.status();
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (s == NATS_OK) return seq;
    if (!built) return Status::IOError("cannot build the message: " + NatsError(s));
    if (s == NATS_NO_RESPONDERS) {
      return Status::IOError("stream " + binding_.stream + " does not answer at " + Servers() +
                             " within " + std::to_string(access_.timeout_ms) +
                             " ms: it does not exist, or has no leader");
    }
    if (code == JSStreamWrongLastSequenceErr) {
      return Status::Aborted("stream " + binding_.stream + " is past sequence " + expected);
    }
    if (s == NATS_TIMEOUT) {
      return Status::IOError("no answer from stream " + binding_.stream + " within " +
                             std::to_string(access_.timeout_ms) +
                             " ms: the revision may or may not be in the stream "
                             "(amem sync applies it if it is)");
    }
    return Status::IOError("publish: " + NatsError(s, code));
  }

 private:
  // A connection that lost its server (a long-lived process: the Python module,
  // amem mcp) reconnects on its own; a message published meanwhile waits in the
  // client's buffer and is sent when it is back, long after its write failed. So
  // a revision is published only while connected: waits for that up to the timeout,
  // else IOError, the revision never sent.
  Status UntilConnected() {
    const auto deadline =
        std::chrono::steady_clock::now() + std::chrono::milliseconds(access_.timeout_ms);
    while (Nats().natsConnection_Status(nc_) != NATS_CONN_STATUS_CONNECTED) {
      if (std::chrono::steady_clock::now() >= deadline) {
        return Status::IOError("cannot reach stream " + binding_.stream + " at " + Servers() +
                               ": not connected within " + std::to_string(access_.timeout_ms) +
                               " ms");
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return Status::OK();
  }

  // Publishes `data` on `subject` with `headers` and waits for the stream's
  // acknowledgement: NATS_OK with its sequence in *seq, or the client's status with
  // JetStream's error code in *code (*built false: the message could not be made).
  natsStatus PublishMsg(const std::string& subject, std::string_view data,
                        const Headers& headers, uint64_t* seq, jsErrCode* code, bool* built) {
    *built = false;
    natsMsg* msg = nullptr;
    natsStatus s = MakeMsg(subject, data, headers, &msg);
    if (s != NATS_OK) return s;
    *built = true;
    jsPubAck* ack = nullptr;
    s = Nats().js_PublishMsg(&ack, js_, msg, nullptr, code);
    Nats().natsMsg_Destroy(msg);
    if (ack != nullptr) {
      *seq = ack->Sequence;
      Nats().jsPubAck_Destroy(ack);
    }
    return s;
  }

  // A message of `data` on `subject` with `headers` (*msg null on error).
  static natsStatus MakeMsg(const std::string& subject, std::string_view data,
                            const Headers& headers, natsMsg** msg) {
    *msg = nullptr;
    natsStatus s = Nats().natsMsg_Create(msg, subject.c_str(), nullptr, data.data(),
                                         static_cast<int>(data.size()));
    for (const auto& [name, value] : headers) {
      if (s == NATS_OK) s = Nats().natsMsgHeader_Set(*msg, name, value.c_str());
    }
    if (s != NATS_OK && *msg != nullptr) {
      Nats().natsMsg_Destroy(*msg);
      *msg = nullptr;
    }
    return s;
  }

  // What a revision's publish expects: the stream's last sequence (set by hand:
  // the client sends its ExpectLastSeq option only when it is not 0, and an empty
  // stream must be expected too) and the stream's name.
  Headers ExpectHeaders(uint64_t expected_last) const {
    return {{kExpectedLastHeader, std::to_string(expected_last)},
            {"Nats-Expected-Stream", binding_.stream}};
  }

  // The answers to one window of AppendNext, filled in by OnAck on the client's
  // thread, indexed by each message's expected last sequence less `base`.
  struct Answer {
    enum State { kNone, kAccepted, kRefused } state = kNone;
    uint64_t seq = 0;
    jsErrCode code = static_cast<jsErrCode>(0);
    std::string error;
  };
  struct Window {
    std::mutex mu;
    uint64_t base = 0;
    size_t sent = 0;
    std::vector<Answer> answers;
    std::string last_id;  // the Nats-Msg-Id of the last message sent
  };
  static void OnAck(jsCtx*, natsMsg* msg, jsPubAck* pa, jsPubAckErr* pae, void* closure) {
    auto* w = static_cast<Window*>(closure);
    const char* expected = nullptr;
    if (Nats().natsMsgHeader_Get(msg, kExpectedLastHeader, &expected) == NATS_OK &&
        expected != nullptr) {
      const uint64_t e = std::strtoull(expected, nullptr, 10);
      std::lock_guard<std::mutex> lock(w->mu);
      if (e >= w->base && e - w->base < w->answers.size()) {
        Answer& a = w->answers[e - w->base];
        if (pa != nullptr) {
          a.state = Answer::kAccepted;
          a.seq = pa->Sequence;
        } else if (pae != nullptr) {
          a.state = Answer::kRefused;
          a.code = pae->ErrCode;
          a.error = std::string(Nats().natsStatus_GetText(pae->Err)) +
                    (pae->ErrText != nullptr ? std::string(" (") + pae->ErrText + ")" : "");
        }
      }
    }
    Nats().natsMsg_Destroy(msg);
  }

  // A stream of file storage and the binding's replicas (`name` and `subjects`
  // must outlive it).
  jsStreamConfig StreamConfig(const std::string& name, const char** subjects, int n) const {
    jsStreamConfig cfg;
    Nats().jsStreamConfig_Init(&cfg);
    cfg.Name = name.c_str();
    cfg.Subjects = subjects;
    cfg.SubjectsLen = n;
    cfg.Storage = js_FileStorage;
    cfg.Replicas = binding_.replicas;
    return cfg;
  }

  std::string Bucket() const { return binding_.snapshot_bucket(); }
  std::string ObjectStream() const { return "OBJ_" + Bucket(); }
  std::string MetaSubject(const std::string& name) const {
    return "$O." + Bucket() + ".M." + Base64Url(name);
  }

  // rev-<R>-<64 hex>: *rev and (when asked) *sha256.
  static bool ParseObjectName(const std::string& name, uint64_t* rev, std::string* sha256) {
    if (name.compare(0, 4, "rev-") != 0) return false;
    const size_t dash = name.find('-', 4);
    if (dash == std::string::npos || dash == 4 || name.size() != dash + 65) return false;
    uint64_t r = 0;
    for (size_t i = 4; i < dash; ++i) {
      if (name[i] < '0' || name[i] > '9' || r > (UINT64_MAX - 9) / 10) return false;
      r = r * 10 + static_cast<uint64_t>(name[i] - '0');
    }
    for (size_t i = dash + 1; i < name.size(); ++i) {
      if (!std::isxdigit(static_cast<unsigned char>(name[i])) ||
          std::isupper(static_cast<unsigned char>(name[i]))) {
        return false;
      }
    }
    *rev = r;
    if (sha256 != nullptr) *sha256 = name.substr(dash + 1);
    return r > 0;
  }

  std::string SnapshotMetaJson(const cli::PublishedSnapshot& snap) const {
    std::string raw(32, '\0');
    for (size_t i = 0; i < 32; ++i) {
      raw[i] = static_cast<char>(std::stoi(snap.sha256.substr(2 * i, 2), nullptr, 16));
    }
    nlohmann::ordered_json doc;
    doc["name"] = snap.name;
    doc["description"] = "amem snapshot: the export at revision " + std::to_string(snap.rev);
    doc["headers"] = {{"Amem-Revision", {std::to_string(snap.rev)}},
                      {"Amem-Revision-Ts", {std::to_string(snap.rev_ts)}}};
    doc["options"] = {{"max_chunk_size", cli::kSnapshotChunkBytes}};
    doc["bucket"] = Bucket();
    doc["nuid"] = snap.nuid;
    doc["size"] = snap.bytes;
    doc["chunks"] = snap.chunks;
    doc["digest"] = "SHA-256=" + Base64Url(raw);
    return doc.dump();
  }

  // Publishes one message and waits for the stream's acknowledgement; `rollup`
  // (non-null) sets Nats-Rollup.
  Status Publish(const std::string& subject, std::string_view data, const char* rollup) {
    std::vector<std::pair<const char*, std::string>> headers = {
        {"Nats-Expected-Stream", ObjectStream()}};
    if (rollup != nullptr) headers.emplace_back("Nats-Rollup", rollup);
    jsErrCode code = static_cast<jsErrCode>(0);
    uint64_t seq = 0;
    bool built = false;
    natsStatus s = PublishMsg(subject, data, headers, &seq, &code, &built);
    if (s != NATS_OK && !built) {
      return Status::IOError("cannot build the message: " + NatsError(s));
    }
    if (s != NATS_OK) {
      return Status::IOError("bucket " + Bucket() + ": publish to " + subject + ": " +
                             NatsError(s, code));
    }
    return Status::OK();
  }

  // Purges the messages of `subject` from the bucket's stream.
  Status Purge(const std::string& subject, const std::string& name) {
    Result<int> purged = UntilLeader([&]() -> Result<int> {
      jsOptions o;
      Nats().jsOptions_Init(&o);
      o.Wait = access_.timeout_ms;
      o.Stream.Purge.Subject = subject.c_str();
      jsErrCode code = static_cast<jsErrCode>(0);
      natsStatus s = Nats().js_PurgeStream(js_, ObjectStream().c_str(), &o, &code);
      if (s != NATS_OK) {
        return Status::IOError("bucket " + Bucket() + ": cannot delete snapshot " + name + ": " +
                               NatsError(s, code));
      }
      return 0;
    });
    return purged.status();
  }

  // The names of the objects in the bucket (creating its stream when `create` is
  // set and it is missing). NotFound when there is no bucket.
  Result<std::vector<std::string>> ListSnapshots(bool create) {
    std::vector<std::string> out;
    std::vector<std::string>* names = &out;
    const std::string stream = ObjectStream();
    const std::string meta_filter = "$O." + Bucket() + ".M.>";
    jsOptions o;
    Nats().jsOptions_Init(&o);
    o.Wait = access_.timeout_ms;
    o.Stream.Info.SubjectsFilter = meta_filter.c_str();
    jsStreamInfo* si = nullptr;
    jsErrCode code = static_cast<jsErrCode>(0);
    natsStatus s = Nats().js_GetStreamInfo(&si, js_, stream.c_str(), &o, &code);
    if (s == NATS_NOT_FOUND && create) {
      const std::string chunks = "$O." + Bucket() + ".C.>";
      const char* subjects[] = {chunks.c_str(), meta_filter.c_str()};
      jsStreamConfig cfg = StreamConfig(stream, subjects, 2);
      cfg.AllowRollup = true;
      cfg.AllowDirect = true;
      cfg.Discard = js_DiscardNew;
      s = Nats().js_AddStream(&si, js_, &cfg, nullptr, &code);
      if (s != NATS_OK) {
        return Status::IOError("cannot create bucket " + Bucket() + ": " + NatsError(s, code));
      }
      Nats().jsStreamInfo_Destroy(si);
      return out;
    }
    if (s == NATS_NOT_FOUND) {
      return Status::NotFound("no snapshot published: bucket " + Bucket() + " does not exist");
    }
    if (s != NATS_OK) {
      return Status::IOError("cannot reach bucket " + Bucket() + " at " + Servers() + ": " +
                             NatsError(s, code));
    }
    const std::string prefix = "$O." + Bucket() + ".M.";
    const jsStreamStateSubjects* list = si->State.Subjects;
    for (int i = 0; list != nullptr && i < list->Count; ++i) {
      const std::string subject = list->List[i].Subject;
      std::string name;
      if (subject.compare(0, prefix.size(), prefix) == 0 &&
          DecodeBase64Url(subject.substr(prefix.size()), &name)) {
        names->push_back(std::move(name));
      }
    }
    Nats().jsStreamInfo_Destroy(si);
    return out;
  }

  // The description of object `name`, checked: Corruption naming the bucket and
  // object when it is not one amem wrote for that name.
  Result<cli::PublishedSnapshot> GetSnapshotMeta(const std::string& name) {
    const std::string subject = MetaSubject(name);
    Result<std::string> data = UntilLeader([&]() -> Result<std::string> {
      natsMsg* msg = nullptr;
      jsErrCode code = static_cast<jsErrCode>(0);
      natsStatus s = Nats().js_GetLastMsg(&msg, js_, ObjectStream().c_str(), subject.c_str(),
                                          nullptr, &code);
      if (s == NATS_NOT_FOUND || code == JSNoMessageFoundErr) {
        return Status::NotFound("bucket " + Bucket() + " has no object " + name);
      }
      if (s != NATS_OK) {
        return Status::IOError("bucket " + Bucket() + ": cannot read object " + name + ": " +
                               NatsError(s, code));
      }
      std::string text(Nats().natsMsg_GetData(msg),
                       static_cast<size_t>(Nats().natsMsg_GetDataLength(msg)));
      Nats().natsMsg_Destroy(msg);
      return text;
    });
    if (!data.ok()) return data.status();
    auto bad = [&](const std::string& why) {
      return Status::Corruption("bucket " + Bucket() + ", object " + name +
                                ": not an amem snapshot's description (" + why + ")");
    };
    const nlohmann::json doc = nlohmann::json::parse(*data, nullptr, false);
    cli::PublishedSnapshot snap;
    std::string name_sha;
    if (!ParseObjectName(name, &snap.rev, &name_sha)) return bad("its name");
    if (!doc.is_object()) return bad("not JSON");
    if (doc.contains("deleted") && doc["deleted"] == true) return bad("deleted");
    const nlohmann::json& headers = doc.value("headers", nlohmann::json::object());
    auto header = [&](const char* key) -> std::string {
      if (!headers.is_object() || !headers.contains(key) || !headers[key].is_array() ||
          headers[key].size() != 1 || !headers[key][0].is_string()) {
        return "";
      }
      return headers[key][0].get<std::string>();
    };
    if (doc.value("name", "") != name) return bad("name");
    if (!doc.contains("size") || !doc["size"].is_number_unsigned()) return bad("size");
    if (!doc.contains("chunks") || !doc["chunks"].is_number_unsigned()) return bad("chunks");
    if (!doc.contains("nuid") || !doc["nuid"].is_string()) return bad("nuid");
    snap.name = name;
    snap.bytes = doc["size"].get<uint64_t>();
    snap.chunks = doc["chunks"].get<uint32_t>();
    snap.nuid = doc["nuid"].get<std::string>();
    if (snap.nuid.empty() || snap.nuid.find_first_of(".*> \t\r\n") != std::string::npos) {
      return bad("nuid");
    }
    if (header("Amem-Revision") != std::to_string(snap.rev)) return bad("Amem-Revision");
    const std::string ts = header("Amem-Revision-Ts");
    char* end = nullptr;
    snap.rev_ts = std::strtoll(ts.c_str(), &end, 10);
    if (ts.empty() || end == nullptr || *end != '\0') return bad("Amem-Revision-Ts");
    const std::string digest = doc.value("digest", "");
    std::string raw;
    if (digest.compare(0, 8, "SHA-256=") != 0 || !DecodeBase64Url(digest.substr(8), &raw) ||
        raw.size() != 32) {
      return bad("digest");
    }
    snap.sha256 = HexBytes(reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
    if (snap.sha256 != name_sha) return bad("its digest is not the one its name says");
    return snap;
  }

  Status TryFetch(const cli::PublishedSnapshot& snap, const std::string& path) {
    const std::string where = "bucket " + Bucket() + ", snapshot " + snap.name;
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) return Status::IOError(path + ": cannot write it");
    Digest256 hasher;
    uint64_t got = 0;
    uint32_t chunks = 0;
    if (snap.chunks > 0) {
      const std::string subject = "$O." + Bucket() + ".C." + snap.nuid;
      const std::string stream = ObjectStream();
      jsSubOptions so;
      Nats().jsSubOptions_Init(&so);
      so.Stream = stream.c_str();
      so.Ordered = true;
      natsSubscription* sub = nullptr;
      jsErrCode code = static_cast<jsErrCode>(0);
      natsStatus s = Nats().js_SubscribeSync(&sub, js_, subject.c_str(), nullptr, &so, &code);
      if (s != NATS_OK) {
        return Status::IOError(where + ": cannot read its chunks: " + NatsError(s, code));
      }
      Status result;
      while (chunks < snap.chunks && result.ok()) {
        natsMsg* msg = nullptr;
        s = Nats().natsSubscription_NextMsg(&msg, sub, access_.timeout_ms);
        if (s != NATS_OK) {
          result = Status::Corruption(where + ": chunk " + std::to_string(chunks + 1) + " of " +
                                      std::to_string(snap.chunks) + " did not come (" +
                                      NatsError(s) + ")");
          break;
        }
        const auto n = static_cast<size_t>(Nats().natsMsg_GetDataLength(msg));
        got += n;
        if (got > snap.bytes) {
          result = Status::Corruption(where + ": its chunks hold more than its " +
                                      std::to_string(snap.bytes) + " bytes");
        } else {
          hasher.Update(std::string_view(Nats().natsMsg_GetData(msg), n));
          out.write(Nats().natsMsg_GetData(msg), static_cast<std::streamsize>(n));
        }
        ++chunks;
        cli::CloneTestDieAt("chunk:" + std::to_string(chunks));
        Nats().natsMsg_Destroy(msg);
      }
      Nats().natsSubscription_Unsubscribe(sub);
      Nats().natsSubscription_Destroy(sub);
      AMEM_RETURN_IF_ERROR(result);
    }
    out.close();
    if (!out) return Status::IOError(path + ": cannot write it");
    if (got != snap.bytes) {
      return Status::Corruption(where + ": its chunks hold " + std::to_string(got) +
                                " bytes, not the published " + std::to_string(snap.bytes));
    }
    const std::string sha = hasher.Hex();
    if (sha.empty()) return Status::IOError(where + ": libcrypto could not digest it");
    if (sha != snap.sha256) {
      return Status::Corruption(where + ": its bytes' SHA-256 is " + sha +
                                ", not the published " + snap.sha256 +
                                " (a damaged chunk or a wrong digest)");
    }
    return Status::OK();
  }

  std::string Servers() const {
    std::string s;
    for (const std::string& u : binding_.servers) s += (s.empty() ? "" : ",") + u;
    return s;
  }

  // Binds to the digest bucket, creating it (file storage, the stream's replicas,
  // one value a key) when `create` is set and it is missing.
  Status OpenBucket(bool create) {
    if (kv_ != nullptr) return Status::OK();
    const std::string bucket = binding_.digest_bucket();
    natsStatus s = Nats().js_KeyValue(&kv_, js_, bucket.c_str());
    if (s == NATS_NOT_FOUND && create) {
      kvConfig cfg;
      Nats().kvConfig_Init(&cfg);
      cfg.Bucket = bucket.c_str();
      cfg.History = 1;
      cfg.StorageType = js_FileStorage;
      cfg.Replicas = binding_.replicas;
      s = Nats().js_CreateKeyValue(&kv_, js_, &cfg);
    }
    if (s == NATS_NOT_FOUND) return Status::NotFound("bucket " + bucket + " does not exist");
    if (s != NATS_OK) {
      kv_ = nullptr;
      return Status::IOError("cannot open bucket " + bucket + ": " + NatsError(s));
    }
    return Status::OK();
  }

  Result<cli::LogInfo> TryOpen(bool create, uint32_t dimension) {
    jsStreamInfo* si = nullptr;
    jsErrCode code = static_cast<jsErrCode>(0);
    natsStatus s = Nats().js_GetStreamInfo(&si, js_, binding_.stream.c_str(), nullptr, &code);
    cli::LogInfo info;
    if (s == NATS_NOT_FOUND) {
      if (!create) {
        return Status::NotFound("stream " + binding_.stream + " does not exist at " + Servers() +
                                " (amem remote add creates it)");
      }
      const char* subjects[] = {subject_.c_str()};
      jsStreamConfig cfg = StreamConfig(binding_.stream, subjects, 1);
      cfg.DenyDelete = true;
      cfg.DenyPurge = true;
      // What a replica cloned from the stream alone needs (amem clone).
      const std::string description = cli::StreamDescription(dimension);
      if (dimension > 0) cfg.Description = description.c_str();
      s = Nats().js_AddStream(&si, js_, &cfg, nullptr, &code);
      if (s != NATS_OK) {
        const std::string why = NatsError(s, code);
        if (code == JSInsufficientResourcesErr || code == JSClusterNoPeersErr) {
          return Status::InvalidArgument("cannot create stream " + binding_.stream + " with " +
                                         std::to_string(binding_.replicas) +
                                         " replicas: " + why);
        }
        return Status::IOError("cannot create stream " + binding_.stream + ": " + why);
      }
      info.created = true;
    } else if (s != NATS_OK) {
      return Status::IOError("cannot reach stream " + binding_.stream + " at " + Servers() + ": " +
                             NatsError(s, code));
    }
    const jsStreamConfig* cfg = si->Config;
    const bool ours = cfg != nullptr && cfg->SubjectsLen == 1 && cfg->Subjects != nullptr &&
                      subject_ == cfg->Subjects[0];
    info.first_seq = si->State.FirstSeq;
    info.last_seq = si->State.LastSeq;
    info.replicas = cfg != nullptr ? static_cast<int>(cfg->Replicas) : 0;
    if (cfg != nullptr && cfg->Description != nullptr) {
      info.dimension = cli::ParseStreamDescription(cfg->Description);
    }
    Nats().jsStreamInfo_Destroy(si);
    if (!ours) {
      return Status::InvalidArgument("stream " + binding_.stream +
                                     " is not an amem revision stream (its subjects are not "
                                     "just " + subject_ + ")");
    }
    return info;
  }

  cli::RemoteBinding binding_;
  cli::RemoteAccess access_;
  std::string subject_ = binding_.subject();
  natsOptions* opts_ = nullptr;
  natsConnection* nc_ = nullptr;
  jsCtx* js_ = nullptr;
  jsCtx* js_async_ = nullptr;  // AppendNext's, its answers to OnAck
  Window window_;
  kvStore* kv_ = nullptr;
};

}  // namespace

cli::RevisionLogFactory NatsLogFactory() {
  return [](const cli::RemoteBinding& binding,
            const cli::RemoteAccess& access) -> Result<std::unique_ptr<cli::RevisionLog>> {
    AMEM_RETURN_IF_ERROR(LoadNats());
    auto log = std::make_unique<NatsLog>(binding, access);
    AMEM_RETURN_IF_ERROR(log->Connect());
    return std::unique_ptr<cli::RevisionLog>(std::move(log));
  };
}

}  // namespace amem::replication
