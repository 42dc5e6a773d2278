// The case binaries' main: the area's traits when asked (--uet-traits), a peer role when started as one
// (peer.hpp), else the googletest cases with their verdicts recorded (verdict.cpp).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include <nlohmann/json.hpp>

#include "area_traits.hpp"
#include "conformance.hpp"
#include "control_link.hpp"
#include "peer.hpp"

int main(int argc, char** argv) {
  using namespace uet::cases;
  if (argc == 2 && std::strcmp(argv[1], "--uet-traits") == 0) {
    const nlohmann::json traits = {{"processes", kAreaTraits.processes}, {"entity", kAreaTraits.entity},
                                   {"loss_every", kAreaTraits.loss_every}, {"weight", kAreaTraits.weight},
                                   {"profile_pairs", kAreaTraits.profile_pairs}};
    std::printf("%s\n", traits.dump().c_str());
    return 0;
  }
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], kPeerRoleFlag, sizeof kPeerRoleFlag - 1) != 0) continue;
    const std::string role = argv[i] + sizeof kPeerRoleFlag - 1;
    const PeerRole body = find_peer_role(role);
    if (!body) {
      std::fprintf(stderr, "uet cases peer: no role '%s'\n", role.c_str());
      return 2;
    }
    act_as_target();
    int fd = kPeerChannelFd;
    for (int j = 1; j < argc; ++j) {
      if (std::strncmp(argv[j], kPeerConnectFlag, sizeof kPeerConnectFlag - 1) != 0) continue;
      std::string error;
      fd = control_connect(argv[j] + sizeof kPeerConnectFlag - 1, 10000, &error);
      if (fd < 0) {
        std::fprintf(stderr, "uet cases peer: %s\n", error.c_str());
        return 2;
      }
    }
    Channel channel(fd);
    return body(channel);
  }
  ::testing::InitGoogleTest(&argc, argv);
  GTEST_FLAG_SET(filter, without_left_out_instances(GTEST_FLAG_GET(filter)));
  install_verdict_recorder();
  return RUN_ALL_TESTS();
}
