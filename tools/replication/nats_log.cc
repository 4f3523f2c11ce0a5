// cli::RevisionLog on NATS JetStream, through the nats.c client (libnats-dev).
#include "tools/replication/nats_log.h"

#include <dlfcn.h>

#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <nats/nats.h>

namespace amem::replication {

namespace {

// libnats is opened when a bound store first needs its stream, not linked: the
// client library brings OpenSSL, whose loading cost every amem process about 4 ms
// (15 ms against 11 ms for `amem --version`) whether it replicates or not.
#define AMEM_NATS_FUNCTIONS(X) \
  X(natsMsg_Destroy) \
  X(natsMsgHeader_Set) \
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
  X(natsConnection_Connect) \
  X(js_PublishMsg) \
  X(js_GetStreamInfo) \
  X(js_GetMsg) \
  X(js_AddStream) \
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

class NatsLog final : public cli::RevisionLog {
 public:
  NatsLog(cli::RemoteBinding binding, cli::RemoteAccess access)
      : binding_(std::move(binding)), access_(std::move(access)) {}
  ~NatsLog() override {
    if (kv_ != nullptr) Nats().kvStore_Destroy(kv_);
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
    if (s == NATS_OK) s = Nats().natsOptions_SetMaxReconnect(opts_, 20);
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

  Result<cli::LogInfo> Open(bool create) override {
    return UntilLeader([&] { return TryOpen(create); });
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

  Result<uint64_t> Append(uint64_t expected_last, const std::string& record) override {
    natsMsg* msg = nullptr;
    natsStatus s = Nats().natsMsg_Create(&msg, subject_.c_str(), nullptr, record.data(),
                                  static_cast<int>(record.size()));
    // Set by hand: the client sends its ExpectLastSeq option only when it is not 0,
    // and an empty stream must be expected too.
    const std::string expected = std::to_string(expected_last);
    if (s == NATS_OK) s = Nats().natsMsgHeader_Set(msg, "Nats-Expected-Last-Sequence", expected.c_str());
    if (s == NATS_OK) s = Nats().natsMsgHeader_Set(msg, "Nats-Expected-Stream", binding_.stream.c_str());
    if (s != NATS_OK) {
      Nats().natsMsg_Destroy(msg);
      return Status::IOError("cannot build the message: " + NatsError(s));
    }
    jsPubAck* ack = nullptr;
    jsErrCode code = static_cast<jsErrCode>(0);
    s = Nats().js_PublishMsg(&ack, js_, msg, nullptr, &code);
    Nats().natsMsg_Destroy(msg);
    if (s == NATS_OK) {
      const uint64_t seq = ack->Sequence;
      Nats().jsPubAck_Destroy(ack);
      return seq;
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

  Result<cli::LogInfo> TryOpen(bool create) {
    jsStreamInfo* si = nullptr;
    jsErrCode code = static_cast<jsErrCode>(0);
    natsStatus s = Nats().js_GetStreamInfo(&si, js_, binding_.stream.c_str(), nullptr, &code);
    cli::LogInfo info;
    if (s == NATS_NOT_FOUND) {
      if (!create) {
        return Status::NotFound("stream " + binding_.stream + " does not exist at " + Servers() +
                                " (amem remote add creates it)");
      }
      jsStreamConfig cfg;
      Nats().jsStreamConfig_Init(&cfg);
      const char* subjects[] = {subject_.c_str()};
      cfg.Name = binding_.stream.c_str();
      cfg.Subjects = subjects;
      cfg.SubjectsLen = 1;
      cfg.Storage = js_FileStorage;
      cfg.Replicas = binding_.replicas;
      cfg.DenyDelete = true;
      cfg.DenyPurge = true;
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
