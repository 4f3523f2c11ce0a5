// The Python module `amem` (docs/PYTHON.md): the store, its writes and batches,
// snapshots and the live view, and the 16 queries of the query table
// (tools/io/query_table.h) as methods whose keyword arguments are the table's
// parameters. Answers are the documents the CLI prints with --json, as Python
// objects. Every call that may take long (a write, an export, a query, opening a
// view) runs without the GIL.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "common/hash.h"
#include "common/model.h"
#include "query/query.h"
#include "query/render.h"
#include "snapshot/export.h"
#include "snapshot/live.h"
#include "snapshot/reader.h"
#include "store/store.h"
#include "tools/cli/command.h"
#include "tools/io/history_log.h"
#include "tools/cli/query_args.h"
#include "tools/cli/replay_queries.h"
#include "tools/cli/replication.h"
#include "tools/io/ingest.h"
#include "tools/io/json_input.h"
#include "tools/io/json_records.h"
#include "tools/io/node_arg.h"
#include "tools/io/query_log.h"
#include "tools/io/query_table.h"
#ifdef AMEM_WITH_NATS
#include "tools/replication/nats_log.h"
#endif

namespace py = pybind11;

namespace amem::python {
namespace {

using Json = nlohmann::ordered_json;

// ---- errors: amem.Error and one subclass per Status code ----
struct ErrorClasses {
  PyObject* base = nullptr;
  PyObject* by_code[7] = {};
};
ErrorClasses errors;

[[noreturn]] void Raise(const Status& s) {
  PyObject* cls = errors.by_code[static_cast<int>(s.code())];
  if (cls == nullptr) cls = errors.base;
  // The text the CLI prints after "amem <command>: " (Status::ToString).
  py::object e = py::reinterpret_borrow<py::object>(cls)(s.ToString());
  e.attr("message") = s.message();
  PyErr_SetObject(cls, e.ptr());
  throw py::error_already_set();
}

template <typename T>
T Check(Result<T> r) {
  if (!r.ok()) Raise(r.status());
  return std::move(r).value();
}
void Check(const Status& s) {
  if (!s.ok()) Raise(s);
}

PyObject* MakeError(py::module_& m, const char* name, PyObject* base2, const char* doc) {
  std::string qualified = std::string("amem.") + name;
  PyObject* bases = base2 == nullptr ? PyTuple_Pack(1, errors.base)
                                     : PyTuple_Pack(2, errors.base, base2);
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases, nullptr);
  Py_DECREF(bases);
  if (cls == nullptr) throw py::error_already_set();
  m.add_object(name, py::reinterpret_borrow<py::object>(cls));
  return cls;
}

void DefineErrors(py::module_& m) {
  errors.base = PyErr_NewExceptionWithDoc(
      "amem.Error",
      "An amem call failed. str(e) is what the CLI prints after 'amem <command>: '; "
      "e.message is the message alone. Nothing was written by a failed write.",
      PyExc_Exception, nullptr);
  m.add_object("Error", py::reinterpret_borrow<py::object>(errors.base));
  using C = Status::Code;
  auto set = [&](C code, const char* name, PyObject* base2, const char* doc) {
    errors.by_code[static_cast<int>(code)] = MakeError(m, name, base2, doc);
  };
  set(C::kNotFound, "NotFound", PyExc_LookupError,
      "The node, edge, kv entry or store does not exist.");
  set(C::kCorruption, "Corruption", nullptr, "A record, index or file is damaged.");
  set(C::kInvalidArgument, "InvalidArgument", PyExc_ValueError,
      "Bad input, named; nothing was written.");
  set(C::kIOError, "IOError", PyExc_OSError, "The file system failed (or the store is read-only).");
  set(C::kNotSupported, "NotSupported", nullptr, "A format this build cannot read.");
  set(C::kAborted, "Aborted", nullptr,
      "Another writer committed first (expected_revision): nothing was written; read again "
      "and retry.");
}

// ---- JSON <-> Python ----
py::object ToPython(const Json& j) {
  switch (j.type()) {
    case Json::value_t::null: return py::none();
    case Json::value_t::boolean: return py::bool_(j.get<bool>());
    case Json::value_t::number_integer: return py::int_(j.get<int64_t>());
    case Json::value_t::number_unsigned: return py::int_(j.get<uint64_t>());
    case Json::value_t::number_float: return py::float_(j.get<double>());
    case Json::value_t::string: return py::str(j.get_ref<const std::string&>());
    case Json::value_t::array: {
      py::list out(j.size());
      size_t i = 0;
      for (const Json& v : j) out[i++] = ToPython(v);
      return out;
    }
    case Json::value_t::object: {
      py::dict out;
      for (const auto& [k, v] : j.items()) out[py::str(k)] = ToPython(v);
      return out;
    }
    default: return py::none();
  }
}

// A Python value (None, bool, int, float, str, list/tuple, dict with str keys) as
// JSON; anything else is InvalidArgument naming `what`.
Json FromPython(py::handle v, const std::string& what) {
  if (v.is_none()) return nullptr;
  if (py::isinstance<py::bool_>(v)) return v.cast<bool>();
  if (py::isinstance<py::int_>(v)) {
    try {
      return v.cast<int64_t>();
    } catch (const py::cast_error&) {
      Raise(Status::InvalidArgument(what + ": an integer out of range"));
    }
  }
  if (py::isinstance<py::float_>(v)) return v.cast<double>();
  if (py::isinstance<py::str>(v)) return v.cast<std::string>();
  if (py::isinstance<py::dict>(v)) {
    Json out = Json::object();
    for (auto [k, x] : v.cast<py::dict>()) {
      if (!py::isinstance<py::str>(k)) Raise(Status::InvalidArgument(what + ": a key is not a str"));
      out[k.cast<std::string>()] = FromPython(x, what);
    }
    return out;
  }
  if (py::isinstance<py::list>(v) || py::isinstance<py::tuple>(v)) {
    Json out = Json::array();
    for (py::handle x : v) out.push_back(FromPython(x, what));
    return out;
  }
  Raise(Status::InvalidArgument(what + ": not a JSON value (" +
                                std::string(py::str(py::type::of(v).attr("__name__"))) + ")"));
}

// A vector argument: any buffer of float32 (a NumPy array, array('f'), a
// memoryview), or a sequence of numbers.
std::vector<float> FloatsFromPython(py::handle v, const std::string& what) {
  if (PyObject_CheckBuffer(v.ptr()) && !py::isinstance<py::str>(v) &&
      !py::isinstance<py::bytes>(v)) {
    py::buffer_info info = py::reinterpret_borrow<py::buffer>(v).request();
    if (info.itemsize != 4 || (info.format != "f" && info.format != "<f" && info.format != "=f")) {
      Raise(Status::InvalidArgument(what + ": a buffer of float32 expected, got format '" +
                                    info.format + "'"));
    }
    if (info.ndim != 1 || info.strides[0] != 4) {
      Raise(Status::InvalidArgument(what + ": a contiguous 1-dimensional buffer expected"));
    }
    const float* p = static_cast<const float*>(info.ptr);
    return std::vector<float>(p, p + info.shape[0]);
  }
  Json j = FromPython(v, what);
  return Check(io::VectorFromJson(nlohmann::json::parse(j.dump()), what));
}

// ---- vectors without a copy ----
// The bytes of one vector in a mapped snapshot, with the snapshot kept alive: what
// numpy.frombuffer (or memoryview) reads.
struct VectorBuffer {
  std::shared_ptr<const snapshot::Reader> reader;
  const float* data = nullptr;
  size_t size = 0;
};

py::object VectorObject(std::shared_ptr<const snapshot::Reader> reader, uint32_t index) {
  const float* v = reader->vector(index);
  if (v == nullptr) return py::none();
  py::object buf = py::cast(VectorBuffer{reader, v, reader->dimension()});
  // Looked up once, and never released: a static py::object would be destroyed
  // after the interpreter, without the GIL.
  static const py::handle frombuffer = []() -> py::handle {
    try {
      return py::object(py::module_::import("numpy").attr("frombuffer")).release();
    } catch (const py::error_already_set&) {
      return py::handle();
    }
  }();
  if (frombuffer) return frombuffer(buf, py::str("<f4"));
  return py::memoryview(buf);
}

// ---- reads ----
ReadView ViewOf(std::optional<uint64_t> as_of, std::optional<int64_t> at) {
  if (as_of && at) Raise(Status::InvalidArgument("as_of and at: give one"));
  if (as_of) return ReadView::AtRevision(*as_of);
  if (at) return ReadView::AtTime(*at);
  return ReadView::Latest();
}

WriteOptions Attribution(std::optional<int64_t> ts, const std::string& run,
                         const std::string& task, const std::string& scope = {},
                         std::optional<uint64_t> expected_revision = std::nullopt) {
  WriteOptions o;
  o.ts = ts;
  o.run = run;
  o.task = task;
  o.scope = scope;
  o.expected_revision = expected_revision;
  return o;
}

// ---- the store ----
struct PyStore {
  // Shared with every call in progress: close() from another thread leaves a call
  // that runs without the GIL its store until it returns.
  std::shared_ptr<Store> store;
  snapshot::LiveCache live_cache;
  snapshot::LiveOptions live_options;
  std::string query_log;

