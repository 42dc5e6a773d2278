// fi_atomic on RDM endpoints (§2.2.5.4.4; digest F.3 Table 2-26): UET_ATOMIC (bulk, non-fetching),
// UET_FETCHING_ATOMIC (one element; the old value returns in UET_RESPONSE_W_DATA), and compare-swap with
// the CAS extension (compare and swap operands, <= 16 bytes), except MSWAP, whose value and mask travel as
// payload (choice cas-for-mswap). fi_op and fi_datatype map to the UET values
// through the generated tables of spec/wire.yaml (uet/wire/libfabric_gen.hpp).
#include <rdma/fi_atomic.h>

#include <cstring>
#include <type_traits>

#include "softuet.hpp"
#include "uet/wire/libfabric_gen.hpp"
#include "uet/wire/wire_gen.hpp"

namespace softuet {

namespace wire = uet::wire;
namespace lf = uet::wire::libfabric;

namespace {

enum class Kind { plain, fetch, compare };

size_t dt_size(fi_datatype dt) {
  switch (dt) {
    case FI_INT8: case FI_UINT8: return 1;
    case FI_INT16: case FI_UINT16: return 2;
    case FI_INT32: case FI_UINT32: case FI_FLOAT: return 4;
    case FI_INT64: case FI_UINT64: case FI_DOUBLE: return 8;
    default: return 0;  // softuet computes on these datatypes only (fi_atomicvalid says so)
  }
}

bool is_compare_op(fi_op op) { return op >= FI_CSWAP && op <= FI_MSWAP; }
bool is_float(fi_datatype dt) { return dt == FI_FLOAT || dt == FI_DOUBLE; }

// Which (op, datatype) pairs softuet computes, per kind of call.
bool supported(fi_op op, fi_datatype dt, Kind kind) {
  if (!dt_size(dt) || !lf::amo_opcode_of(op) || !lf::amo_datatype_of(dt)) return false;
  if ((kind == Kind::compare) != is_compare_op(op)) return false;
  if (kind == Kind::plain && op == FI_ATOMIC_READ) return false;  // a read must fetch
  switch (op) {
    case FI_LOR: case FI_LAND: case FI_LXOR: case FI_BOR: case FI_BAND: case FI_BXOR: case FI_MSWAP:
      return !is_float(dt);
    default:
      return true;
  }
}

template <typename T>
T apply(fi_op op, T old, T operand, T compare) {
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case FI_LOR: return (old || operand) ? 1 : 0;
      case FI_LAND: return (old && operand) ? 1 : 0;
      case FI_LXOR: return ((old && !operand) || (!old && operand)) ? 1 : 0;
      case FI_BOR: return old | operand;
      case FI_BAND: return old & operand;
      case FI_BXOR: return old ^ operand;
      case FI_MSWAP: return (operand & compare) | (old & ~compare);
      default: break;
    }
  }
  switch (op) {
    case FI_MIN: return std::min(old, operand);
    case FI_MAX: return std::max(old, operand);
    case FI_SUM: return static_cast<T>(old + operand);
    case FI_DIFF: return static_cast<T>(old - operand);
    case FI_PROD: return static_cast<T>(old * operand);
    case FI_ATOMIC_WRITE: return operand;
    case FI_CSWAP: return compare == old ? operand : old;
    case FI_CSWAP_NE: return compare != old ? operand : old;
    case FI_CSWAP_LE: return compare <= old ? operand : old;
    case FI_CSWAP_LT: return compare < old ? operand : old;
    case FI_CSWAP_GE: return compare >= old ? operand : old;
    case FI_CSWAP_GT: return compare > old ? operand : old;
    default: return old;  // FI_ATOMIC_READ
  }
}

template <typename T>
void apply_at(fi_op op, uint8_t* target, const uint8_t* operand, const uint8_t* compare) {
  T old, x{}, c{};
  std::memcpy(&old, target, sizeof(T));
  if (operand) std::memcpy(&x, operand, sizeof(T));
  if (compare) std::memcpy(&c, compare, sizeof(T));
  const T now = apply<T>(op, old, x, c);
  std::memcpy(target, &now, sizeof(T));
}

