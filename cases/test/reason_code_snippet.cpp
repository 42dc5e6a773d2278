// Compiled, not run, by ctest (cases/CMakeLists.txt): with a declared reason code this compiles; with an
// undeclared one, or a code written as a string, it must not (a skip the YAML does not declare is a build
// error, not a verdict found wrong later).
#include "not_applicable.hpp"

namespace uet::cases {

TEST(ReasonCodeSnippet, Skips) {
#if UET_SNIPPET == 1
  UET_NOT_APPLICABLE(reason::kNotADeclaredCode, "an undeclared code");
#elif UET_SNIPPET == 2
  UET_NOT_APPLICABLE("not-claimed-feature", "a code written as a string");
#else
  UET_NOT_APPLICABLE_IF(true, reason::kNotClaimedFeature, "a declared code");
#endif
}

}  // namespace uet::cases