  std::shared_ptr<Store> get() {
    if (!store) Raise(Status::InvalidArgument("the store is closed"));
    return store;
  }
};

// One snapshot: a file, or a view of a store (its live base + delta).
struct PyView {
  std::shared_ptr<const snapshot::Reader> reader;
  std::shared_ptr<PyStore> store;  // null for a snapshot file
  std::optional<uint64_t> revision;
  bool latest = false;
  std::string path;  // a snapshot file's
};

// The operations a write queues: Store's one-call writes use a batch of one.
struct Ops {
  static void PutNode(Batch* b, const std::string& key, const std::string& type,
                      const std::string& content, py::handle meta, double confidence,
                      py::handle vector, std::optional<int64_t> ts,
                      std::optional<std::string> run, std::optional<std::string> task,
                      std::optional<std::string> scope) {
    NodeInput node;
    node.key = key;
    std::optional<NodeType> t = ParseNodeType(type);
    if (!t) {
      Raise(Status::InvalidArgument("type: unknown node type \"" + type +
                                    "\" (fact, decision, inference, correction, skill, "
                                    "episode, constraint, file, symbol, module, entity)"));
    }
    node.type = *t;
    node.content = content;
    if (!meta.is_none()) {
      Json j = py::isinstance<py::str>(meta)
                   ? Json(Check(io::ParseJson(meta.cast<std::string>(), "meta")))
                   : FromPython(meta, "meta");
      node.meta = Check(io::ObjectTextFromJson(nlohmann::json::parse(j.dump()), "meta"));
    }
    node.confidence = Check(io::FiniteFloat(confidence, "confidence"));
    if (!vector.is_none()) node.vector = FloatsFromPython(vector, "vector");
    node.ts = ts;
    node.run = std::move(run);
    node.task = std::move(task);
    node.scope = std::move(scope);
    b->PutNode(std::move(node));
  }

  static void PutEdge(Batch* b, const Store& store, const std::string& src,
                      const std::string& rel, const std::string& dst, double weight,
                      py::handle payload, std::optional<int64_t> ts,
                      std::optional<std::string> run, std::optional<std::string> task) {
    EdgeInput edge;
    edge.weight = Check(io::FiniteFloat(weight, "weight"));
    if (!payload.is_none()) {
      edge.payload = py::isinstance<py::str>(payload)
                         ? Check(io::ParseJson(payload.cast<std::string>(), "payload")).dump()
                         : FromPython(payload, "payload").dump();
    }
    edge.src = io::NodeKeyForArg(store, src);
    edge.rel = rel;
    edge.dst = io::NodeKeyForArg(store, dst);
    edge.ts = ts;
    edge.run = std::move(run);
    edge.task = std::move(task);
    b->PutEdge(std::move(edge));
  }

  static KvInput Kv(const std::string& scope, const std::string& ns, const std::string& key,
                    py::handle value) {
    KvInput kv;
    kv.scope = scope;
    kv.ns = ns;
    kv.key = key;
    kv.value = KvValue(value);
    return kv;
  }

  static std::string KvValue(py::handle value) {
    if (py::isinstance<py::str>(value)) return value.cast<std::string>();
    if (py::isinstance<py::dict>(value) || py::isinstance<py::list>(value)) {
      return FromPython(value, "value").dump();  // as ingest stores an object value
    }
    Raise(Status::InvalidArgument("value: a str, dict or list expected"));
  }
};

// Applies `batch` without the GIL; a single write's error loses its "op 0: ".
uint64_t ApplyBatch(PyStore& s, const Batch& batch, const WriteOptions& options, bool single) {
  const std::shared_ptr<Store> keep = s.get();
  Store& store = *keep;
  Result<uint64_t> rev = Status::InvalidArgument("");
  {
    py::gil_scoped_release nogil;
    rev = store.Apply(batch, options);
  }
  if (!rev.ok()) Raise(single ? cli::SingleWriteError(rev.status()) : rev.status());
  return *rev;
}

// `with store.batch() as b:` — one transaction, all or nothing.
struct PyBatch {
  std::shared_ptr<PyStore> store;
  Batch batch;
  WriteOptions options;
  std::optional<uint64_t> revision;
  bool open = false;
  bool done = false;

