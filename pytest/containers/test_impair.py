"""The harness's counted loss (containers/impair.py) lets a sender that retransmits get through: no
retransmission schedule of a plausible length meets a drop at every try. With a pattern of period 7, a
go-back-N sender resending the same 42 datagrams from a dropped one did, until softuet's 10 s give-up
(Reliability.OrderedMessagesArriveInOrderUnderLoss on a busy host, seed 1704287051). Pure Python: no root; the
period is the one the built reliability binary declares (its area's traits)."""
import os
import pathlib

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]

from containers.impair import LOSS_CYCLE, counted_drops, counted_pattern, impair_script  # noqa: E402
from harness.run.run_cases import area_traits  # noqa: E402

EVERY = area_traits(pathlib.Path(os.environ.get("UET_BUILD", REPO / "build")))["reliability"]["loss_every"]
# The longest round of the reliability cases: 48 messages of 1500 bytes in flight, two packets each for a
# provider without GSO.
MAX_ROUND = 96
# softuet's tries before it may give up on a packet (fep/pds/pdc.hpp Config::max_retransmits): a lost
# datagram must get through well within them whatever the round it goes in.
SOFTUET_TRIES = 20


def dropped(count, every, offset, cycle):
    return count % cycle in counted_drops(every, offset, cycle)


def tries_until_through(start, round_len, every, offset, cycle, limit=200):
    """How many times a datagram resent in rounds of `round_len` datagrams (its first try at count `start`,
    nothing else on the link) goes before one is not dropped; `limit` when it never gets through."""
    for tries in range(1, limit):
        if not dropped(start + (tries - 1) * round_len, every, offset, cycle):
            return tries
    return limit


def go_back_n(messages, every, offset, cycle, max_rounds=100):
    """An ROD sender's go-back-N over the counted loss, one datagram a message: a round sends every message
    from the first the target has not got to the last; the target takes them in order and drops what comes
    after a gap. The number of rounds until all are through, or None after `max_rounds`."""
    count, delivered = 0, 0
    for rounds in range(1, max_rounds + 1):
        for m in range(delivered, messages):
            if not dropped(count, every, offset, cycle) and m == delivered:
                delivered += 1
            count += 1
        if delivered == messages:
            return rounds
    return None


def test_the_cycle_is_a_prime_longer_than_any_round_of_the_reliability_cases():
    assert LOSS_CYCLE > MAX_ROUND
    assert all(LOSS_CYCLE % d for d in range(2, LOSS_CYCLE))


@pytest.mark.parametrize("offset", range(EVERY))
def test_about_one_in_every_is_dropped(offset):
    drops = counted_drops(EVERY, offset)
    assert drops[0] == offset and all(b - a == EVERY for a, b in zip(drops, drops[1:]))
    assert abs(len(drops) / LOSS_CYCLE - 1 / EVERY) < 0.01


@pytest.mark.parametrize("offset", range(EVERY))
def test_no_round_of_the_cases_meets_a_drop_at_every_try(offset):
    for round_len in range(1, MAX_ROUND + 1):
        for start in counted_drops(EVERY, offset):
            tries = tries_until_through(start, round_len, EVERY, offset, LOSS_CYCLE)
            # The worst is a round of EVERY datagrams (or LOSS_CYCLE - EVERY), walking down the drops one by one.
            assert tries <= len(counted_drops(EVERY, 0)) + 1 < SOFTUET_TRIES, (round_len, start, tries)


def test_a_period_of_every_resonates_with_a_round_of_a_multiple_of_it():
    # What the failing run did: the cycle equal to the period, a round of 42 datagrams from a dropped one.
    assert tries_until_through(5, 42, EVERY, 5, EVERY) == 200
    assert go_back_n(48, EVERY, 6, cycle=EVERY) is None, "6 through, then rounds of 42 from a dropped one"


@pytest.mark.parametrize("offset", range(EVERY))
@pytest.mark.parametrize("messages", [1, 7, 8, 42, 48, 96])
def test_go_back_n_gets_every_message_through(offset, messages):
    assert go_back_n(messages, EVERY, offset, LOSS_CYCLE) is not None


def test_the_rule_drops_the_counts_it_names():
    script = impair_script("egress", "veth0", None, 4793, every=EVERY, offset=5)
    drops = ", ".join(str(k) for k in counted_drops(EVERY, 5))
    assert f"udp dport 4793 numgen inc mod {LOSS_CYCLE} {{ {drops} }} drop" in script
    text = counted_pattern(EVERY, 5)
    assert f"mod {LOSS_CYCLE} is 5, 12, ..., {counted_drops(EVERY, 5)[-1]}" in text
