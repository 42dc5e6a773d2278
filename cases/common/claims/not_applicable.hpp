// Skipping a case whose statement does not apply, saying why: "not applicable [<code>]: <why>", where the
// code is one of spec/not-applicable-reasons.yaml (uet/cases/reason_codes_gen.hpp is generated from it), so
// that a reader learns whether anything that matters was left out.
#pragma once

#include <gtest/gtest.h>

#include "uet/cases/reason_codes_gen.hpp"

// `code` is a uet::cases::reason constant (reason::kNotClaimedFeature): a string or an undeclared name does
// not compile. The harness reads the code back from the skip message (verdict.cpp writes it apart).
#define UET_NOT_APPLICABLE(code, why) GTEST_SKIP() << "not applicable [" << ::uet::cases::reason::text(code) << "]: " << why
#define UET_NOT_APPLICABLE_IF(condition, code, why) \
  if (condition) UET_NOT_APPLICABLE(code, why << " (" #condition ")")