  void CheckOpen() {
    if (!open) {
      Raise(Status::InvalidArgument(done ? "this batch was applied or discarded; start another "
                                           "with store.batch()"
                                         : "use the batch in a with statement"));
    }
  }
};

// ---- the query table as methods ----
std::string PyName(const io::QueryDef& def) {
  std::string name = def.command;
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

bool Accepted(const io::Param& p) { return p.scope != io::ParamScope::kMcpOnly; }

bool Positional(const io::Param& p) {
  return !p.cli.empty() && p.cli.rfind("--", 0) != 0;
}

std::string TypeName(const io::Param& p) {
  switch (p.type) {
    case io::ParamType::kString: return "str";
    case io::ParamType::kInteger: return "int";
    case io::ParamType::kNumber: return "float";
    case io::ParamType::kBoolean: return "bool";
    case io::ParamType::kStrings: return "list[str]";
    case io::ParamType::kVector: return "VectorLike";
  }
  return "object";
}

// The docstring of a query method: the CLI's help, then one line per parameter
// with the CLI's help text.
std::string QueryDoc(const io::QueryDef& def) {
  std::string doc = def.cli_help + "\n\nArguments (the CLI's `amem " + def.command +
                    "` flags, snake_case):\n";
  for (const io::Param& p : def.params) {
    if (!Accepted(p)) continue;
    doc += "    " + p.name + " (" + TypeName(p) + (p.required ? ", required" : "") +
           "): " + io::ParamHelp(p, io::FrontEnd::kCli) + "\n";
  }
  if (def.writes) {
    doc += "    ts, run, task: the attribution of what it writes (the CLI's --ts, --run, --task)\n";
  }
  doc += "\nReturns the document `amem " + def.command + " --json` prints, as Python data.";
  return doc;
}

const io::Param* FindParam(const io::QueryDef& def, const std::string& name) {
  for (const io::Param& p : def.params) {
    if (p.name == name && Accepted(p)) return &p;
  }
  return nullptr;
}

// One argument checked against its parameter as both front ends check it (type,
// choices, range); InvalidArgument naming it.
Json ArgFromPython(const io::Param& p, py::handle v) {
  const std::string& n = p.name;
  auto bad = [&](const std::string& what) { Raise(Status::InvalidArgument(n + ": " + what)); };
  auto range = [&](double x) {
    if (!std::isfinite(x)) bad("not a finite number");
    if (p.min && x < *p.min) bad("must be at least " + io::DefaultText(*p.min));
    if (p.max && x > *p.max) bad("must be at most " + io::DefaultText(*p.max));
  };
  switch (p.type) {
    case io::ParamType::kString: {
      if (!py::isinstance<py::str>(v)) bad("a str expected");
      std::string s = v.cast<std::string>();
      if (!p.choices.empty() &&
          std::find(p.choices.begin(), p.choices.end(), s) == p.choices.end()) {
        std::string list;
        for (const std::string& c : p.choices) list += (list.empty() ? "" : ", ") + c;
        bad("\"" + s + "\" is not one of " + list);
      }
      return s;
    }
    case io::ParamType::kInteger: {
      if (!py::isinstance<py::int_>(v) || py::isinstance<py::bool_>(v)) bad("an int expected");
      Json j = FromPython(v, n);
      range(static_cast<double>(j.get<int64_t>()));
      return j;
    }
    case io::ParamType::kNumber: {
      if (py::isinstance<py::bool_>(v) ||
          !(py::isinstance<py::int_>(v) || py::isinstance<py::float_>(v))) {
        bad("a number expected");
      }
      double x = v.cast<double>();
      range(x);
      return x;
    }
    case io::ParamType::kBoolean:
      if (!py::isinstance<py::bool_>(v)) bad("a bool expected");
      return v.cast<bool>();
    case io::ParamType::kStrings: {
      if (py::isinstance<py::str>(v)) return Json::array({v.cast<std::string>()});
      Json out = Json::array();
      for (py::handle x : py::iter(v)) {
        if (!py::isinstance<py::str>(x)) bad("a list of str expected");
        std::string s = x.cast<std::string>();
        if (s.empty() && p.role != io::ParamRole::kPlain) bad("an empty name");
        if (p.role == io::ParamRole::kTypes && !ParseNodeType(s)) {
          bad("unknown node type \"" + s + "\"");
        }
        out.push_back(std::move(s));
      }
      if (p.role == io::ParamRole::kNodes && out.empty()) bad("an empty list");
      return out;
    }
    case io::ParamType::kVector: {
      std::vector<float> f = FloatsFromPython(v, n);
      if (f.empty()) bad("an empty vector");
      return f;
    }
  }
  return nullptr;
}

// The arguments object of a call: positional values fill the positional
// parameters (NODE, QUERY...) in order, keywords name any parameter.
Json ArgsFromPython(const io::QueryDef& def, const py::args& args, const py::kwargs& kwargs) {
  Json out = Json::object();
  size_t next = 0;
  std::vector<const io::Param*> positional;
  for (const io::Param& p : def.params) {
    if (Accepted(p) && Positional(p)) positional.push_back(&p);
  }
  for (py::handle v : args) {
    if (next >= positional.size()) {
      Raise(Status::InvalidArgument(PyName(def) + "() takes " + std::to_string(positional.size()) +
                                    " positional argument(s); name the others"));
    }
    const io::Param& p = *positional[next++];
    if (!v.is_none()) out[p.name] = ArgFromPython(p, v);
  }
  for (auto [k, v] : kwargs) {
    std::string name = k.cast<std::string>();
    const io::Param* p = FindParam(def, name);
    if (p == nullptr) {
      std::string names;
      for (const io::Param& q : def.params) {
        if (Accepted(q)) names += (names.empty() ? "" : ", ") + q.name;
      }
      Raise(Status::InvalidArgument(PyName(def) + "(): unknown argument \"" + name +
                                    "\" (arguments: " + names + ")"));
    }
    if (out.contains(name)) {
      Raise(Status::InvalidArgument(PyName(def) + "(): \"" + name + "\" given twice"));
    }
    if (v.is_none()) continue;  // None: not given
    Json value = ArgFromPython(*p, v);
    // "" is not given, as on the command line (unless it means something).
    if (value.is_string() && value.get_ref<const std::string&>().empty() && !p->allow_empty) {
      continue;
    }
    out[name] = std::move(value);
  }
  for (const io::Param& p : def.params) {
    if (Accepted(p) && p.required && !out.contains(p.name)) {
      Raise(Status::InvalidArgument(PyName(def) + "(): \"" + p.name + "\" is required"));
    }
  }
  return out;
}

py::object RunQuery(PyView& v, const io::QueryDef& def, const py::args& args,
                    const py::kwargs& given) {
  // A query that writes (consolidate) takes the write's attribution: ts, run, task.
  WriteOptions write;
  py::kwargs kwargs = given;
  if (def.writes) {
    kwargs = py::kwargs(py::dict(given));
    for (const char* name : {"ts", "run", "task"}) {
      if (!kwargs.contains(name)) continue;
      py::object value = kwargs[name];
      PyDict_DelItemString(kwargs.ptr(), name);
      if (value.is_none()) continue;
      if (std::string(name) == "ts") {
        write.ts = value.cast<int64_t>();
      } else {
        (std::string(name) == "run" ? write.run : write.task) = value.cast<std::string>();
      }
    }
  }
  Json call_args = ArgsFromPython(def, args, kwargs);
  for (const io::Param& p : def.params) {
    if (p.latest_only && call_args.value(p.name, false)) {
      if (!v.latest) {
        Raise(Status::InvalidArgument(p.name + " writes to the store's latest state: only on "
                                      "store.view() without as_of/at"));
      }
      if (v.store) v.store->get();  // a bound store writes through its stream
    }
  }
  Check(io::CheckGiven(def, call_args, io::FrontEnd::kMcp));
  Check(io::CheckTextLengths(def, call_args, io::FrontEnd::kMcp));
  Result<io::QueryAnswer> answer = Status::InvalidArgument("not run");
  // A store view writes through its store (consolidate execute) while it is open.
  const std::shared_ptr<Store> writer = v.store ? v.store->store : nullptr;
  {
    py::gil_scoped_release nogil;
    io::QueryCall call{.reader = *v.reader,
                       .args = call_args,
                       .def = def,
                       .front_end = io::FrontEnd::kCli,
                       .store = writer.get(),
                       .latest = v.latest,
                       .write = write,
                       .json_output = true};
    answer = def.run(call);
    if (Status content = v.reader->ContentStatus(); !content.ok() && !(answer.ok() && answer->wrote)) {
      answer = content;
    }
  }
  if (!answer.ok()) Raise(answer.status());
  // Recorded as `amem mcp` records a tool call: replay_queries asks it again.
  if (v.store && !v.store->query_log.empty() && !answer->wrote) {
    io::QueryRecord record{"mcp", def.tool, call_args, v.revision, io::AnswerDigest(answer->doc)};
    Check(io::AppendQueryLog(v.store->query_log, record));
  }
  return ToPython(answer->doc);
}

// The live edges leaving (out) or entering a node of the store, as amem out/in
// --json list them.
py::list StoreEdges(PyStore& s, const std::string& node, const std::string& rel,
                    const ReadView& view, bool out) {
  const std::shared_ptr<Store> keep = s.get();
  Store& store = *keep;
  const std::string key = io::NodeKeyForArg(store, node, view);
  py::list list;
  for (const EdgeRecord& e : Check(out ? store.Out(key, rel, view) : store.In(key, rel, view))) {
    list.append(ToPython(io::EdgeToJson(e)));
  }
  return list;
}

// ---- node and edge reads on a snapshot ----
py::object SnapshotNode(PyView& v, const std::string& node) {
  const snapshot::Reader& r = *v.reader;
  uint32_t i = Check(query::ResolveNode(r, node));
  Json j;
  j["index"] = i;
  j["id"] = FormatHexId(r.id(i));
  j["key"] = r.key(i);
  const char* type = NodeTypeName(r.type(i));
  j["type"] = type ? type : std::to_string(r.type_code(i));
  j["content"] = r.content(i);
  j["meta"] = io::EmbeddedJson(std::string(r.meta(i)));
  j["confidence"] = io::FloatJson(r.confidence(i));
  j["scope"] = r.scope(i);
  j["run"] = r.run(i);
  j["task"] = r.task(i);
  j["created_ts"] = r.created_ts(i);
  j["updated_ts"] = r.updated_ts(i);
  j["stub"] = r.is_stub(i);
  Check(r.ContentStatus());
  py::dict out = ToPython(j);
  out["vector"] = VectorObject(v.reader, i);
  return out;
}

py::list SnapshotEdges(PyView& v, const std::string& node, bool out_edges) {
  const snapshot::Reader& r = *v.reader;
  uint32_t i = Check(query::ResolveNode(r, node));
  Json list = Json::array();
  if (out_edges) {
    for (uint32_t j = r.out_begin(i); j < r.out_end(i); ++j) list.push_back(query::EdgeJson(r, j));
  } else {
    for (uint32_t k = r.in_begin(i); k < r.in_end(i); ++k) {
      list.push_back(query::EdgeJson(r, r.in_edge(k)));
    }
  }
  return ToPython(list);
}

std::shared_ptr<PyView> OpenView(const std::shared_ptr<PyStore>& s, std::optional<uint64_t> as_of,
                                 std::optional<int64_t> at) {
  const std::shared_ptr<Store> keep = s->get();
  Store& store = *keep;
  ReadView view = ViewOf(as_of, at);
  auto open = [&]() -> Result<snapshot::LiveView> {
    py::gil_scoped_release nogil;
    return snapshot::OpenLive(store, view, s->live_options, &s->live_cache);
  };
  Result<snapshot::LiveView> live = open();
  if (!live.ok() && snapshot::IsLiveCacheCorruption(live.status())) {
    // A damaged cache file of the live view: discarded and compiled again, once.
    Result<std::string> removed = snapshot::DiscardLiveCache(store, nullptr, &s->live_cache);
    if (removed.ok()) live = open();
  }
  if (!live.ok()) Raise(live.status());
  auto v = std::make_shared<PyView>();
  v->reader = std::move(live->reader);
  v->store = s;
  v->revision = live->revision;
  v->latest = view.kind == ReadView::Kind::kLatest;
  return v;
}

std::string FsPath(py::handle v) {
  return py::str(py::module_::import("os").attr("fspath")(v)).cast<std::string>();
}

py::object OpenSnapshotFile(py::object file) {
  const std::string path = FsPath(file);
  Result<std::unique_ptr<snapshot::Reader>> r = Status::InvalidArgument("");
  {
    py::gil_scoped_release nogil;
    r = snapshot::Reader::Open(path, cli::kCheckedRead);
  }
  auto v = std::make_shared<PyView>();
  v->reader = std::shared_ptr<const snapshot::Reader>(Check(std::move(r)));
  v->path = path;
  return py::cast(v);
}

// The text of an ingest or replay input: a path (str or os.PathLike) read whole, or
// an iterable of lines (str) or operations (dict).
bool IsPath(py::handle v) {
  return py::isinstance<py::str>(v) || py::hasattr(v, "__fspath__");
}

std::string LinesFromIterable(py::handle v) {
  std::string text;
  size_t n = 0;
  for (py::handle item : py::iter(v)) {
    ++n;
    if (py::isinstance<py::str>(item)) {
      text += item.cast<std::string>();
      if (text.empty() || text.back() != '\n') text += '\n';
    } else if (py::isinstance<py::dict>(item)) {
      text += FromPython(item, "item " + std::to_string(n)).dump() + "\n";
    } else {
      Raise(Status::InvalidArgument("item " + std::to_string(n) + ": a dict or a str line expected"));
    }
  }
  return text;
}

}  // namespace
}  // namespace amem::python

