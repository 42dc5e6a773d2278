// Compiled, not run, by ctest (cases/CMakeLists.txt): an area's traits that say how many processes it runs
// compile; a declaration that leaves them out must not.
#include "area_traits.hpp"

#if UET_SNIPPET == 1
UET_AREA_TRAITS(.entity = true);
#else
UET_AREA_TRAITS(.processes = 2, .loss_every = 7);
#endif