void apply_element(fi_op op, fi_datatype dt, uint8_t* target, const uint8_t* operand, const uint8_t* compare) {
  switch (dt) {
    case FI_INT8: return apply_at<int8_t>(op, target, operand, compare);
    case FI_UINT8: return apply_at<uint8_t>(op, target, operand, compare);
    case FI_INT16: return apply_at<int16_t>(op, target, operand, compare);
    case FI_UINT16: return apply_at<uint16_t>(op, target, operand, compare);
    case FI_INT32: return apply_at<int32_t>(op, target, operand, compare);
    case FI_UINT32: return apply_at<uint32_t>(op, target, operand, compare);
    case FI_INT64: return apply_at<int64_t>(op, target, operand, compare);
    case FI_UINT64: return apply_at<uint64_t>(op, target, operand, compare);
    case FI_FLOAT: return apply_at<float>(op, target, operand, compare);
    case FI_DOUBLE: return apply_at<double>(op, target, operand, compare);
    default: return;
  }
}

int valid(fid_ep* f, fi_op op, fi_datatype dt, size_t* count, Kind kind) {
  if (!count) return -FI_EINVAL;
  Ep* ep = obj<Ep>(f);
  if (ep->type != FI_EP_RDM || !(ep->caps & FI_ATOMIC) || !supported(op, dt, kind)) return -FI_EOPNOTSUPP;
  if (kind != Kind::plain && !ep->domain->cfg.fetching_atomics) return -FI_EOPNOTSUPP;  // SOFTUET_ATOMICS
  // Bulk non-fetching atomics MUST be supported (spec 2.2.5.4.4-b); fetching ones are one element (-c).
  *count = kind == Kind::plain ? kMaxRdmMsg / dt_size(dt) : 1;
  return 0;
}

struct AtomicCall {
  const fi_ioc* iov;  // operands
  size_t count;
  const fi_ioc* compare;  // compare-swap: compare operands (count 1)
  fi_ioc* result;         // fetching: where the old value goes (count 1)
  fi_addr_t dest;
  uint64_t addr;
  uint64_t key;
  fi_datatype dt;
  fi_op op;
  void* context;
  uint64_t flags;
  bool inject;
  Kind kind;
};

