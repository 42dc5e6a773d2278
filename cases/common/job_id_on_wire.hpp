// A check the authz and jobs cases share: the JobID a target sends with, seen on the wire.
#pragma once

#include <rdma/fi_endpoint.h>

#include <string>
#include <vector>

#include "capture.hpp"
#include "endpoint.hpp"
#include "target.hpp"
#include "two_sided.hpp"
#include "uet/wire/wire_gen.hpp"

namespace uet::cases {

// The target sends a message to `me` (an endpoint that takes `job`); the request captured toward this
// side carries `job` in ses.job_id, and the message arrives.
inline void ExpectTargetSendsJobId(Endpoint& me, Target& target, uint32_t job) {
  fi_addr_t to_me;
  target_inserts_me(target, me, &to_me);
  if (::testing::Test::IsSkipped()) return;
  ASSERT_NE(to_me, FI_ADDR_NOTAVAIL) << target.error();
  std::vector<char> buf(64);
  int ctx = 0;
  ASSERT_EQ(fi_recv(me.ep, buf.data(), buf.size(), nullptr, FI_ADDR_UNSPEC, &ctx), 0);
  Capture cap;
  ASSERT_TRUE(cap.start(Capture::Toward::initiator)) << cap.error();
  const RecvResult sent = target.send(to_me, 16, 0x4A);
  std::string why;
  const auto f = cap.expect({{uet::wire::Field::uet_ses_job_id, job}}, is_request, &why);
  EXPECT_TRUE(f) << "no SES request from the target carries ses.job_id " << job << ": " << why << " (send: state "
                 << sent.state << ", err " << sent.err << ") " << target.error();
  EXPECT_EQ(sent.state, RecvResult::completed) << "the target's send: err " << sent.err << ", prov_errno "
                                               << sent.prov_errno;
  EXPECT_EQ(me.wait(&ctx, kArrivalMs).state, Outcome::completed) << "the target's message did not arrive";
}

}  // namespace uet::cases
