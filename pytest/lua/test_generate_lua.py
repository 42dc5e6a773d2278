"""codec/generate/generate_lua.py: what of spec/wire.yaml the Lua dissector cannot honour is refused at build
time with a message naming the node and field, and every UET field gets a ProtoField of its width."""
import pathlib
import sys

import pytest

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "codec" / "generate"))

from generate_lua import lua_value, node_entry, render  # noqa: E402
from wire_model import SpecError, load  # noqa: E402


@pytest.fixture
def model():
    return load(str(REPO / "spec" / "wire.yaml"))


def test_every_emitted_uet_field_is_declared_once(model):
    text = render(model)
    emitted = {f.name for n in model.nodes.values() if n.uet for f in n.fields if f.emit}
    declared = [line.split('"')[1] for line in text.splitlines() if line.startswith("new_field(")]
    assert sorted(declared) == sorted(emitted)
    assert 'new_field("uet.tss.tsc", "uint64", nil)' in text      # 48 bits
    assert 'new_field("uet.pds.ack_psn_offset", "int16", nil)' in text


def test_a_check_on_a_field_wider_than_32_bits_is_refused(model):
    # Lua 5.2 compares a UInt64 with a number as unequal, so such a check would always fire.
    node = model.nodes["uet.ses.std.buffer_offset"]
    node.fields[0].invalid = [0]
    with pytest.raises(SpecError, match="uet.ses.std.buffer_offset: uet.ses.buffer_offset is wider than 32 bits"):
        node_entry(node, set())


def test_a_select_parameter_inside_uet_is_refused(model):
    node = model.nodes["uet.pds.next"]
    node.next.cases[0].op, node.next.cases[0].param = "param", "udp_port"
    with pytest.raises(SpecError, match="uet.pds.next: select parameter udp_port"):
        node_entry(node, set())


def test_lua_literals():
    assert lua_value({"a": 1, "tss-layout": "x", 3: None, 4: [True, None]}) == '{a=1, ["tss-layout"]="x", [4]={true, nil}}'
    assert lua_value('say "hi"\n') == '"say \\"hi\\"\\n"'