ssize_t do_atomic(fid_ep* f, const AtomicCall& c) {
  Ep* ep = obj<Ep>(f);
  Domain* d = ep->domain;
  size_t max = 0;
  if (int ret = valid(f, c.op, c.dt, &max, c.kind)) return ret;
  if (c.count > kIovLimit || (c.count && !c.iov)) return -FI_EINVAL;
  const size_t size = dt_size(c.dt);
  size_t elements = 0;
  for (size_t i = 0; i < c.count; ++i) {
    if (c.iov[i].count && !c.iov[i].addr && c.op != FI_ATOMIC_READ) return -FI_EINVAL;
    elements += c.iov[i].count;
  }
  if (!elements || elements > max) return -FI_EINVAL;
  if (c.kind != Kind::plain && (!c.result || !c.result->addr || c.result->count < 1)) return -FI_EINVAL;
  if (c.kind == Kind::compare && (!c.compare || !c.compare->addr || c.compare->count < 1)) return -FI_EINVAL;
  if (c.inject && elements * size > kInjectSize) return -FI_EMSGSIZE;
  std::lock_guard lock(d->mu);
  if (!ep->enabled) return -FI_EOPBADSTATE;
  Dest to;
  if (!resolve_dest(ep, c.dest, &to)) return -FI_EINVAL;
  progress_deferring_output(d);  // the ACKs go with the next call

  AtomicExt ext;
  ext.opcode = *lf::amo_opcode_of(c.op);
  ext.datatype = *lf::amo_datatype_of(c.dt);
  if (fault(d, Fault::wrong_amo_opcode)) ++ext.opcode;
  if (fault(d, Fault::wrong_amo_datatype)) ++ext.datatype;
  OutRequest r;
  r.opcode = c.kind == Kind::plain ? wire::ses_request_opcode::UET_ATOMIC : wire::ses_request_opcode::UET_FETCHING_ATOMIC;
  r.match_bits = c.key;
  r.buffer_offset = c.addr;
  if (c.kind == Kind::compare && c.op == FI_MSWAP) {
    // The value then the mask, as payload (choice cas-for-mswap).
    const auto* mask = static_cast<const uint8_t*>(c.compare->addr);
    const auto* value = static_cast<const uint8_t*>(c.iov[0].addr);
    r.payload.assign(value, value + size);
    r.payload.insert(r.payload.end(), mask, mask + size);
  } else if (c.kind == Kind::compare) {
    // compare -> ses.compare_value, the operand -> ses.swap_value (digest F.3); no payload.
    const auto* cmp = static_cast<const uint8_t*>(c.compare->addr);
    const auto* swp = static_cast<const uint8_t*>(c.iov[0].addr);
    ext.compare.assign(cmp, cmp + size);
    ext.swap.assign(swp, swp + size);
  } else {
    for (size_t i = 0; i < c.count; ++i) {
      const auto* p = static_cast<const uint8_t*>(c.iov[i].addr);
      if (p) r.payload.insert(r.payload.end(), p, p + c.iov[i].count * size);
      else r.payload.resize(r.payload.size() + c.iov[i].count * size);  // FI_ATOMIC_READ needs no operand
    }
  }
  r.request_length = static_cast<uint32_t>(c.kind == Kind::compare && c.op != FI_MSWAP ? size : r.payload.size());
  r.atomic = std::move(ext);
  OpCompletion done;
  done.context = c.context;
  done.cq_flags = FI_ATOMIC | (c.kind == Kind::plain ? FI_WRITE : FI_READ);
  done.want_completion = !c.inject && (!ep->tx_selective || (c.flags & FI_COMPLETION));
  done.len = 0;
  if (c.kind != Kind::plain) done.result.push_back({c.result->addr, size});
  done.cntr = c.kind == Kind::plain ? ep->cntr_write : ep->cntr_read;
  std::vector<OutRequest> msgs;
  msgs.push_back(std::move(r));
  return transport_submit(ep, to, std::move(msgs), std::move(done));
}

