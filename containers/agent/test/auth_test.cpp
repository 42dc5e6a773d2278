// The run's secret and the challenge's answer (auth.hpp), and the protocol lines that carry them.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "uet/agent/auth.hpp"
#include "uet/agent/protocol.hpp"

namespace uet::agent {
namespace {

class SecretFile : public ::testing::Test {
 protected:
  void SetUp() override {
    char dir[] = "/tmp/uet-agent-auth-XXXXXX";
    ASSERT_NE(::mkdtemp(dir), nullptr);
    dir_ = dir;
  }
  void TearDown() override { std::system(("rm -rf " + dir_).c_str()); }
  std::string Write(const std::string& name, const std::string& text, mode_t mode) {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
  }
  std::string dir_;
};

TEST_F(SecretFile, APrivateFileGivesItsFirstLine) {
  std::string error;
  const auto secret = read_secret_file(Write("s", std::string(64, 'a') + "\nignored\n", 0600), &error);
  ASSERT_TRUE(secret) << error;
  EXPECT_EQ(*secret, std::string(64, 'a'));
}

TEST_F(SecretFile, AFileOthersMayReadIsRefused) {
  std::string error;
  EXPECT_FALSE(read_secret_file(Write("s", std::string(64, 'a'), 0640), &error));
  EXPECT_NE(error.find("readable or writable by others"), std::string::npos) << error;
}

TEST_F(SecretFile, ALinkIsRefused) {
  const std::string target = Write("s", std::string(64, 'a'), 0600);
  ASSERT_EQ(::symlink(target.c_str(), (dir_ + "/link").c_str()), 0);
  std::string error;
  EXPECT_FALSE(read_secret_file(dir_ + "/link", &error));
  EXPECT_NE(error.find("Too many levels of symbolic links"), std::string::npos) << error;
}

TEST_F(SecretFile, AShortSecretIsRefused) {
  std::string error;
  EXPECT_FALSE(read_secret_file(Write("s", "short\n", 0600), &error));
  EXPECT_NE(error.find("of 6 bytes (32..4096 wanted)"), std::string::npos) << error;
}

TEST(Challenge, TheAnswerDependsOnTheSecretAndTheNonce) {
  const std::string secret(64, 's');
  const std::string n1 = new_nonce(), n2 = new_nonce();
  EXPECT_EQ(n1.size(), 64u);
  EXPECT_NE(n1, n2);
  EXPECT_TRUE(same_mac(auth_mac(secret, n1), auth_mac(secret, n1)));
  EXPECT_FALSE(same_mac(auth_mac(secret, n1), auth_mac(secret, n2)));
  EXPECT_FALSE(same_mac(auth_mac(secret, n1), auth_mac(std::string(64, 't'), n1)));
  EXPECT_FALSE(same_mac(auth_mac(secret, n1), auth_mac(secret, n1).substr(1)));
}

TEST(Protocol, AuthLeaseAndInputsGoThereAndBack) {
  std::string error;
  const auto auth = parse_request(R"({"op":"auth","mac":"00ff"})", &error);
  ASSERT_TRUE(auth) << error;
  EXPECT_EQ(auth->op, Request::Op::auth);
  EXPECT_EQ(auth->mac, "00ff");
  const auto lease = parse_request(R"({"op":"lease"})", &error);
  ASSERT_TRUE(lease && lease->op == Request::Op::lease) << error;
  const auto spawn = parse_request(R"({"op":"spawn","argv":["/bin/true"],"inputs":{"3":"key","9":""}})", &error);
  ASSERT_TRUE(spawn) << error;
  EXPECT_EQ(spawn->spawn.inputs, (std::map<int, std::string>{{3, "key"}, {9, ""}}));
  const std::string line = request_line(*spawn);
  const auto back = parse_request(line.substr(0, line.size() - 1), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->spawn.inputs, spawn->spawn.inputs);
}

TEST(Protocol, InputsOutsideTheirDescriptorsOrSizeAreRefused) {
  std::string error;
  EXPECT_FALSE(parse_request(R"({"op":"spawn","argv":["x"],"inputs":{"2":"k"}})", &error));
  EXPECT_EQ(error, "input descriptor '2' is not 3..9");
  EXPECT_FALSE(parse_request(R"({"op":"spawn","argv":["x"],"inputs":{"10":"k"}})", &error));
  EXPECT_FALSE(parse_request(R"({"op":"spawn","argv":["x"],"inputs":{"3":")" + std::string(5000, 'k') + R"("}})",
                             &error));
  EXPECT_EQ(error, "input 3 is not a string of at most 4096 bytes");
  EXPECT_FALSE(parse_request(R"({"op":"auth"})", &error));
  EXPECT_EQ(error, "auth without a \"mac\" string");
}

TEST(Protocol, TheChallengeEventCarriesItsNonce) {
  Event e;
  e.kind = Event::Kind::challenge;
  e.nonce = "ab12";
  std::string error;
  const std::string line = event_line(e);
  const auto back = parse_event(line.substr(0, line.size() - 1), &error);
  ASSERT_TRUE(back) << error;
  EXPECT_EQ(back->kind, Event::Kind::challenge);
  EXPECT_EQ(back->nonce, "ab12");
}

}  // namespace
}  // namespace uet::agent
