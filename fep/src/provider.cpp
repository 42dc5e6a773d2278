// The provider entry point: what libfabric finds with dlsym("fi_prov_ini") in libsoftuet-fi.so.
#include "softuet.hpp"

namespace softuet {

namespace {
// libfabric's destructor calls this before it dlcloses the provider: no FEP thread may run on.
void cleanup() { fep_threads_stop_all(); }
}  // namespace

struct fi_provider g_prov = {
    kProviderVersion,
    kBuiltApiVersion,
    {},
    "softuet",
    getinfo,
    fabric_open,
    cleanup,
};

}  // namespace softuet

extern "C" FI_EXT_INI { return &softuet::g_prov; }