ssize_t a_write(fid_ep* ep, const void* buf, size_t count, void*, fi_addr_t dest, uint64_t addr, uint64_t key,
                fi_datatype dt, fi_op op, void* ctx) {
  fi_ioc ioc{const_cast<void*>(buf), count};
  return do_atomic(ep, {&ioc, 1, nullptr, nullptr, dest, addr, key, dt, op, ctx, obj<Ep>(ep)->tx_op_flags, false, Kind::plain});
}
ssize_t a_writev(fid_ep* ep, const fi_ioc* iov, void**, size_t count, fi_addr_t dest, uint64_t addr, uint64_t key,
                 fi_datatype dt, fi_op op, void* ctx) {
  return do_atomic(ep, {iov, count, nullptr, nullptr, dest, addr, key, dt, op, ctx, obj<Ep>(ep)->tx_op_flags, false, Kind::plain});
}
ssize_t a_writemsg(fid_ep* ep, const fi_msg_atomic* msg, uint64_t flags) {
  if (!msg || msg->rma_iov_count != 1 || !msg->rma_iov) return -FI_EINVAL;
  return do_atomic(ep, {msg->msg_iov, msg->iov_count, nullptr, nullptr, msg->addr, msg->rma_iov[0].addr,
                        msg->rma_iov[0].key, msg->datatype, msg->op, msg->context, flags, false, Kind::plain});
}
ssize_t a_inject(fid_ep* ep, const void* buf, size_t count, fi_addr_t dest, uint64_t addr, uint64_t key,
                 fi_datatype dt, fi_op op) {
  fi_ioc ioc{const_cast<void*>(buf), count};
  return do_atomic(ep, {&ioc, 1, nullptr, nullptr, dest, addr, key, dt, op, nullptr, 0, true, Kind::plain});
}
ssize_t a_readwrite(fid_ep* ep, const void* buf, size_t count, void*, void* result, void*, fi_addr_t dest,
                    uint64_t addr, uint64_t key, fi_datatype dt, fi_op op, void* ctx) {
  fi_ioc ioc{const_cast<void*>(buf), count};
  fi_ioc res{result, 1};
  return do_atomic(ep, {&ioc, 1, nullptr, &res, dest, addr, key, dt, op, ctx, obj<Ep>(ep)->tx_op_flags, false, Kind::fetch});
}
ssize_t a_readwritev(fid_ep* ep, const fi_ioc* iov, void**, size_t count, fi_ioc* resultv, void**, size_t rcount,
                     fi_addr_t dest, uint64_t addr, uint64_t key, fi_datatype dt, fi_op op, void* ctx) {
  if (rcount < 1) return -FI_EINVAL;
  return do_atomic(ep, {iov, count, nullptr, resultv, dest, addr, key, dt, op, ctx, obj<Ep>(ep)->tx_op_flags, false, Kind::fetch});
}
ssize_t a_readwritemsg(fid_ep* ep, const fi_msg_atomic* msg, fi_ioc* resultv, void**, size_t rcount, uint64_t flags) {
  if (!msg || msg->rma_iov_count != 1 || !msg->rma_iov || rcount < 1) return -FI_EINVAL;
  return do_atomic(ep, {msg->msg_iov, msg->iov_count, nullptr, resultv, msg->addr, msg->rma_iov[0].addr,
                        msg->rma_iov[0].key, msg->datatype, msg->op, msg->context, flags, false, Kind::fetch});
}
ssize_t a_compwrite(fid_ep* ep, const void* buf, size_t count, void*, const void* compare, void*, void* result,
                    void*, fi_addr_t dest, uint64_t addr, uint64_t key, fi_datatype dt, fi_op op, void* ctx) {
  fi_ioc ioc{const_cast<void*>(buf), count};
  fi_ioc cmp{const_cast<void*>(compare), 1};
  fi_ioc res{result, 1};
  return do_atomic(ep, {&ioc, 1, &cmp, &res, dest, addr, key, dt, op, ctx, obj<Ep>(ep)->tx_op_flags, false, Kind::compare});
}
ssize_t a_compwritev(fid_ep* ep, const fi_ioc* iov, void**, size_t count, const fi_ioc* comparev, void**,
                     size_t ccount, fi_ioc* resultv, void**, size_t rcount, fi_addr_t dest, uint64_t addr,
                     uint64_t key, fi_datatype dt, fi_op op, void* ctx) {
  if (ccount < 1 || rcount < 1) return -FI_EINVAL;
  return do_atomic(ep, {iov, count, comparev, resultv, dest, addr, key, dt, op, ctx, obj<Ep>(ep)->tx_op_flags, false, Kind::compare});
}
ssize_t a_compwritemsg(fid_ep* ep, const fi_msg_atomic* msg, const fi_ioc* comparev, void**, size_t ccount,
                       fi_ioc* resultv, void**, size_t rcount, uint64_t flags) {
  if (!msg || msg->rma_iov_count != 1 || !msg->rma_iov || ccount < 1 || rcount < 1) return -FI_EINVAL;
  return do_atomic(ep, {msg->msg_iov, msg->iov_count, comparev, resultv, msg->addr, msg->rma_iov[0].addr,
                        msg->rma_iov[0].key, msg->datatype, msg->op, msg->context, flags, false, Kind::compare});
}
int a_writevalid(fid_ep* ep, fi_datatype dt, fi_op op, size_t* count) { return valid(ep, op, dt, count, Kind::plain); }
int a_readwritevalid(fid_ep* ep, fi_datatype dt, fi_op op, size_t* count) { return valid(ep, op, dt, count, Kind::fetch); }
int a_compwritevalid(fid_ep* ep, fi_datatype dt, fi_op op, size_t* count) { return valid(ep, op, dt, count, Kind::compare); }

}  // namespace

