#include "fixture.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>

#include "softuet/fi_addr_uet.h"

namespace softuet_test {

std::string fi_err(long ret) { return std::to_string(ret) + " (" + fi_strerror(static_cast<int>(-ret)) + ")"; }

fi_info* softuet_info(fi_ep_type type, uint64_t caps, const char* service, int* rc) {
  fi_info* hints = fi_allocinfo();
  hints->ep_attr->type = type;
  hints->caps = caps;
  hints->fabric_attr->prov_name = strdup("softuet");
  fi_info* info = nullptr;
  *rc = fi_getinfo(FI_VERSION(2, 0), nullptr, service, 0, hints, &info);
  fi_freeinfo(hints);
  return *rc ? nullptr : info;
}

size_t softuet_payload_mtu() {
  int rc = 0;
  fi_info* info = softuet_info(FI_EP_DGRAM, FI_MSG, nullptr, &rc);
  const size_t mtu = info ? info->ep_attr->max_msg_size : 0;
  fi_freeinfo(info);
  return mtu;
}

void SoftuetApi::SetUp() {
  fi_info* hints = fi_allocinfo();
  ASSERT_NE(hints, nullptr);
  hints->ep_attr->type = FI_EP_RDM;
  hints->caps = FI_MSG | FI_TAGGED | FI_RMA | FI_ATOMIC;
  hints->fabric_attr->prov_name = strdup("softuet");
  AdjustHints(hints);
  const int ret = fi_getinfo(FI_VERSION(2, 0), nullptr, nullptr, 0, hints, &info_);
  fi_freeinfo(hints);
  ASSERT_EQ(ret, 0) << "fi_getinfo: " << fi_err(ret) << "; run through ctest, which sets FI_PROVIDER_PATH";
  ASSERT_NE(info_, nullptr);

  int r = fi_fabric(info_->fabric_attr, &fabric_, nullptr);
  ASSERT_EQ(r, 0) << "fi_fabric: " << fi_err(r);
  r = fi_domain(fabric_, info_, &domain_, nullptr);
  ASSERT_EQ(r, 0) << "fi_domain: " << fi_err(r);
  fi_cq_attr cq_attr{};
  cq_attr.format = FI_CQ_FORMAT_DATA;
  cq_attr.wait_obj = FI_WAIT_UNSPEC;
  cq_attr.size = 1024;
  r = fi_cq_open(domain_, &cq_attr, &cq_, nullptr);
  ASSERT_EQ(r, 0) << "fi_cq_open: " << fi_err(r);
  fi_av_attr av_attr{};
  av_attr.type = FI_AV_TABLE;
  r = fi_av_open(domain_, &av_attr, &av_, nullptr);
  ASSERT_EQ(r, 0) << "fi_av_open: " << fi_err(r);

  for (int i : {kA, kB}) {
    r = fi_endpoint(domain_, info_, &ep_[i], nullptr);
    ASSERT_EQ(r, 0) << "fi_endpoint: " << fi_err(r);
    r = fi_ep_bind(ep_[i], &cq_->fid, FI_TRANSMIT | FI_RECV);
    ASSERT_EQ(r, 0) << "bind CQ: " << fi_err(r);
    r = fi_ep_bind(ep_[i], &av_->fid, 0);
    ASSERT_EQ(r, 0) << "bind AV: " << fi_err(r);
    std::vector<uint8_t> name(256);
    size_t len = name.size();
    r = fi_getname(&ep_[i]->fid, name.data(), &len);
    ASSERT_EQ(r, 0) << "fi_getname: " << fi_err(r);
    r = fi_av_insert(av_, name.data(), 1, &addr_[i], 0, nullptr);
    ASSERT_EQ(r, 1) << "fi_av_insert: " << fi_err(r);
  }
}

void SoftuetApi::TearDown() {
  // Endpoints first: a counter (and the CQ and AV) they are bound to cannot go before them.
  auto close = [](fid* f) {
    if (!f) return;
    EXPECT_EQ(fi_close(f), 0) << "fi_close of fid class " << f->fclass;
  };
  for (fid_ep*& ep : ep_) {
    close(ep ? &ep->fid : nullptr);
    ep = nullptr;
  }
  for (fid_cntr* c : cntrs_) close(&c->fid);
  cntrs_.clear();
  close(av_ ? &av_->fid : nullptr);
  close(cq_ ? &cq_->fid : nullptr);
  close(domain_ ? &domain_->fid : nullptr);
  close(fabric_ ? &fabric_->fid : nullptr);
  if (info_) fi_freeinfo(info_);
  if (fake_sock_ >= 0) ::close(fake_sock_);
  fake_sock_ = -1;
}

void SoftuetApi::SendOneRequest(uet::codec::Decoded* d) {
  const fi_addr_t peer = FakePeer(0);
  ASSERT_NO_FATAL_FAILURE(Enable());
  char msg[8] = "request";
  int ctx = 0;
  ASSERT_EQ(fi_send(ep_[kA], msg, sizeof msg, nullptr, peer, &ctx), 0);
  const std::vector<uint8_t> frame = Receive();
  ASSERT_FALSE(frame.empty()) << "no request reached the peer";
  uet::codec::decode(frame.data(), static_cast<uint32_t>(frame.size()), static_cast<uint32_t>(frame.size()),
                     uet::wire::Node::uet, uet::codec::DecodeOptions{}, *d);
}

fi_addr_t SoftuetApi::FakePeer(uint8_t fep_caps) {
  softuet_addr a{};
  size_t len = sizeof a;
  EXPECT_EQ(fi_getname(&ep_[kB]->fid, &a, &len), 0);
  const bool v6 = a.uet.flags & softuet::kAddrFlagIpv6;
  fake_sock_ = socket(v6 ? AF_INET6 : AF_INET, SOCK_DGRAM, 0);
  EXPECT_GE(fake_sock_, 0);
  sockaddr_storage ss{};
  socklen_t sl = 0;
  if (v6) {
    auto* s6 = reinterpret_cast<sockaddr_in6*>(&ss);
    s6->sin6_family = AF_INET6;
    std::memcpy(&s6->sin6_addr, a.uet.fa, 16);
    sl = sizeof *s6;
  } else {
    auto* s4 = reinterpret_cast<sockaddr_in*>(&ss);
    s4->sin_family = AF_INET;
    std::memcpy(&s4->sin_addr, a.uet.fa, 4);
    sl = sizeof *s4;
  }
  EXPECT_EQ(bind(fake_sock_, reinterpret_cast<sockaddr*>(&ss), sl), 0);
  EXPECT_EQ(getsockname(fake_sock_, reinterpret_cast<sockaddr*>(&ss), &sl), 0);
  a.udp_port = ntohs(v6 ? reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port : reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
  a.uet.fep_caps = fep_caps;
  fi_addr_t fa = FI_ADDR_NOTAVAIL;
  EXPECT_EQ(fi_av_insert(av_, &a, 1, &fa, 0, nullptr), 1);
  return fa;
}

std::vector<uint8_t> SoftuetApi::Receive() {
  std::vector<uint8_t> buf(16384);
  pollfd p{fake_sock_, POLLIN, 0};
  if (poll(&p, 1, 5000) != 1) return {};
  const ssize_t n = recv(fake_sock_, buf.data(), buf.size(), 0);
  buf.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return buf;
}

void SoftuetApi::Enable() {
  for (int i : {kA, kB}) {
    const int r = fi_enable(ep_[i]);
    ASSERT_EQ(r, 0) << "fi_enable: " << fi_err(r);
  }
}

fid_cntr* SoftuetApi::OpenCntr(fi_cntr_events events, fi_wait_obj wait_obj) {
  fi_cntr_attr attr{};
  attr.events = events;
  attr.wait_obj = wait_obj;
  fid_cntr* c = nullptr;
  const int r = fi_cntr_open(domain_, &attr, &c, nullptr);
  EXPECT_EQ(r, 0) << "fi_cntr_open: " << fi_err(r);
  if (r == 0) cntrs_.push_back(c);
  return r == 0 ? c : nullptr;
}

void SoftuetApi::WaitCompletions(const std::vector<void*>& want, std::map<void*, fi_cq_data_entry>* got,
                                 int timeout_ms) {
  using Clock = std::chrono::steady_clock;
  const auto deadline = Clock::now() + std::chrono::milliseconds(timeout_ms);
  auto missing = [&] {
    for (void* c : want)
      if (!got->count(c)) return true;
    return false;
  };
  while (missing()) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    ASSERT_GT(left, 0) << "timed out with " << got->size() << " of " << want.size() << " completions";
    fi_cq_data_entry e{};
    const ssize_t r = fi_cq_sread(cq_, &e, 1, nullptr, static_cast<int>(left));
    if (r == -FI_EAGAIN) continue;
    if (r == -FI_EAVAIL) {
      fi_cq_err_entry err{};
      fi_cq_readerr(cq_, &err, 0);
      FAIL() << "error completion: err " << err.err << " (" << fi_strerror(err.err) << "), prov_errno "
             << err.prov_errno << ", flags 0x" << std::hex << err.flags;
    }
    ASSERT_EQ(r, 1) << "fi_cq_sread: " << fi_err(r);
    EXPECT_FALSE(got->count(e.op_context)) << "two completions for one context";
    (*got)[e.op_context] = e;
  }
}

void SoftuetApi::SendAToB(const std::string& text) {
  std::vector<char> got(text.size() + 1, 0);
  int send_ctx = 0, recv_ctx = 0;
  ASSERT_EQ(fi_recv(ep_[kB], got.data(), got.size(), nullptr, FI_ADDR_UNSPEC, &recv_ctx), 0);
  ASSERT_EQ(fi_send(ep_[kA], text.c_str(), text.size() + 1, nullptr, addr_[kB], &send_ctx), 0);
  std::map<void*, fi_cq_data_entry> done;
  ASSERT_NO_FATAL_FAILURE(WaitCompletions({&send_ctx, &recv_ctx}, &done));
  EXPECT_EQ(std::string(got.data()), text);
}

fi_cq_err_entry SoftuetApi::Outcome(void* ctx) {
  fi_cq_err_entry e{};
  for (int i = 0; i < 1000; ++i) {
    fi_cq_data_entry c{};
    const ssize_t n = fi_cq_sread(cq_, &c, 1, nullptr, 10);
    if (n == 1) {
      EXPECT_EQ(c.op_context, ctx);
      return e;
    }
    if (n == -FI_EAVAIL) {
      EXPECT_EQ(fi_cq_readerr(cq_, &e, 0), 1);
      EXPECT_EQ(e.op_context, ctx);
      return e;
    }
  }
  ADD_FAILURE() << "no completion within 10 s";
  e.err = -1;
  return e;
}

}  // namespace softuet_test
