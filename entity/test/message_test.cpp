// Control API messages: what Writer builds parses back, and every rule of spec/control.yaml refuses
// a message that breaks it, naming the attribute.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>

#include "uet/entity/message.hpp"

namespace uet::entity {
namespace {

namespace c = control;
constexpr uint16_t kReq = c::kFlagRequest | c::kFlagAck;

Problem refused(const std::vector<uint8_t>& msg) {
  auto got = parse_request(msg);
  EXPECT_TRUE(std::holds_alternative<Problem>(got)) << "accepted";
  return std::holds_alternative<Problem>(got) ? std::get<Problem>(got) : Problem{};
}

std::vector<uint8_t> good_map() {
  return Writer::command(c::Cmd::JOB_MAP, kReq, 9).u32(c::attr::pid, 42).str(c::attr::service, "svc")
      .u32(c::attr::job_id, 0x123).u32(c::attr::job_id, 0x456).finish();
}

TEST(Request, WhatWriterBuildsParsesBack) {
  const auto msg = good_map();  // a request's values point into its message
  auto got = parse_request(msg);
  ASSERT_TRUE(std::holds_alternative<Request>(got)) << std::get<Problem>(got).what;
  const Request& r = std::get<Request>(got);
  EXPECT_EQ(r.cmd->cmd, c::Cmd::JOB_MAP);
  EXPECT_EQ(r.header.seq, 9u);
  EXPECT_EQ(r.attrs.num(c::attr::pid), 42u);
  EXPECT_EQ(r.attrs.str(c::attr::service), "svc");
  EXPECT_EQ(r.attrs.nums(c::attr::job_id), (std::vector<uint64_t>{0x123, 0x456}));
}

TEST(Request, NestedAttributesParseAndAreChecked) {
  Writer w = Writer::command(c::Cmd::ADDR_ALLOC, kReq, 1);
  w.str(c::attr::service, "svc");
  const size_t at = w.begin_nest(c::attr::address);
  w.u16(c::fep_address::pid_on_fep, 4095).u32(c::fep_address::initiator_id, 7);
  w.end_nest(at);
  const auto msg = w.finish();
  auto got = parse_request(msg);
  ASSERT_TRUE(std::holds_alternative<Request>(got)) << std::get<Problem>(got).what;
  const auto inner = std::get<Request>(got).attrs.nests(c::attr::address);
  ASSERT_EQ(inner.size(), 1u);
  EXPECT_EQ(inner[0].num(c::fep_address::pid_on_fep), 4095u);

  Writer bad = Writer::command(c::Cmd::ADDR_ALLOC, kReq, 1);
  bad.str(c::attr::service, "svc");
  const size_t at2 = bad.begin_nest(c::attr::address);
  bad.u16(c::fep_address::pid_on_fep, 4096);  // 12 bits
  bad.end_nest(at2);
  const Problem p = refused(bad.finish());
  EXPECT_EQ(p.err, ERANGE);
  EXPECT_NE(p.what.find("pid_on_fep"), std::string::npos) << p.what;
}

TEST(Request, HeadersAreChecked) {
  auto msg = good_map();
  EXPECT_NE(refused({msg.begin(), msg.begin() + 10}).what.find("shorter than its headers"), std::string::npos);
  auto longer = msg;
  longer.push_back(0);
  EXPECT_NE(refused(longer).what.find("netlink length"), std::string::npos);
  auto family = msg;
  family[4] = 0x21;
  EXPECT_NE(refused(family).what.find("not the UET family"), std::string::npos);
  auto cmd = msg;
  cmd[16] = 200;
  EXPECT_EQ(refused(cmd).err, EOPNOTSUPP);
  auto version = msg;
  version[17] = 9;
  EXPECT_EQ(refused(version).err, EPROTONOSUPPORT);
  auto flags = msg;
  flags[6] = 0;
  EXPECT_NE(refused(flags).what.find("request flag"), std::string::npos);
}

TEST(Request, AttributesAreChecked) {
  struct Bad {
    std::vector<uint8_t> msg;
    int err;
    const char* says;
  };
  const std::string long_name(65, 'x');
  const uint8_t no_nul[3] = {'a', 'b', 'c'};
  const std::vector<Bad> cases = {
      {Writer::command(c::Cmd::JOB_MAP, kReq, 1).u32(c::attr::pid, 1).str(c::attr::service, "s").finish(), EINVAL,
       "needs job_id"},
      {Writer::command(c::Cmd::JOB_GET, kReq, 1).str(c::attr::service, "s").u32(c::attr::pid, 5).finish(), EINVAL,
       "pid is not taken by JOB_GET"},
      {Writer::command(c::Cmd::JOB_GET, kReq, 1).str(c::attr::service, "s").str(c::attr::service, "t").finish(),
       EINVAL, "appears twice"},
      {Writer::command(c::Cmd::JOB_GET, kReq, 1).str(c::attr::service, long_name).finish(), ENAMETOOLONG,
       "65 bytes, at most 64"},
      {Writer::command(c::Cmd::JOB_GET, kReq, 1).bytes(c::attr::service, no_nul).finish(), EINVAL, "NUL-terminated"},
      {Writer::command(c::Cmd::JOB_CHECK, kReq, 1).str(c::attr::service, "s").u32(c::attr::job_id, 0).finish(), ERANGE,
       "job_id = 0"},
      {Writer::command(c::Cmd::JOB_CHECK, kReq, 1).str(c::attr::service, "s").u16(c::attr::job_id, 1).finish(), EINVAL,
       "must be 4 bytes"},
      {Writer::command(c::Cmd::JOB_GET, kReq, 1).str(c::attr::service, "s").u32(60, 1).finish(), EINVAL,
       "unknown attribute 60"},
  };
  for (const Bad& b : cases) {
    const Problem p = refused(b.msg);
    EXPECT_EQ(p.err, b.err) << b.says << ": " << p.what;
    EXPECT_NE(p.what.find(b.says), std::string::npos) << "expected '" << b.says << "' in: " << p.what;
  }
  // A nest not marked nested, and an attribute longer than the message.
  auto map = good_map();
  map[23] |= 0x80;  // the pid attribute's type (bytes 22-23, host order) gets the NESTED flag
  EXPECT_NE(refused(map).what.find("marked nested"), std::string::npos);
  auto cut = good_map();
  cut[20] = 200;  // the pid attribute says 200 bytes
  EXPECT_NE(refused(cut).what.find("remain"), std::string::npos);
}

TEST(Reply, ErrorRepliesCarryWhatWasWrong) {
  const Header h{36, c::kFamilyId, kReq, 77, 0};
  const Problem p{EACCES, "JobID 5 is not granted", 20, c::attr::job_id};
  const auto bytes = error_reply(h, EACCES, &p);
  auto got = parse_reply(bytes);
  ASSERT_TRUE(std::holds_alternative<Reply>(got)) << std::get<Problem>(got).what;
  const Reply& r = std::get<Reply>(got);
  EXPECT_TRUE(r.is_error);
  EXPECT_EQ(r.err, -EACCES);
  EXPECT_EQ(r.header.seq, 77u);
  EXPECT_EQ(r.what, "JobID 5 is not granted");
  EXPECT_EQ(r.attr, c::attr::job_id);
  const auto ack_bytes = error_reply(h, 0);
  auto ack = parse_reply(ack_bytes);
  ASSERT_TRUE(std::holds_alternative<Reply>(ack));
  EXPECT_EQ(std::get<Reply>(ack).err, 0);
}

}  // namespace
}  // namespace uet::entity
