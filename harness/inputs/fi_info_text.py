"""What fi_info prints, read back: pure functions over its text, so they are tested on captured output.

`fi_info -v` prints each fi_info structure as YAML-like blocks ("---", "fi_info:", nested "key: value"
lines indented by four, lists as "[ A, B ]"). It is not YAML a loader can be trusted with: a provider's
src_addr may print as anything (or as nothing), and a provider may write its own lines to stdout. So the
text is read line by line, by indentation, and a line that is not "key: value" is skipped.
"""
from __future__ import annotations

import dataclasses
import re

KEY_LINE = re.compile(r"^( *)([A-Za-z_][A-Za-z0-9_]*):(?: (.*))?$")
ENDPOINT_KINDS = {"FI_EP_RDM": "rdm", "FI_EP_DGRAM": "dgram", "FI_EP_MSG": "msg"}


def _value(text: str):
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        return [item.strip() for item in text[1:-1].split(",") if item.strip()]
    return text


def parse_verbose(text: str) -> list[dict]:
    """The fi_info structures of `fi_info -v`, each a nested dict of its printed keys (lists for "[ ... ]",
    strings otherwise; a key with nothing after its colon opens a nested block)."""
    docs: list[dict] = []
    stack: list[tuple[int, dict]] = []  # (indent of the key that opened the block, the block)
    for raw in text.splitlines():
        if raw.strip() == "---":
            stack = []
            continue
        m = KEY_LINE.match(raw)
        if not m:
            continue
        indent, key, value = len(m[1]), m[2], m[3]
        if indent == 0 and key == "fi_info" and value is None:
            docs.append({})
            stack = [(0, docs[-1])]
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        if not stack:
            continue  # outside any fi_info block: a provider's own chatter
        block = stack[-1][1]
        if value is None:
            block[key] = {}
            stack.append((indent, block[key]))
        else:
            block[key] = _value(value)
    return docs


def parse_list(text: str) -> list[str]:
    """The provider names of `fi_info -l` ("name:" lines, each followed by its indented version)."""
    return [m[2] for m in map(KEY_LINE.match, text.splitlines()) if m and not m[1] and m[3] is None]


@dataclasses.dataclass
class Endpoint:
    """What the fi_info structures of one endpoint type say, merged over its domains (interfaces)."""
    ep_type: str                      # FI_EP_RDM, ...
    caps: list[str] = dataclasses.field(default_factory=list)
    mr_mode: list[str] = dataclasses.field(default_factory=list)
    addr_formats: list[str] = dataclasses.field(default_factory=list)
    src_addrlens: list[int] = dataclasses.field(default_factory=list)
    domains: list[str] = dataclasses.field(default_factory=list)

    @property
    def kind(self) -> str:
        return ENDPOINT_KINDS.get(self.ep_type, self.ep_type)


@dataclasses.dataclass
class Offer:
    """What one provider offers, by endpoint type in the order fi_info first printed it."""
    provider: str
    endpoints: dict[str, Endpoint]    # by ep_type
    versions: list[str]               # fi_fabric_attr.prov_version
    others: list[str]                 # other providers that answered the same query (layered over it)


def _add(into: list, values) -> None:
    for v in values if isinstance(values, list) else [values]:
        if v not in into and v != "":
            into.append(v)


def summarize(docs: list[dict], provider: str) -> Offer:
    """The structures whose fi_fabric_attr.prov_name is exactly `provider`, merged by endpoint type.
    `fi_info -p udp` also answers for udp;ofi_rxd: those are named in `others`, not taken as udp's."""
    endpoints: dict[str, Endpoint] = {}
    versions: list[str] = []
    others: list[str] = []
    for doc in docs:
        fabric = doc.get("fi_fabric_attr") if isinstance(doc.get("fi_fabric_attr"), dict) else {}
        name = fabric.get("prov_name", "")
        if name != provider:
            _add(others, name)
            continue
        _add(versions, fabric.get("prov_version", ""))
        ep_attr = doc.get("fi_ep_attr") if isinstance(doc.get("fi_ep_attr"), dict) else {}
        ep_type = ep_attr.get("type") or "FI_EP_UNSPEC"
        ep = endpoints.setdefault(ep_type, Endpoint(ep_type))
        domain = doc.get("fi_domain_attr") if isinstance(doc.get("fi_domain_attr"), dict) else {}
        _add(ep.caps, doc.get("caps") if isinstance(doc.get("caps"), list) else [])
        _add(ep.mr_mode, domain.get("mr_mode") if isinstance(domain.get("mr_mode"), list) else [])
        _add(ep.addr_formats, doc.get("addr_format") or "")
        length = doc.get("src_addrlen")
        if isinstance(length, str) and length.isdigit():
            _add(ep.src_addrlens, int(length))
        _add(ep.domains, domain.get("name", "") if isinstance(domain.get("name"), str) else "")
    return Offer(provider, endpoints, versions, others)


def version_line(text: str) -> str:
    """libfabric's version from `fi_info --version` ("libfabric: 2.1.0"), or "" when it does not say."""
    for line in text.splitlines():
        if line.startswith("libfabric:"):
            return line.split(":", 1)[1].strip()
    return ""