int query_atomic(fid_domain* domain, fi_datatype dt, fi_op op, fi_atomic_attr* attr, uint64_t flags) {
  if (!attr) return -FI_EINVAL;
  if (flags & ~uint64_t{FI_FETCH_ATOMIC | FI_COMPARE_ATOMIC}) return -FI_EBADFLAGS;
  const Kind kind = (flags & FI_COMPARE_ATOMIC) ? Kind::compare : (flags & FI_FETCH_ATOMIC) ? Kind::fetch : Kind::plain;
  if (!supported(op, dt, kind) || (kind != Kind::plain && !obj<Domain>(domain)->cfg.fetching_atomics)) return -FI_EOPNOTSUPP;
  attr->size = dt_size(dt);
  attr->count = kind == Kind::plain ? kMaxRdmMsg / attr->size : 1;
  return 0;
}

fi_ops_atomic g_atomic_ops = {sizeof(fi_ops_atomic), a_write,        a_writev,      a_writemsg,     a_inject,
                              a_readwrite,           a_readwritev,   a_readwritemsg, a_compwrite,   a_compwritev,
                              a_compwritemsg,        a_writevalid,   a_readwritevalid, a_compwritevalid};

Response atomic_target(Ep* ep, InRequest&& req) {
  Response rsp;
  if (!req.atomic) {
    rsp.rc = wire::ses_return_code::RC_UNSUPPORTED_OP;
    return rsp;
  }
  const auto op = lf::fi_op_of(req.atomic->opcode);
  const auto dt = lf::fi_datatype_of(req.atomic->datatype);
  const bool fetching = req.opcode == wire::ses_request_opcode::UET_FETCHING_ATOMIC;
  const Kind kind = !fetching ? Kind::plain : (op && is_compare_op(*op)) ? Kind::compare : Kind::fetch;
  if (!op || !dt || !supported(*op, *dt, kind)) {
    rsp.rc = !dt || !dt_size(*dt) ? wire::ses_return_code::RC_AMO_UNSUPPORTED_DT : wire::ses_return_code::RC_AMO_UNSUPPORTED_OP;
    return rsp;
  }
  const size_t size = dt_size(*dt);
  // MSWAP brings its value and mask as payload (choice cas-for-mswap); it changes one element.
  const bool mswap = kind == Kind::compare && *op == FI_MSWAP;
  if (mswap && req.payload.size() != 2 * size) {
    rsp.rc = wire::ses_return_code::RC_AMO_UNSUPPORTED_SIZE;
    return rsp;
  }
  const size_t len = kind == Kind::compare ? size : req.payload.size();
  if (!len || len % size || (fetching && len != size)) {
    rsp.rc = wire::ses_return_code::RC_AMO_UNSUPPORTED_SIZE;
    return rsp;
  }
  const uint64_t access = FI_REMOTE_WRITE | (fetching ? FI_REMOTE_READ : 0);
  Mr* mr = mr_for_access(ep, req.match_bits, req.buffer_offset, len, access, req.job_id, &rsp.rc);
  if (!mr) return rsp;
  if (req.buffer_offset % size) {
    rsp.rc = wire::ses_return_code::RC_AMO_UNALIGNED;
    return rsp;
  }
  const size_t n = req.buffer_offset > mr->len ? 0 : std::min(len, mr->len - req.buffer_offset) / size * size;
  auto* target = static_cast<uint8_t*>(const_cast<void*>(mr->buf)) + req.buffer_offset;
  if (fetching) rsp.data.assign(target, target + n);
  for (size_t i = 0; i < n; i += size) {
    const uint8_t* operand = mswap ? req.payload.data() : kind == Kind::compare ? req.atomic->swap.data() : req.payload.data() + i;
    const uint8_t* compare = mswap ? req.payload.data() + size : kind == Kind::compare ? req.atomic->compare.data() : nullptr;
    apply_element(*op, *dt, target + i, operand, compare);
  }
  rsp.with_data = fetching;
  rsp.modified_length = static_cast<uint32_t>(n);
  cntr_success(fetching ? ep->cntr_remote_read : ep->cntr_remote_write, n);
  cntr_success(mr->cntr, n);
  return rsp;
}

}  // namespace softuet
