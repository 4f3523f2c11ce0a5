#include "store/store.h"

#include <iterator>
#include <utility>

#include "common/huge_pages.h"

namespace amem {

Batch::Batch() = default;
Batch::~Batch() = default;
Batch::Batch(Batch&&) noexcept = default;
Batch& Batch::operator=(Batch&&) noexcept = default;
Batch::Batch(const Batch&) = default;
Batch& Batch::operator=(const Batch&) = default;

void Batch::PutNode(NodeInput node) {
  ops_.push_back(Op{Op::Kind::kPutNode, std::move(node)});
}

void Batch::DeleteNode(std::string key) {
  NodeInput n;
  n.key = std::move(key);
  DeleteNode(std::move(n));
}

void Batch::PutEdge(EdgeInput edge) {
  ops_.push_back(Op{Op::Kind::kPutEdge, std::move(edge)});
}

void Batch::DeleteEdge(std::string src, std::string rel, std::string dst) {
  EdgeInput e;
  e.src = std::move(src);
  e.rel = std::move(rel);
  e.dst = std::move(dst);
  ops_.push_back(Op{Op::Kind::kDeleteEdge, std::move(e)});
}

void Batch::PutKv(KvInput kv) { ops_.push_back(Op{Op::Kind::kPutKv, std::move(kv)}); }

void Batch::DeleteKv(std::string scope, std::string ns, std::string key) {
  KvInput kv;
  kv.scope = std::move(scope);
  kv.ns = std::move(ns);
  kv.key = std::move(key);
  ops_.push_back(Op{Op::Kind::kDeleteKv, std::move(kv)});
}

void Batch::DefineRelation(std::string name) {
  EdgeInput e;
  e.rel = std::move(name);
  ops_.push_back(Op{Op::Kind::kDefineRelation, std::move(e)});
}

void Batch::DeleteNode(NodeInput node) {
  ops_.push_back(Op{Op::Kind::kDeleteNode, std::move(node)});
}

void Batch::DeleteEdge(EdgeInput edge) {
  ops_.push_back(Op{Op::Kind::kDeleteEdge, std::move(edge)});
}

void Batch::DeleteKv(KvInput kv) { ops_.push_back(Op{Op::Kind::kDeleteKv, std::move(kv)}); }

void Batch::DefineRelation(EdgeInput relation) {
  ops_.push_back(Op{Op::Kind::kDefineRelation, std::move(relation)});
}

size_t Batch::size() const { return ops_.size(); }
void Batch::Clear() { ops_.clear(); }
void Batch::Reserve(size_t n) {
  if (n > ops_.capacity()) ReserveHuge(&ops_, n);
}
void Batch::Append(Batch&& other) {
  ops_.insert(ops_.end(), std::make_move_iterator(other.ops_.begin()),
              std::make_move_iterator(other.ops_.end()));
  other.ops_.clear();
}
const std::vector<Batch::Op>& Batch::ops() const { return ops_; }

const char* ChangeKindName(Change::Kind kind) {
  switch (kind) {
    case Change::Kind::kPutNode: return "put_node";
    case Change::Kind::kDeleteNode: return "del_node";
    case Change::Kind::kPutEdge: return "put_edge";
    case Change::Kind::kDeleteEdge: return "del_edge";
    case Change::Kind::kPutKv: return "put_kv";
    case Change::Kind::kDeleteKv: return "del_kv";
    case Change::Kind::kDefineRelation: return "define_relation";
  }
  return "unknown";
}

}  // namespace amem
