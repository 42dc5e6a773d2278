"""The dynamic loader's variables, which a manifest's environment may not set without --allow-loader-environment:
code they name (LD_PRELOAD, LD_AUDIT, a library path, a gconv module) runs in the case binary before its main,
where it can take the verdict key the harness hands the binary, and sign what it likes.

The list is glibc's own: the variables ld.so drops for a set-user-ID program (secure-execution mode, ld.so(8);
UNSECURE_ENVVARS in glibc's sysdeps/generic/unsecvars.h, with GLIBC_TUNABLES), as the ones that let the
environment change what a process loads or where it reads and writes before it runs.
"""
from __future__ import annotations

from harness.commands.trust_options import ALLOW_LOADER_ENVIRONMENT

LOADER_VARIABLES = frozenset((
    "GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LD_AUDIT", "LD_DEBUG", "LD_DEBUG_OUTPUT",
    "LD_DYNAMIC_WEAK", "LD_HWCAP_MASK", "LD_LIBRARY_PATH", "LD_ORIGIN_PATH", "LD_PRELOAD", "LD_PROFILE",
    "LD_SHOW_AUXV", "LD_USE_LOAD_BIAS", "LOCALDOMAIN", "LOCPATH", "MALLOC_TRACE", "NIS_PATH", "NLSPATH",
    "RESOLV_HOST_CONF", "RES_OPTIONS", "TMPDIR", "TZDIR",
))
# The maps of a manifest that become a process's environment: the case binary's, what it sets for the JobID
# methods, and the privileged entity's (and its impostor's), whose processes it starts.
ENVIRONMENTS = (("environment",), ("indirect_job_id_environment",), ("fallback_job_id_environment",),
                ("privileged_entity", "environment"), ("privileged_entity", "impostor", "environment"))


def settings(manifest, named: str | None = None) -> list[str]:
    """"REF: KEY: VARIABLE" for each loader variable a manifest (harness.inputs.manifest.Manifest) sets, REF its ref or
    `named`; one it unsets (null) is not set."""
    out = []
    for path in ENVIRONMENTS:
        env = manifest.data
        for key in path:
            env = env.get(key) if isinstance(env, dict) else None
        if isinstance(env, dict):
            out += [f"{named or manifest.ref}: {'.'.join(path)}: {name}" for name, value in env.items()
                    if name in LOADER_VARIABLES and value is not None]
    return out


def problems(manifests: list) -> list[str]:
    """The refusals for the manifests' loader settings, each naming the manifest, the key and why."""
    return [f"{s}: sets the dynamic loader's variable: code it names would run in the case binary before its main "
            f"and could take the verdict key; refused ({ALLOW_LOADER_ENVIRONMENT} runs it anyway, and the results say "
            "so)" for m in manifests for s in settings(m)]
