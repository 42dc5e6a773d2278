// What the harness must know of an area before it runs it, declared beside the area's cases (UET_AREA_TRAITS,
// once per binary) and printed by the binary (--uet-traits: one JSON line) for harness/run/run_cases.py's
// area_traits, its one reader. A binary that declares none does not link (common/sides/main.cpp prints it).
#pragma once

namespace uet::cases {

struct AreaTraits {
  // 1: one process exercising one provider, run in a cell of a manifest against itself only; 2: an initiator
  // and a target process, run in every cell. No default: each area says which.
  int processes = 0;
  // Its cases talk to the provider's privileged entity: a manifest asking for the suite's own
  // (privileged_entity.start: suite) has one started for the cell while they run.
  bool entity = false;
  // Its checks need a lossy wire: the drop period of the counted loss the harness applies, in cycles of
  // containers/impair.py LOSS_CYCLE datagrams; 0: no loss.
  int loss_every = 0;
  // Seconds a cell of softuet spends in the area on a quiet 2-core host (the default run, seed 38, on
  // 2026-11-29; an area under a second keeps this default): the estimate of what is left, and the cut of
  // shards a run balances without a recorded run (harness/shards/partition.py).
  double weight = 0.3;
  // The mutation run tries it across the pairs of different profile sets (its cases are about such pairs),
  // not in each softuet variant against itself.
  bool profile_pairs = false;
};

constexpr bool valid(const AreaTraits& t) {
  return (t.processes == 1 || t.processes == 2) && t.loss_every >= 0 && t.weight > 0;
}

// The binary's declaration: defined by UET_AREA_TRAITS in one of its sources.
extern const AreaTraits kAreaTraits;

}  // namespace uet::cases

// At namespace scope, outside uet::cases, e.g. UET_AREA_TRAITS(.processes = 2, .loss_every = 7) (designated
// initializers of AreaTraits, in its order).
#define UET_AREA_TRAITS(...)                                                     \
  constexpr ::uet::cases::AreaTraits uet::cases::kAreaTraits{__VA_ARGS__};       \
  static_assert(::uet::cases::valid(::uet::cases::kAreaTraits),                  \
                "UET_AREA_TRAITS: .processes must be 1 or 2, .loss_every >= 0, .weight > 0")
