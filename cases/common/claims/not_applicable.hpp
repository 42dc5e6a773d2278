// Skipping a case whose statement does not apply, saying why: "not applicable [<code>]: <why>", where the
// code is one of spec/not-applicable-reasons.yaml (uet/cases/reason_codes_gen.hpp is generated from it), so
// that a reader learns whether anything that matters was left out.
#pragma once

#include <gtest/gtest.h>

#include <sstream>
#include <string>

#include "uet/cases/reason_codes_gen.hpp"

namespace uet::cases {
// UET_NOT_APPLICABLE's skip message, "not applicable [<code>]: <why>"; the verdict takes the code and why from
// here, apart, not from the message (verdict.cpp).
std::string not_applicable_skip(const std::string& code, const std::string& why);
}  // namespace uet::cases

// `code` is a uet::cases::reason constant (reason::kNotClaimedFeature): a string or an undeclared name does
// not compile.
#define UET_NOT_APPLICABLE(code, why) GTEST_SKIP() << ::uet::cases::not_applicable_skip(::uet::cases::reason::text(code), [&] { \
    std::ostringstream uet_why_;                                                                                              \
    uet_why_ << why;                                                                                                          \
    return uet_why_.str();                                                                                                    \
  }())
#define UET_NOT_APPLICABLE_IF(condition, code, why) \
  if (condition) UET_NOT_APPLICABLE(code, why << " (" #condition ")")