using namespace amem;
using namespace amem::python;

PYBIND11_MODULE(_amem, m) {
  m.doc() = "amem: an embedded graph memory for coding agents (the C++ API in-process).";
  m.attr("__version__") = AMEM_VERSION;
#ifdef AMEM_WITH_NATS
  // Bound stores reach their stream through libnats, as the amem executable's
  // (tools/main.cc). AMEM_REPLICATION_TEST_NO_NATS: as if built without it (the
  // Python tests' check of that build's refusal).
  if (std::getenv("AMEM_REPLICATION_TEST_NO_NATS") == nullptr) {
    cli::SetRevisionLogFactory(replication::NatsLogFactory());
  }
#endif
  DefineErrors(m);

  py::class_<VectorBuffer>(m, "_VectorBuffer", py::buffer_protocol(),
                           "A vector's float32 bytes in a mapped snapshot, which it keeps open.")
      .def_buffer([](VectorBuffer& b) {
        return py::buffer_info(const_cast<float*>(b.data), sizeof(float), "f", 1,
                               {static_cast<py::ssize_t>(b.size)},
                               {static_cast<py::ssize_t>(sizeof(float))}, /*readonly=*/true);
      })
      .def_property_readonly("address", [](const VectorBuffer& b) {
        return reinterpret_cast<uintptr_t>(b.data);
      });

  // ---- View / Snapshot ----
  auto view = py::class_<PyView, std::shared_ptr<PyView>>(
      m, "View",
      "A read-only snapshot: a .amem file (amem.Snapshot(path)) or a store's state "
      "(store.view(as_of=None)). Safe to query from several threads.");
  view.def_property_readonly("revision", [](const PyView& v) { return v.revision; },
                             "The store revision it shows (None for a snapshot file).")
      .def_property_readonly("node_count", [](const PyView& v) { return v.reader->node_count(); })
      .def_property_readonly("edge_count", [](const PyView& v) { return v.reader->edge_count(); })
      .def_property_readonly("dimension", [](const PyView& v) { return v.reader->dimension(); })
      .def_property_readonly("file_path", [](const PyView& v) { return v.path; },
                             "The snapshot file's path (\"\" for a store view).")
      .def("get_node", &SnapshotNode, py::arg("node"),
           "The node (a key, a 16-hex-digit id or #N): its fields, and its vector as a "
           "read-only NumPy float32 array over the mapped snapshot (a memoryview "
           "without NumPy), or None.")
      .def("vector", [](PyView& v, const std::string& node) {
             return VectorObject(v.reader, Check(query::ResolveNode(*v.reader, node)));
           }, py::arg("node"),
           "The node's vector without a copy (NumPy float32, read-only; the snapshot "
           "stays open while it lives), or None.")
      .def("out_edges", [](PyView& v, const std::string& n) { return SnapshotEdges(v, n, true); },
           py::arg("node"), "Edges leaving the node: [{src, rel, dst, weight}].")
      .def("in_edges", [](PyView& v, const std::string& n) { return SnapshotEdges(v, n, false); },
           py::arg("node"), "Edges entering the node: [{src, rel, dst, weight}].");
  for (const io::QueryDef& def : io::Queries()) {
    const io::QueryDef* d = &def;
    view.def(PyName(def).c_str(),
             [d](PyView& v, const py::args& args, const py::kwargs& kwargs) {
               return RunQuery(v, *d, args, kwargs);
             },
             QueryDoc(def).c_str());
  }
  // The C++ in-process figure of a query for bench/python_bench.py: the same table
  // call, timed `reps` times in C++ without Python in the loop (seconds per call).
  view.def("_time_native", [](PyView& v, const std::string& method, int reps,
                              const py::kwargs& kwargs) {
    const io::QueryDef* def = nullptr;
    for (const io::QueryDef& d : io::Queries()) {
      if (PyName(d) == method) def = &d;
    }
    if (def == nullptr) Raise(Status::InvalidArgument(method + ": not a query"));
    Json args = ArgsFromPython(*def, py::args(), kwargs);
    std::vector<double> seconds;
    Status failed;
    {
      py::gil_scoped_release nogil;
      io::QueryCall call{.reader = *v.reader, .args = args, .def = *def,
                         .front_end = io::FrontEnd::kCli, .latest = false, .json_output = true};
      for (int i = 0; i < reps && failed.ok(); ++i) {
        auto start = std::chrono::steady_clock::now();
        Result<io::QueryAnswer> answer = def->run(call);
        auto end = std::chrono::steady_clock::now();
        if (!answer.ok()) failed = answer.status();
        seconds.push_back(std::chrono::duration<double>(end - start).count());
      }
    }
    Check(failed);
    return seconds;
  }, py::arg("method"), py::arg("reps"));
  m.def("Snapshot", &OpenSnapshotFile, py::arg("path"),
        "Opens a .amem snapshot file (indexes checked, as `amem --snapshot FILE` does).");

  // ---- Batch ----
  py::class_<PyBatch, std::shared_ptr<PyBatch>>(
      m, "Batch",
      "Writes queued by `with store.batch() as b:` and applied as one revision when the "
      "block ends; an exception in the block (or a bad operation) writes nothing.")
      .def("__enter__", [](std::shared_ptr<PyBatch> b) {
        if (b->done || b->open) Raise(Status::InvalidArgument("a batch is entered once"));
        b->open = true;
        return b;
      })
      .def("__exit__", [](PyBatch& b, py::object type, py::object, py::object) {
        b.open = false;
        b.done = true;
        if (type.is_none()) b.revision = ApplyBatch(*b.store, b.batch, b.options, false);
        b.batch.Clear();
        return false;
      })
      .def("put_node", [](PyBatch& b, const std::string& key, const std::string& type,
                          const std::string& content, py::object meta, double confidence,
                          py::object vector, std::optional<int64_t> ts,
                          std::optional<std::string> run, std::optional<std::string> task,
                          std::optional<std::string> scope) {
             b.CheckOpen();
             Ops::PutNode(&b.batch, key, type, content, meta, confidence, vector, ts,
                          std::move(run), std::move(task), std::move(scope));
           },
           py::arg("key"), py::arg("type") = "entity", py::arg("content") = "",
           py::arg("meta") = py::none(), py::arg("confidence") = 1.0,
           py::arg("vector") = py::none(), py::arg("ts") = py::none(),
           py::arg("run") = py::none(), py::arg("task") = py::none(),
           py::arg("scope") = py::none())
      .def("put_edge", [](PyBatch& b, const std::string& src, const std::string& rel,
                          const std::string& dst, double weight, py::object payload,
                          std::optional<int64_t> ts, std::optional<std::string> run,
                          std::optional<std::string> task) {
             b.CheckOpen();
             Ops::PutEdge(&b.batch, *b.store->get(), src, rel, dst, weight, payload, ts,
                          std::move(run), std::move(task));
           },
           py::arg("src"), py::arg("rel"), py::arg("dst"), py::arg("weight") = 1.0,
           py::arg("payload") = py::none(), py::arg("ts") = py::none(),
           py::arg("run") = py::none(), py::arg("task") = py::none())
      .def("delete_node", [](PyBatch& b, const std::string& node) {
             b.CheckOpen();
             b.batch.DeleteNode(io::NodeKeyForArg(*b.store->get(), node));
           }, py::arg("node"))
      .def("delete_edge", [](PyBatch& b, const std::string& src, const std::string& rel,
                             const std::string& dst) {
             b.CheckOpen();
             const std::shared_ptr<Store> s = b.store->get();
             b.batch.DeleteEdge(io::NodeKeyForArg(*s, src), rel, io::NodeKeyForArg(*s, dst));
           }, py::arg("src"), py::arg("rel"), py::arg("dst"))
      .def("kv_put", [](PyBatch& b, const std::string& scope, const std::string& ns,
                        const std::string& key, py::object value) {
             b.CheckOpen();
             b.batch.PutKv(Ops::Kv(scope, ns, key, value));
           }, py::arg("scope"), py::arg("ns"), py::arg("key"), py::arg("value"))
      .def("kv_delete", [](PyBatch& b, const std::string& scope, const std::string& ns,
                           const std::string& key) {
             b.CheckOpen();
             b.batch.DeleteKv(scope, ns, key);
           }, py::arg("scope"), py::arg("ns"), py::arg("key"))
      .def("define_relation", [](PyBatch& b, const std::string& name) {
             b.CheckOpen();
             b.batch.DefineRelation(name);
           }, py::arg("name"))
      .def("__len__", [](const PyBatch& b) { return b.batch.size(); })
      .def_property_readonly("revision", [](const PyBatch& b) { return b.revision; },
                             "The revision committed when the block ended (None before).");

  // ---- Store ----
  using S = std::shared_ptr<PyStore>;
  py::class_<PyStore, S>(
      m, "Store",
      "The LMDB-backed store in a directory: writes (each one revision), batches, "
      "history, and views of its state. Safe to use from several threads; several "
      "processes may write one store.")
      .def(py::init([](py::object path, bool create, uint32_t dimension, bool durable,
                       bool read_only, std::optional<std::string> query_log) {
             std::string dir = FsPath(path);
             StoreOptions o;
             o.create_if_missing = create;
             o.dimension = dimension;
             o.durable = durable;
             o.read_only = read_only;
             if (const char* sink = std::getenv("AMEM_TELEMETRY")) o.telemetry_path = sink;
             auto s = std::make_shared<PyStore>();
             Result<std::unique_ptr<Store>> store = Status::InvalidArgument("");
             {
               py::gil_scoped_release nogil;
               store = Store::Open(dir, o);
             }
             if (store.status().IsNotFound()) {
               Raise(Status::NotFound(store.status().message() +
                                      " (create one with amem init, or Store(path, create=True))"));
             }
             s->store = std::shared_ptr<Store>(Check(std::move(store)));
             // A store bound to a stream publishes every write to it first, as the
             // CLI's and amem mcp's (docs/REPLICATION.md).
             Check(cli::InstallReplication(dir, s->store.get()));
             s->live_options = Check(snapshot::LiveOptionsFromEnv());
             if (query_log) {
               s->query_log = *query_log;
             } else if (const char* env = std::getenv("AMEM_QUERY_LOG")) {
               s->query_log = env;
             }
             return s;
           }),
           py::arg("path"), py::arg("create") = false, py::arg("dimension") = kDefaultDimension,
           py::arg("durable") = true, py::arg("read_only") = false,
           py::arg("query_log") = py::none(),
           "Opens the store in directory `path` (create=True: created when missing, with "
           "`dimension`). query_log (default $AMEM_QUERY_LOG): a file where every query "
           "of its views is recorded, for replay_queries.")
      .def_property_readonly("path", [](PyStore& s) { return s.get()->path(); })
      .def_property_readonly("dimension", [](PyStore& s) { return s.get()->dimension(); })
      .def_property_readonly("revision", [](PyStore& s) { return Check(s.get()->revision()); },
                             "The latest committed revision (0 for a new store).")
      .def_property("query_log", [](PyStore& s) { return s.query_log; },
                    [](PyStore& s, std::string path) { s.query_log = std::move(path); })
      .def("close", [](PyStore& s) { s.store.reset(); },
           "Closes the store (views already open stay readable).")
      .def("__enter__", [](S s) { return s; })
      .def("__exit__", [](PyStore& s, py::object, py::object, py::object) {
        s.store.reset();
        return false;
      })
      // writes: one revision each, as the CLI's put-node, put-edge, ...
      .def("put_node", [](PyStore& s, const std::string& key, const std::string& type,
                          const std::string& content, py::object meta, double confidence,
                          py::object vector, std::optional<int64_t> ts, const std::string& run,
                          const std::string& task, const std::string& scope) {
             Batch b;
             Ops::PutNode(&b, key, type, content, meta, confidence, vector, std::nullopt,
                          std::nullopt, std::nullopt, std::nullopt);
             return ApplyBatch(s, b, Attribution(ts, run, task, scope), true);
           },
           py::arg("key"), py::arg("type") = "entity", py::arg("content") = "",
           py::arg("meta") = py::none(), py::arg("confidence") = 1.0,
           py::arg("vector") = py::none(), py::arg("ts") = py::none(), py::arg("run") = "",
           py::arg("task") = "", py::arg("scope") = "",
           "Writes a node (amem put-node); returns the revision. meta: a dict of str "
           "values (or its JSON text); vector: float32 buffer or numbers, `dimension` long.")
      .def("put_edge", [](PyStore& s, const std::string& src, const std::string& rel,
                          const std::string& dst, double weight, py::object payload,
                          std::optional<int64_t> ts, const std::string& run,
                          const std::string& task) {
             Batch b;
             Ops::PutEdge(&b, *s.get(), src, rel, dst, weight, payload, std::nullopt,
                          std::nullopt, std::nullopt);
             return ApplyBatch(s, b, Attribution(ts, run, task), true);
           },
           py::arg("src"), py::arg("rel"), py::arg("dst"), py::arg("weight") = 1.0,
           py::arg("payload") = py::none(), py::arg("ts") = py::none(), py::arg("run") = "",
           py::arg("task") = "",
           "Writes the edge src -rel-> dst (amem put-edge); returns the revision.")
      .def("delete_node", [](PyStore& s, const std::string& node, bool with_edges,
                             std::optional<int64_t> ts, const std::string& run,
                             const std::string& task) {
             const std::shared_ptr<Store> keep = s.get();
  Store& store = *keep;
             std::string key = io::NodeKeyForArg(store, node);
             Result<uint64_t> rev = Status::InvalidArgument("");
             {
               py::gil_scoped_release nogil;
               size_t edges = 0;
               rev = with_edges ? io::DeleteNodeAndEdges(&store, key, Attribution(ts, run, task), &edges)
                                : store.DeleteNode(key, Attribution(ts, run, task));
             }
             if (!rev.ok()) Raise(cli::SingleWriteError(rev.status()));
             return *rev;
           },
           py::arg("node"), py::arg("with_edges") = false, py::arg("ts") = py::none(),
           py::arg("run") = "", py::arg("task") = "",
           "Deletes a node (amem del-node; with_edges: and every edge touching it, in the "
           "same revision); NotFound when absent.")
      .def("delete_edge", [](PyStore& s, const std::string& src, const std::string& rel,
                             const std::string& dst, std::optional<int64_t> ts,
                             const std::string& run, const std::string& task) {
             const std::shared_ptr<Store> keep = s.get();
  Store& store = *keep;
             std::string a = io::NodeKeyForArg(store, src), b = io::NodeKeyForArg(store, dst);
             Result<uint64_t> rev = Status::InvalidArgument("");
             {
               py::gil_scoped_release nogil;
               rev = store.DeleteEdge(a, rel, b, Attribution(ts, run, task));
             }
             if (!rev.ok()) Raise(cli::SingleWriteError(rev.status()));
             return *rev;
           },
           py::arg("src"), py::arg("rel"), py::arg("dst"), py::arg("ts") = py::none(),
           py::arg("run") = "", py::arg("task") = "",
           "Deletes the edge src -rel-> dst (amem del-edge); NotFound when absent.")
      .def("kv_put", [](PyStore& s, const std::string& scope, const std::string& ns,
                        const std::string& key, py::object value, std::optional<int64_t> ts,
                        const std::string& run, const std::string& task) {
             Batch b;
             b.PutKv(Ops::Kv(scope, ns, key, value));
             return ApplyBatch(s, b, Attribution(ts, run, task), true);
           },
           py::arg("scope"), py::arg("ns"), py::arg("key"), py::arg("value"),
           py::arg("ts") = py::none(), py::arg("run") = "", py::arg("task") = "",
           "Writes a policy entry (amem kv-put); a dict or list value is stored as its "
           "JSON text.")
      .def("kv_delete", [](PyStore& s, const std::string& scope, const std::string& ns,
                           const std::string& key, std::optional<int64_t> ts,
                           const std::string& run, const std::string& task) {
             const std::shared_ptr<Store> keep = s.get();
  Store& store = *keep;
             Result<uint64_t> rev = Status::InvalidArgument("");
             {
               py::gil_scoped_release nogil;
               rev = store.DeleteKv(scope, ns, key, Attribution(ts, run, task));
             }
             if (!rev.ok()) Raise(cli::SingleWriteError(rev.status()));
             return *rev;
           },
           py::arg("scope"), py::arg("ns"), py::arg("key"), py::arg("ts") = py::none(),
           py::arg("run") = "", py::arg("task") = "",
           "Deletes a policy entry (amem kv-del); NotFound when absent.")
      .def("define_relation", [](PyStore& s, const std::string& name, const std::string& run,
                                 const std::string& task) {
             Batch b;
             b.DefineRelation(name);
             return ApplyBatch(s, b, Attribution(std::nullopt, run, task), true);
           },
           py::arg("name"), py::arg("run") = "", py::arg("task") = "",
           "Defines a custom relation (amem def-rel); idempotent.")
      .def("batch", [](S s, std::optional<int64_t> ts, const std::string& run,
                       const std::string& task, const std::string& scope,
                       std::optional<uint64_t> expected_revision) {
             s->get();
             auto b = std::make_shared<PyBatch>();
             b->store = s;
             b->options = Attribution(ts, run, task, scope, expected_revision);
             return b;
           },
           py::arg("ts") = py::none(), py::arg("run") = "", py::arg("task") = "",
           py::arg("scope") = "", py::arg("expected_revision") = py::none(),
           "A batch for a with statement: its writes are one revision, applied when the "
           "block ends, all or nothing (none on an exception). expected_revision: write only "
           "if the store is still at that revision (else amem.Aborted).")
      // bulk writes and history
      .def("ingest", [](PyStore& s, py::object input, std::optional<int64_t> ts,
                        const std::string& run, const std::string& task) {
             const std::shared_ptr<Store> keep = s.get();
  Store& store = *keep;
             WriteOptions o = Attribution(ts, run, task);
             Result<io::IngestSummary> summary = Status::InvalidArgument("");
             if (IsPath(input)) {
               std::string path = FsPath(input);
               py::gil_scoped_release nogil;
               int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
               if (fd < 0) {
                 summary = Status::IOError(path + ": " + std::strerror(errno));
               } else {
                 struct stat st {};
                 uint64_t size = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? st.st_size : 0;
                 summary = io::IngestFile(&store, fd, size, o);
                 ::close(fd);
               }
             } else {
               std::string text = LinesFromIterable(input);
               py::gil_scoped_release nogil;
               summary = io::Ingest(&store, text, o);
             }
             io::IngestSummary r = Check(std::move(summary));
             py::dict doc;
             doc["rev"] = r.rev;
             doc["ops"] = r.ops;
             doc["lines"] = r.lines;
             return doc;
           },
           py::arg("input"), py::arg("ts") = py::none(), py::arg("run") = "",
           py::arg("task") = "",
           "Applies JSON Lines operations (amem ingest) as one revision, all or nothing: a "
           "file path, or an iterable of lines (str) or operations (dict). Returns {rev, "
           "ops, lines}.")
      .def("log", [](PyStore& s, uint64_t since_rev, uint64_t until_rev) {
             const std::shared_ptr<Store> keep = s.get();
  Store& store = *keep;
             std::string text;
             Status st;
             {
               py::gil_scoped_release nogil;
               st = store.ReadHistory(since_rev, until_rev, [&](const LoggedRevision& r) {
                 io::AppendLogLines(r, &text);
                 return Status::OK();
               });
             }
             Check(st);
             py::list out;
             size_t start = 0;
             while (start < text.size()) {
               size_t end = text.find('\n', start);
               out.append(ToPython(Json::parse(text.substr(start, end - start))));
               start = end + 1;
             }
             return out;
           },
           py::arg("since_rev") = 0, py::arg("until_rev") = 0,
           "The history as the lines of `amem log` (docs/LOG.md), each a dict: revisions "
           "in (since_rev, until_rev]; until_rev 0: up to the latest.")
      .def("replay", [](PyStore& s, py::object input) {
             std::string text;
             if (IsPath(input)) {
               std::string path = FsPath(input);
               Check(cli::ReadInputLines(path, &text));
             } else {
               text = LinesFromIterable(input);
             }
             io::ParsedLog log = Check(io::ParseLog(text));
             const std::shared_ptr<Store> keep = s.get();
             Store& store = *keep;
             Result<cli::ReplayReport> rev = Status::InvalidArgument("");
             {
               py::gil_scoped_release nogil;
               // On a bound store each revision goes through the stream first.
               rev = cli::ReplayRevisions(store, store.path(), log.revisions);
             }
             if (!rev.ok()) Raise(io::ReplayErrorToLine(rev.status(), log));
             py::dict doc;
             doc["rev"] = rev->rev;
             doc["revisions"] = log.revisions.size();
             doc["ops"] = log.ops;
             doc["lines"] = log.lines;
             if (!rev->stream.empty()) {
               doc["stream"] = rev->stream;
               doc["published"] = rev->published;
               doc["skipped"] = rev->skipped;
             }
             return doc;
           },
           py::arg("input"),
           "Applies a history log (amem replay) that continues this store, all or nothing: "
           "a path, or an iterable of log lines (str or dict). On a store bound to a stream "
           "each revision is published to it first, and revisions the store has already are "
           "skipped (the result then has stream, published and skipped).")
      .def("changes", [](PyStore& s, std::optional<uint64_t> since_rev,
                         std::optional<int64_t> since_ts) {
             if (since_rev && since_ts) Raise(Status::InvalidArgument("since_rev and since_ts: give one"));
             const std::shared_ptr<Store> keep = s.get();
  Store& store = *keep;
             Result<std::vector<Change>> changes = Status::InvalidArgument("");
             {
               py::gil_scoped_release nogil;
               changes = since_ts ? store.ChangesSinceTime(*since_ts)
                                  : store.ChangesSinceRevision(since_rev.value_or(0));
             }
             py::list out;
             for (const Change& c : Check(std::move(changes))) out.append(ToPython(io::ChangeToJson(c)));
             return out;
           },
           py::arg("since_rev") = py::none(), py::arg("since_ts") = py::none(),
           "What revisions after since_rev (or committed after since_ts) changed (amem "
           "changes --json's rows).")
      .def("export", [](PyStore& s, py::object path, std::optional<uint64_t> as_of,
                        std::optional<int64_t> at) {
             std::string p = FsPath(path);
             snapshot::ExportOptions o;
             o.view = ViewOf(as_of, at);
             const std::shared_ptr<Store> keep = s.get();
  Store& store = *keep;
             Result<snapshot::ExportResult> r = Status::InvalidArgument("");
             {
               py::gil_scoped_release nogil;
               r = snapshot::ExportSnapshot(store, p, o);
             }
             return ToPython(io::ExportResultToJson(p, Check(std::move(r))));
           },
           py::arg("path"), py::arg("as_of") = py::none(), py::arg("at") = py::none(),
           "Writes a .amem snapshot file of the state (as of a revision or a time) (amem "
           "export); returns {path, revision, revision_ts, nodes, stubs, edges, kv, bytes}.")
      .def("stats", [](PyStore& s) {
             const std::shared_ptr<Store> keep = s.get();
  Store& store = *keep;
             Result<StoreStats> st = Status::InvalidArgument("");
             {
               py::gil_scoped_release nogil;
               st = store.Stats();
             }
             Json doc;  // as amem stats --json
             doc["store"] = store.path();
             doc.update(io::StatsToJson(Check(std::move(st))));
             return ToPython(doc);
           },
           "The store's counters (amem stats --json).")
      // reads from LMDB
      .def("get_node", [](PyStore& s, const std::string& node, std::optional<uint64_t> as_of,
                          std::optional<int64_t> at) {
             return ToPython(io::NodeToJson(Check(s.get()->ResolveNode(node, ViewOf(as_of, at)))));
           },
           py::arg("node"), py::arg("as_of") = py::none(), py::arg("at") = py::none(),
           "The node's record (amem get-node --json); NotFound when absent.")
      .def("out_edges", [](PyStore& s, const std::string& node, const std::string& rel,
                           std::optional<uint64_t> as_of, std::optional<int64_t> at) {
             return StoreEdges(s, node, rel, ViewOf(as_of, at), true);
           },
           py::arg("node"), py::arg("rel") = "", py::arg("as_of") = py::none(),
           py::arg("at") = py::none(), "Live edges leaving the node (amem out --json's rows).")
      .def("in_edges", [](PyStore& s, const std::string& node, const std::string& rel,
                          std::optional<uint64_t> as_of, std::optional<int64_t> at) {
             return StoreEdges(s, node, rel, ViewOf(as_of, at), false);
           },
           py::arg("node"), py::arg("rel") = "", py::arg("as_of") = py::none(),
           py::arg("at") = py::none(), "Live edges entering the node (amem in --json's rows).")
      .def("kv_get", [](PyStore& s, const std::string& scope, const std::string& ns,
                        const std::string& key, std::optional<uint64_t> as_of,
                        std::optional<int64_t> at) {
             return ToPython(io::KvToJson(Check(s.get()->GetKv(scope, ns, key, ViewOf(as_of, at)))));
           },
           py::arg("scope"), py::arg("ns"), py::arg("key"), py::arg("as_of") = py::none(),
           py::arg("at") = py::none(), "One policy entry (amem kv-get --json).")
      .def("kv_history", [](PyStore& s, const std::string& scope, const std::string& ns,
                            const std::string& key) {
             py::list out;
             for (const KvRecord& r : Check(s.get()->KvHistory(scope, ns, key))) {
               out.append(ToPython(io::KvToJson(r, true)));
             }
             return out;
           },
           py::arg("scope"), py::arg("ns"), py::arg("key"),
           "Every version of a policy entry, oldest first, deletes included.")
      .def("view", &OpenView, py::arg("as_of") = py::none(), py::arg("at") = py::none(),
           "The store's state (latest, or as of a revision or a time) as a View: the live "
           "base snapshot plus the changes since it.");

  m.def("replay_queries", [](py::object queries, py::object snapshot, py::object against) {
         std::string q = FsPath(queries), a = FsPath(snapshot);
         std::string b = against.is_none() ? std::string() : FsPath(against);
         Result<cli::Json> report = Status::InvalidArgument("");
         {
           py::gil_scoped_release nogil;
           report = cli::ReplayQueries(q, a, b);
         }
         return ToPython(Check(std::move(report)));
       },
       py::arg("queries"), py::arg("snapshot"), py::arg("against") = py::none(),
       "Asks recorded queries (a query log) again on a snapshot file and reports which "
       "answers changed (amem replay-queries --json): against the recorded digests, or "
       "against the answers on another snapshot file.");

  // The table itself, for the stub generator (python/gen_stubs.py).
  m.def("_query_table", [] {
    py::list out;
    for (const io::QueryDef& def : io::Queries()) {
      py::list params;
      for (const io::Param& p : def.params) {
        if (!Accepted(p)) continue;
        py::dict d;
        d["name"] = p.name;
        d["type"] = TypeName(p);
        d["required"] = p.required;
        d["positional"] = Positional(p);
        d["help"] = io::ParamHelp(p, io::FrontEnd::kCli);
        params.append(d);
      }
      py::dict q;
      q["method"] = PyName(def);
      q["command"] = def.command;
      q["tool"] = def.tool;
      q["writes"] = def.writes;
      q["doc"] = QueryDoc(def);
      q["params"] = params;
      out.append(q);
    }
    return out;
  });
}
