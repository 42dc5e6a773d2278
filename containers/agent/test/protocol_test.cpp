#include "uet/agent/protocol.hpp"

#include <gtest/gtest.h>

namespace uet::agent {
namespace {

TEST(AgentProtocol, SpawnRequestRoundTrips) {
  Request r;
  r.op = Request::Op::spawn;
  r.spawn.argv = {"/bin/echo", "a b", "ü"};
  r.spawn.env = {{"PATH", "/usr/bin"}, {"X", ""}};
  r.spawn.cwd = "/tmp";
  r.spawn.output = "/tmp/log";
  std::string line = request_line(r), error;
  ASSERT_EQ(line.back(), '\n');
  line.pop_back();
  const auto back = parse_request(line, &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->op, Request::Op::spawn);
  EXPECT_EQ(back->spawn.argv, r.spawn.argv);
  EXPECT_EQ(back->spawn.env, r.spawn.env);
  EXPECT_EQ(back->spawn.cwd, "/tmp");
  EXPECT_EQ(back->spawn.output, "/tmp/log");
}

TEST(AgentProtocol, BadRequestsAreNamed) {
  const std::pair<const char*, const char*> cases[] = {
      {"", "not JSON"},
      {"[1]", "not a JSON object"},
      {R"({"op":3})", "no \"op\" string"},
      {R"({"op":"reboot"})", "unknown op 'reboot'"},
      {R"({"op":"spawn"})", "spawn without argv"},
      {R"({"op":"spawn","argv":[]})", "argv is empty"},
      {R"({"op":"spawn","argv":["x",1]})", "argv holds a value that is not a string"},
      {R"({"op":"spawn","argv":["x"],"env":{"A":1}})", "env value of A is not a string"},
      {R"({"op":"spawn","argv":["x"],"env":{"A=B":"1"}})", "env name 'A=B' is not a name"},
      {R"({"op":"spawn","argv":["x\u0000y"]})", "argv holds a NUL byte"},
      {R"({"op":"spawn","argv":["x"],"cwd":7})", "cwd is not a string"},
      {R"({"op":"kill","signal":0})", "signal is not a number 1..64"},
  };
  for (const auto& [line, want] : cases) {
    std::string error;
    EXPECT_FALSE(parse_request(line, &error)) << line;
    EXPECT_EQ(error, want) << line;
  }
}

TEST(AgentProtocol, EventsRoundTrip) {
  Event e;
  e.kind = Event::Kind::exited;
  e.status = 9;
  e.cpu_seconds = 1.5;
  std::string line = event_line(e), error;
  line.pop_back();
  const auto back = parse_event(line, &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->kind, Event::Kind::exited);
  EXPECT_EQ(back->status, 9);
  EXPECT_DOUBLE_EQ(back->cpu_seconds, 1.5);
}

// {"event":91} aborted the agent's client (a type error thrown from the JSON library), found by the fuzzer.
TEST(AgentProtocol, AnEventThatIsNotAStringIsRefused) {
  for (const char* line : {R"({"event":91})", R"({"event":null})", R"({"event":["started"]})", R"({"pid":1})"}) {
    std::string error;
    EXPECT_FALSE(parse_event(line, &error)) << line;
    EXPECT_EQ(error, "no \"event\" string") << line;
  }
}

TEST(AgentProtocol, LineBufferSplitsAndLimits) {
  LineBuffer b;
  ASSERT_TRUE(b.append("ab\ncd", 5));
  EXPECT_EQ(b.next(), "ab");
  EXPECT_FALSE(b.next());
  ASSERT_TRUE(b.append("\n", 1));
  EXPECT_EQ(b.next(), "cd");
  LineBuffer big;
  const std::string chunk(kMaxLine + 1, 'x');
  EXPECT_FALSE(big.append(chunk.data(), chunk.size()));
}

}  // namespace
}  // namespace uet::agent
