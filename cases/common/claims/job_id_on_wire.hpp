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

// The target claims no indirect JobID method (job_id_methods), which every UET provider has (2.2.4.1-p): what
// its endpoint without an auth key sends to `me` is judged. JobID 0 is no JobID (choice job-id-zero-invalid); any
// other JobID is one nobody assigned it through its manifest. Either fails 2.2.4.4-a, blamed on the target.
inline void ExpectTargetSendsWithoutIndirectMethod(Endpoint& me, Target& target) {
  const fi_addr_t to_me = target.insert(me.name());
  ASSERT_NE(to_me, FI_ADDR_NOTAVAIL) << target.error();
  Capture cap;
  ASSERT_TRUE(cap.start(Capture::Toward::initiator)) << cap.error();
  // Whether the message arrives depends on this side's JobID, which the target has none to match: not checked.
  target.send(to_me, 16, 0x4A);
  observing(Side::target, "wire: the JobID of the target's request");
  const auto f = cap.find(Side::target, is_request);
  ASSERT_TRUE(f) << "no SES request from the target was captured: " << target.error();
  const uint64_t job = f->get(uet::wire::Field::uet_ses_job_id).value_or(0);
  evidence_frame(Side::target, summary(*f));
  if (job == 0) {
    ADD_FAILURE() << "the target's request carries ses.job_id 0, no JobID " << per_choice("job-id-zero-invalid")
                  << ": its manifest claims no JobID method (job_id_methods: []), and a UET provider puts the JobID "
                     "its indirect method assigns in ses.job_id (2.2.4.4-a, 2.2.4.1-p)";
  } else {
    ADD_FAILURE() << "the target's manifest claims no indirect JobID method (job_id_methods), which every UET "
                     "provider has (2.2.4.1-p); its request carries ses.job_id " << job
                  << ", which no manifest hook assigned (2.2.4.4-a)";
  }
}

}  // namespace uet::cases
