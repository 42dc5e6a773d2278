// The JSON record and the summary line of a decoded frame.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "graph_paths.hpp"
#include "uet/codec/record.hpp"

namespace uet::codec::test {
namespace {

Decoded decode_path(const char* name, std::vector<uint8_t>& storage) {
  for (const GraphPath& path : uet_paths_over_ethernet()) {
    if (path.name != name) continue;
    std::mt19937_64 rng(3);
    storage = build_frame(path, rng, 5).bytes;
    Decoded d;
    decode(storage.data(), static_cast<uint32_t>(storage.size()), static_cast<uint32_t>(storage.size()), wire::Node::eth,
           DecodeOptions{}, d);
    return d;
  }
  throw std::runtime_error(name);
}

TEST(Record, IsOneJsonObjectPerLineWithTheContractKeys) {
  std::vector<uint8_t> frame;
  const Decoded d = decode_path("pds_ack__pds_ack_ccx__ses_response", frame);
  RecordWriter w;
  w.write(d, {42, 1700000000, 7, false});
  const std::string text(w.text());
  ASSERT_EQ(text.back(), '\n');
  EXPECT_EQ(text.find('\n'), text.size() - 1);
  const auto doc = nlohmann::json::parse(text);
  EXPECT_EQ(doc["frame"], 42);
  EXPECT_EQ(doc["ts"], "1700000000.000007");
  EXPECT_EQ(doc["status"], "uet");
  EXPECT_EQ(doc["caplen"], frame.size());
  EXPECT_EQ(doc["layers"], nlohmann::json({"eth", "ip", "udp", "uet.pds.ack", "uet.pds.ack_ccx", "uet.ses.response"}));
  EXPECT_EQ(doc["fields"]["uet.pds.type"], 9);
  EXPECT_EQ(doc["fields"]["udp.dstport"], 4793);
  EXPECT_TRUE(doc["fields"]["eth.src"].is_string());
  EXPECT_EQ(doc["fields"]["uet.pds.ccx_state"].get<std::string>().size(), 32u);
  EXPECT_EQ(doc["uncertain"]["uet.pds.ccx_state"], "ccx-state-size");
  EXPECT_EQ(doc["uncertain"]["uet.pds.ccx_type"], "ack-ccx-type");
  EXPECT_TRUE(doc["diagnostics"].empty());
  EXPECT_EQ(doc["payload_len"], 0) << "a response without data ends its packet";
  EXPECT_FALSE(doc.contains("reassembled_from"));
}

TEST(Record, DiagnosticsCarryKindHeaderFieldAndMessage) {
  std::vector<uint8_t> frame;
  Decoded d = decode_path("pds_rud_rod_req__ses_std__ses_std_buffer_offset__ses_std_som", frame);
  // Cut inside the SES header.
  decode(frame.data(), static_cast<uint32_t>(frame.size() - 20), static_cast<uint32_t>(frame.size()), wire::Node::eth,
         DecodeOptions{}, d);
  RecordWriter w;
  w.write(d, {1, 0, 0, false});
  const auto doc = nlohmann::json::parse(w.text());
  EXPECT_EQ(doc["status"], "malformed");
  const auto& diag = doc["diagnostics"][0];
  EXPECT_EQ(diag["kind"], "truncated");
  EXPECT_EQ(diag["header"], "uet.ses.std");
  EXPECT_TRUE(diag["field"].is_null());
  EXPECT_NE(diag["message"].get<std::string>().find("uet.ses.std needs"), std::string::npos);
  EXPECT_FALSE(doc["fields"].contains("uet.ses.opcode"));
}

// A diagnostic that rests on a choice (job_id_zero) names it; the others carry no `choice`.
TEST(Record, ADiagnosticOfAChoiceNamesIt) {
  std::vector<uint8_t> frame;
  Decoded d = decode_path("pds_rud_rod_req__ses_small", frame);
  const size_t job_at = frame.size() - 5 - 20 + 5;  // the small header is the last 20 bytes before the payload
  put_bits(frame.data(), job_at, 0, 24, 0);
  decode(frame.data(), static_cast<uint32_t>(frame.size()), static_cast<uint32_t>(frame.size()), wire::Node::eth,
         DecodeOptions{}, d);
  RecordWriter w;
  w.write(d, {1, 0, 0, false});
  const auto doc = nlohmann::json::parse(w.text());
  ASSERT_EQ(doc["diagnostics"].size(), 1u) << w.text();
  const auto& diag = doc["diagnostics"][0];
  EXPECT_EQ(diag["kind"], "job_id_zero");
  EXPECT_EQ(diag["field"], "uet.ses.job_id");
  EXPECT_EQ(diag["choice"], "job-id-zero-invalid");
  EXPECT_NE(diag["message"].get<std::string>().find("job-id-zero-invalid"), std::string::npos);
}

TEST(Summary, NamesTheValuesOfTheFramesKeyFields) {
  std::vector<uint8_t> frame;
  const Decoded d = decode_path("pds_nack", frame);
  const std::string line = summary_line(d, {3, 0, 0, false});
  EXPECT_EQ(line.rfind("#3 ", 0), 0u) << line;
  EXPECT_NE(line.find("pds.nack"), std::string::npos) << line;
  EXPECT_NE(line.find("NACK"), std::string::npos) << line;
  EXPECT_NE(line.find("nack_code="), std::string::npos) << line;
}

}  // namespace
}  // namespace uet::codec::test
