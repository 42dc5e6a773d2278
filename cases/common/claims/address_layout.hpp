// Where a side's provider keeps the Table 2-10 fields in the bytes its fi_getname returns, as its manifest
// says (address_layout: a layout of spec/address-layouts.yaml or its own; resolved by
// harness/inputs/address_layout.py). The spec's figure is MISSING, so no offset is assumed: every case reads and
// writes an address through its side's layout, and a blob too short for it is a finding, not a misread.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace uet::cases {

enum class AddrField { version, flags, caps, fa, pid_on_fep, start_index, num_indices, initiator_id, udp_port };
const char* addr_field_name(AddrField f);

// An address as fields, whatever the layout: what the suite carries between two providers that lay out
// fi_getname differently (each side encodes it in its own layout before fi_av_insert).
struct AddressFields {
  std::map<AddrField, uint64_t> values;        // every integer field the source layout has
  std::optional<std::array<uint8_t, 16>> fa;   // the fabric address (IPv4 in the first 4 bytes)
};

struct AddressLayout {
  enum class Order { host, little, big };
  struct Place {
    size_t offset = 0, width = 0;
    Order order = Order::host;
  };
  std::string name;         // a layout of spec/address-layouts.yaml, or "declared" (the manifest's own)
  std::string declared_by;  // default, named, manifest
  std::string choice;       // the spec choice it rests on; empty when the manifest declares its own
  size_t size = 0;          // the fewest bytes an address in this layout has
  std::map<AddrField, Place> fields;
  // The places the choice gives (a declared layout that extends it gives the rest itself): a verdict rests on
  // the choice when it reads one of these fields (get, set, fa, read, write) or an address is too short for
  // the choice's size (misfit), not because the case merely has the layout at hand.
  std::set<AddrField> choice_fields;
  bool choice_size = false;

  // An integer field's value, or nullopt when the layout has no such field or the blob is too short for it.
  std::optional<uint64_t> get(const uint8_t* blob, size_t len, AddrField f) const;
  std::optional<uint64_t> get(const std::vector<uint8_t>& blob, AddrField f) const {
    return get(blob.data(), blob.size(), f);
  }
  // Writes `value` into an integer field; false as get gives nullopt.
  bool set(std::vector<uint8_t>& blob, AddrField f, uint64_t value) const;
  // The 16 bytes of the fabric address (IPv4 in the first 4), or nullopt.
  std::optional<std::array<uint8_t, 16>> fa(const uint8_t* blob, size_t len) const;
  std::optional<std::array<uint8_t, 16>> fa(const std::vector<uint8_t>& blob) const { return fa(blob.data(), blob.size()); }
  // Every field of this layout the blob holds.
  AddressFields read(const std::vector<uint8_t>& blob) const;
  // Writes every field of this layout from `from` into `blob` (grown to the layout's size; bytes the layout
  // does not place stay as they were: start from an address of this layout's provider); false with `why`
  // when `from` lacks a field this layout has or a value does not fit.
  bool write(std::vector<uint8_t>& blob, const AddressFields& from, std::string* why) const;
  // The same bytes in the same places (names aside).
  bool same_as(const AddressLayout& other) const;
  // Empty when a blob of `len` bytes holds the layout; else what does not fit, in words.
  std::string misfit(size_t len) const;
  // What a verdict that read an address rests on: "layout softuet (choice uet-address-layout)" or
  // "layout declared in the manifest".
  std::string basis() const;

 private:
  // The running case's verdict rests on the choice when `f` is one of its places.
  void reads(AddrField f) const;
};

// The fields as the target protocol carries them ({"pid_on_fep": 5, "fa": "<32 hex digits>", ...}), and back
// (throws on an unknown field or a malformed fa).
nlohmann::json address_fields_json(const AddressFields& a);
AddressFields address_fields_from_json(const nlohmann::json& j);

// From the resolved manifest's "address_layout" (throws nlohmann's errors on a malformed record).
AddressLayout address_layout_from_json(const nlohmann::json& doc);

}  // namespace uet::cases
