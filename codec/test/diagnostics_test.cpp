// Malformed frames yield precise diagnostics: each header cut at every byte, every reserved field
// set, every value table given an unknown value, and the length checks.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "graph_paths.hpp"

namespace uet::codec::test {
namespace {

using wire::Field;
using wire::Header;
using wire::Node;

Decoded decode_bytes(const std::vector<uint8_t>& b, uint32_t caplen, uint32_t len, const DecodeOptions& options = {}) {
  Decoded d;
  decode(b.data(), caplen, len, Node::eth, options, d);
  return d;
}

std::string diags_text(const Decoded& d) {
  std::string s;
  for (unsigned i = 0; i < d.n_diags; ++i) {
    s += std::string(" ") + diag_kind_name(d.diags[i].kind) + "@" + wire::header_name(d.diags[i].header) + (d.diags[i].detail ? std::string("/") + d.diags[i].detail : "") + "@" + std::to_string(d.diags[i].offset);
    if (d.diags[i].field != kNoField) s += std::string(":") + wire::field_name(d.diags[i].field);
  }
  return s;
}

class EveryUetPathMalformed : public ::testing::TestWithParam<GraphPath> {};

// A frame cut anywhere inside a UET header: one `truncated` naming that header, none of its fields.
TEST_P(EveryUetPathMalformed, CutAtEveryByteReportsTheCutHeader) {
  std::mt19937_64 rng(7);
  const GraphPath& path = GetParam();
  const BuiltFrame built = build_frame(path, rng);
  const std::vector<size_t> at = node_offsets(path, built.values);
  size_t uet_start = 0;
  for (size_t i = 0; i < path.steps.size(); ++i)
    if (path.steps[i].node == Node::uet) uet_start = at[i];
  const size_t payload_start = at.back();
  for (size_t cut = uet_start; cut < payload_start; ++cut) {
    SCOPED_TRACE("cut at byte " + std::to_string(cut));
    // The header that holds byte `cut`, or "uet" when no UET byte is left.
    Header expected = Header::uet;
    for (size_t i = 0; i < path.steps.size(); ++i) {
      const wire::NodeInfo& n = wire::node_info(path.steps[i].node);
      if (cut > uet_start && !n.dispatch && at[i] <= cut && cut < at[i + 1]) expected = n.header;
    }
    // caplen < len: the capture cut the frame, so IP/UDP lengths are not themselves wrong.
    const Decoded d = decode_bytes(built.bytes, static_cast<uint32_t>(cut), static_cast<uint32_t>(built.bytes.size()), path.options());
    ASSERT_EQ(d.n_diags, 1) << diags_text(d);
    EXPECT_EQ(d.diags[0].kind, DiagKind::truncated);
    EXPECT_EQ(d.diags[0].header, expected) << wire::header_name(d.diags[0].header);
    EXPECT_EQ(d.status(), Status::malformed);
    EXPECT_FALSE(d.has_layer(expected));
    std::set<Field> of_cut_header;
    for (size_t i = 0; i < path.steps.size(); ++i) {
      const wire::NodeInfo& n = wire::node_info(path.steps[i].node);
      if (n.dispatch || n.header != expected) continue;
      for (unsigned k = 0; k < n.n_layouts; ++k) of_cut_header.insert(wire::kLayouts[n.first_layout + k].field);
    }
    for (unsigned i = 0; i < d.n_emitted; ++i)
      EXPECT_FALSE(of_cut_header.count(d.emitted[i].field))
          << wire::field_name(d.emitted[i].field) << " of a truncated header was emitted";
  }
  if (built.payload.empty()) return;  // the path ends the UET packet: it has no payload to cut
  // Cut inside the payload: nothing wrong, the payload is just shorter.
  const Decoded d = decode_bytes(built.bytes, static_cast<uint32_t>(payload_start + 1),
                                 static_cast<uint32_t>(built.bytes.size()), path.options());
  EXPECT_EQ(d.n_diags, 0) << diags_text(d);
  EXPECT_EQ(d.payload_len, 1u);
}

// Each reserved field on the path, set to 1: exactly one reserved_nonzero for its header.
TEST_P(EveryUetPathMalformed, EveryReservedFieldSetIsReported) {
  std::mt19937_64 rng(11);
  const GraphPath& path = GetParam();
  const BuiltFrame built = build_frame(path, rng);
  const std::vector<size_t> at = node_offsets(path, built.values);
  int checked = 0;
  for (size_t i = 0; i < path.steps.size(); ++i) {
    const wire::NodeInfo& n = wire::node_info(path.steps[i].node);
    for (unsigned k = 0; k < n.n_layouts; ++k) {
      const wire::FieldLayout& l = wire::kLayouts[n.first_layout + k];
      if (l.kind != wire::Kind::reserved) continue;
      if (l.when >= 0) {
        const wire::WhenInfo& w = wire::kWhens[l.when];
        const bool in = std::find(w.values, w.values + w.n_values, built.values.get(w.field)) != w.values + w.n_values;
        if (in == (w.op == wire::WhenOp::not_in)) continue;
      }
      std::vector<uint8_t> bytes = built.bytes;
      put_bits(bytes.data(), at[i] + l.at, l.bit + l.bits - 1, 1, 1);
      const Decoded d = decode_bytes(bytes, static_cast<uint32_t>(bytes.size()), static_cast<uint32_t>(bytes.size()), path.options());
      ASSERT_EQ(d.n_diags, 1) << n.id << " reserved@" << l.at << "." << int(l.bit) << diags_text(d);
      EXPECT_EQ(d.diags[0].kind, DiagKind::reserved_nonzero);
      EXPECT_EQ(d.diags[0].header, n.header);
      EXPECT_EQ(d.n_layers, expected_layers(path).size()) << "decoding goes on after a reserved bit";
      ++checked;
    }
  }
  RecordProperty("reserved_fields_checked", checked);
}

// Each enum field on the path given a value outside its table: an unknown_value naming the field.
TEST_P(EveryUetPathMalformed, EveryValueTableRejectsUnknownValues) {
  std::mt19937_64 rng(13);
  const GraphPath& path = GetParam();
  const BuiltFrame built = build_frame(path, rng);
  const std::vector<size_t> at = node_offsets(path, built.values);
  const std::vector<Field> emitted = expected_fields(path, built.values);
  for (size_t i = 0; i < path.steps.size(); ++i) {
    const wire::NodeInfo& n = wire::node_info(path.steps[i].node);
    for (unsigned k = 0; k < n.n_layouts; ++k) {
      const wire::FieldLayout& l = wire::kLayouts[n.first_layout + k];
      if (l.field == Field::COUNT || l.nbytes) continue;
      const wire::FieldInfo& info = wire::field_info(l.field);
      if (info.enumeration == wire::Enum::none || std::find(emitted.begin(), emitted.end(), l.field) == emitted.end())
        continue;
      if (std::strncmp(info.name, "uet", 3) != 0) continue;  // encapsulation tables only steer, they do not judge
      uint64_t bad = 0;
      const uint64_t top = l.bits >= 64 ? ~uint64_t{0} : (uint64_t{1} << l.bits) - 1;
      while (bad <= top && wire::enum_valid(info.enumeration, bad)) ++bad;
      if (bad > top) continue;  // every value of the field is defined
      std::vector<uint8_t> bytes = built.bytes;
      put_bits(bytes.data(), at[i] + l.at, l.bit, l.bits, bad);
      const Decoded d = decode_bytes(bytes, static_cast<uint32_t>(bytes.size()), static_cast<uint32_t>(bytes.size()), path.options());
      bool found = false;
      for (unsigned g = 0; g < d.n_diags; ++g)
        found |= d.diags[g].kind == DiagKind::unknown_value && d.diags[g].field == l.field;
      EXPECT_TRUE(found) << info.name << " = " << bad << " in " << n.id << ":" << diags_text(d);
      EXPECT_EQ(d.status(), Status::malformed);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Codec, EveryUetPathMalformed, ::testing::ValuesIn(uet_paths_over_ethernet()),
                         [](const auto& info) { return info.param.name; });

// A plain RUD request with a standard-header send: the frame the length checks below edit.
struct SendFrame {
  GraphPath path;
  BuiltFrame built;
  std::vector<size_t> at;
  size_t node_at(Node n) const {
    for (size_t i = 0; i < path.steps.size(); ++i)
      if (path.steps[i].node == n) return at[i];
    return 0;
  }
};

SendFrame send_frame(const char* name = "pds_rud_rod_req__ses_std__ses_std_buffer_offset__ses_std_som") {
  for (GraphPath& p : uet_paths_over_ethernet()) {
    if (p.name != name) continue;
    std::mt19937_64 rng(5);
    SendFrame f{p, build_frame(p, rng, 16), {}};
    f.at = node_offsets(p, f.built.values);
    return f;
  }
  throw std::runtime_error(std::string("no path ") + name);
}

bool has_diag(const Decoded& d, DiagKind kind, Field field) {
  for (unsigned i = 0; i < d.n_diags; ++i)
    if (d.diags[i].kind == kind && d.diags[i].field == field) return true;
  return false;
}

Decoded whole(const std::vector<uint8_t>& b) {
  return decode_bytes(b, static_cast<uint32_t>(b.size()), static_cast<uint32_t>(b.size()));
}

class LengthChecks : public ::testing::Test {
 protected:
  SendFrame f = send_frame();
  std::vector<uint8_t> bytes = f.built.bytes;
  size_t ip = f.node_at(Node::ip), udp = f.node_at(Node::udp), ses = f.node_at(Node::uet_ses_std);
};

TEST_F(LengthChecks, MessageIdZeroIsInvalid) {
  put_bits(bytes.data(), ses + 2, 0, 16, 0);
  EXPECT_TRUE(has_diag(whole(bytes), DiagKind::invalid_value, Field::uet_ses_message_id));
}

// choice job-id-zero-invalid: a request without a JobID is a diagnostic of its own kind naming the choice,
// in each request header; a response's JobID is not checked.
TEST(JobId, ZeroInARequestIsJobIdZeroNamingItsChoice) {
  const std::pair<const char*, Node> requests[] = {
      {"pds_rud_rod_req__ses_std__ses_std_buffer_offset__ses_std_som", Node::uet_ses_std},
      {"pds_rud_rod_req__ses_small", Node::uet_ses_small},
      {"pds_rud_rod_req__ses_medium", Node::uet_ses_medium}};
  for (const auto& [name, header] : requests) {
    SCOPED_TRACE(name);
    SendFrame f = send_frame(name);
    std::vector<uint8_t> bytes = f.built.bytes;
    ASSERT_EQ(whole(bytes).n_diags, 0);
    const size_t job_at = f.node_at(header) + 5;
    put_bits(bytes.data(), job_at, 0, 24, 0);
    const Decoded d = whole(bytes);
    ASSERT_EQ(d.n_diags, 1) << diags_text(d);
    EXPECT_EQ(d.diags[0].kind, DiagKind::job_id_zero);
    EXPECT_EQ(d.diags[0].field, Field::uet_ses_job_id);
    EXPECT_EQ(d.diags[0].header, wire::node_info(header).header);
    EXPECT_EQ(d.diags[0].offset, job_at);
    EXPECT_STREQ(wire::choice_info(d.diags[0].choice).id, "job-id-zero-invalid");
    EXPECT_EQ(d.status(), Status::malformed);
  }
  SendFrame f = send_frame("pds_ack__ses_response");
  std::vector<uint8_t> bytes = f.built.bytes;
  put_bits(bytes.data(), f.node_at(Node::uet_ses_response) + 5, 0, 24, 0);
  EXPECT_EQ(whole(bytes).n_diags, 0) << "a response with JobID 0 is not checked";
}

TEST_F(LengthChecks, IpHeaderLengthBelowFiveIsInvalidAndStops) {
  put_bits(bytes.data(), ip, 4, 4, 4);
  const Decoded d = whole(bytes);
  EXPECT_TRUE(has_diag(d, DiagKind::invalid_value, Field::ip_ihl)) << diags_text(d);
  EXPECT_FALSE(d.has_layer(Header::udp));
}

TEST_F(LengthChecks, IpTotalLengthSmallerThanItsHeaderStops) {
  put_bits(bytes.data(), ip + 2, 0, 16, 19);
  const Decoded d = whole(bytes);
  EXPECT_TRUE(has_diag(d, DiagKind::inconsistent_length, Field::ip_len)) << diags_text(d);
  EXPECT_FALSE(d.has_layer(Header::udp));
}

TEST_F(LengthChecks, IpTotalLengthBeyondTheFrameIsReportedWhenTheFrameIsWhole) {
  put_bits(bytes.data(), ip + 2, 0, 16, static_cast<uint64_t>(bytes.size()));
  EXPECT_TRUE(has_diag(whole(bytes), DiagKind::inconsistent_length, Field::ip_len));
  const Decoded cut = decode_bytes(bytes, static_cast<uint32_t>(bytes.size()), static_cast<uint32_t>(bytes.size() + 100));
  EXPECT_EQ(cut.n_diags, 0) << diags_text(cut);
}

TEST_F(LengthChecks, UdpLengthBelowEightStops) {
  put_bits(bytes.data(), udp + 4, 0, 16, 7);
  const Decoded d = whole(bytes);
  EXPECT_TRUE(has_diag(d, DiagKind::inconsistent_length, Field::udp_length)) << diags_text(d);
  EXPECT_FALSE(d.reached_uet);
}

TEST_F(LengthChecks, EthernetPaddingIsNotPayload) {
  bytes.resize(bytes.size() + 20, 0xEE);
  const Decoded d = whole(bytes);
  EXPECT_EQ(d.n_diags, 0) << diags_text(d);
  EXPECT_EQ(d.payload_len, 16u);
}

TEST_F(LengthChecks, EmptyUdpPayloadToTheUetPortIsTruncatedUet) {
  bytes.resize(udp + 8);
  put_bits(bytes.data(), ip + 2, 0, 16, bytes.size() - ip);
  put_bits(bytes.data(), udp + 4, 0, 16, 8);
  const Decoded d = whole(bytes);
  ASSERT_EQ(d.n_diags, 1) << diags_text(d);
  EXPECT_EQ(d.diags[0].kind, DiagKind::truncated);
  EXPECT_EQ(d.diags[0].header, Header::uet);
}

TEST(PayloadLength, SomZeroPayloadLengthMustMatchThePayload) {
  SendFrame f = send_frame("pds_rud_rod_req__ses_std__ses_std_buffer_offset__ses_std_cont");
  std::vector<uint8_t> bytes = f.built.bytes;
  EXPECT_EQ(whole(bytes).n_diags, 0);
  const size_t cont = f.node_at(Node::uet_ses_std_cont);
  put_bits(bytes.data(), cont + 14, 2, 14, 17);  // one byte more than the 16 that follow
  EXPECT_TRUE(has_diag(whole(bytes), DiagKind::inconsistent_length, Field::uet_ses_payload_length));
}

// payload_length 10 with 16 bytes after the header: the packet's payload is 10 bytes, 6 trail it.
TEST(PayloadLength, BytesBeyondPayloadLengthTrailThePacket) {
  SendFrame f = send_frame("pds_rud_rod_req__ses_std__ses_std_buffer_offset__ses_std_cont");
  std::vector<uint8_t> bytes = f.built.bytes;
  put_bits(bytes.data(), f.node_at(Node::uet_ses_std_cont) + 14, 2, 14, 10);
  const Decoded d = whole(bytes);
  ASSERT_EQ(d.n_diags, 1) << diags_text(d);
  EXPECT_EQ(d.diags[0].kind, DiagKind::trailing_bytes);
  EXPECT_EQ(d.diags[0].field, Field::uet_ses_payload_length);
  EXPECT_EQ(d.diags[0].offset, bytes.size() - 6);
  EXPECT_EQ(d.diags[0].value, 6u);
  EXPECT_EQ(d.payload_len, 10u);
}

// An ACK without SES (next_hdr 0) is a whole UET packet: what follows it within UDP is trailing, and
// the ACK has no payload; Ethernet padding beyond the UDP length is not.
TEST(PayloadNone, BytesAfterAnAckWithoutSesTrailThePacket) {
  SendFrame f = send_frame("pds_ack");
  const Decoded clean = whole(f.built.bytes);
  EXPECT_EQ(clean.n_diags, 0) << diags_text(clean);
  EXPECT_EQ(clean.payload_len, 0u);
  std::vector<uint8_t> padded = f.built.bytes;
  padded.resize(padded.size() + 9, 0xAA);
  EXPECT_EQ(whole(padded).n_diags, 0) << "padding beyond the IP and UDP lengths is not part of the datagram";
  std::vector<uint8_t> bytes = f.built.bytes;
  bytes.resize(bytes.size() + 9, 0xAA);
  const size_t ip = f.node_at(Node::ip), udp = f.node_at(Node::udp);
  put_bits(bytes.data(), ip + 2, 0, 16, bytes.size() - ip);
  put_bits(bytes.data(), udp + 4, 0, 16, bytes.size() - udp);
  const Decoded d = whole(bytes);
  ASSERT_EQ(d.n_diags, 1) << diags_text(d);
  EXPECT_EQ(d.diags[0].kind, DiagKind::trailing_bytes);
  EXPECT_EQ(d.diags[0].header, Header::uet_pds_ack);
  EXPECT_EQ(d.diags[0].offset, f.built.bytes.size());
  EXPECT_EQ(d.diags[0].value, 9u);
  EXPECT_EQ(d.payload_len, 0u);
}

// An IPv4 fragment (MF set, or a non-zero offset) is not decoded past IP: no UDP, no UET.
TEST(Fragments, AnIpv4FragmentStopsAfterIp) {
  SendFrame f = send_frame();
  const size_t ip = f.node_at(Node::ip);
  for (const auto& [flags, offset] : {std::pair{1, 0}, std::pair{0, 185}, std::pair{3, 1}}) {
    std::vector<uint8_t> bytes = f.built.bytes;
    put_bits(bytes.data(), ip + 6, 0, 3, flags);
    put_bits(bytes.data(), ip + 6, 3, 13, offset);
    const Decoded d = whole(bytes);
    SCOPED_TRACE("flags " + std::to_string(flags) + " offset " + std::to_string(offset));
    EXPECT_EQ(d.n_diags, 0) << diags_text(d);
    EXPECT_EQ(d.status(), Status::fragment);
    EXPECT_FALSE(d.reached_uet);
    EXPECT_EQ(d.n_layers, 2u);
    EXPECT_FALSE(d.get(Field::udp_dstport).has_value());
    EXPECT_EQ(d.payload_offset, f.node_at(Node::udp));
    EXPECT_EQ(d.payload_len, bytes.size() - f.node_at(Node::udp));
  }
}

TEST(PayloadLength, ResponseWithDataPayloadLengthMustMatchThePayload) {
  SendFrame f = send_frame("pds_ack__ses_response_data");
  std::vector<uint8_t> bytes = f.built.bytes;
  EXPECT_EQ(whole(bytes).n_diags, 0);
  put_bits(bytes.data(), f.node_at(Node::uet_ses_response_data) + 10, 2, 14, 17);
  EXPECT_TRUE(has_diag(whole(bytes), DiagKind::inconsistent_length, Field::uet_ses_rsp_payload_length));
}

TEST(UdpPort, AnotherPortIsNotUetUnlessConfigured) {
  SendFrame f = send_frame();
  std::vector<uint8_t> bytes = f.built.bytes;
  put_bits(bytes.data(), f.node_at(Node::udp) + 2, 0, 16, 5000);
  Decoded d;
  decode(bytes.data(), static_cast<uint32_t>(bytes.size()), static_cast<uint32_t>(bytes.size()), Node::eth,
         DecodeOptions{}, d);
  EXPECT_EQ(d.status(), Status::non_uet);
  decode(bytes.data(), static_cast<uint32_t>(bytes.size()), static_cast<uint32_t>(bytes.size()), Node::eth,
         DecodeOptions{5000}, d);
  EXPECT_EQ(d.status(), Status::uet);
}

}  // namespace
}  // namespace uet::codec::test
