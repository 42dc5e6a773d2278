// TSS sealing (uet/tss/seal.hpp). The header's layout is the codec's (spec/wire.yaml uet.tss nodes); the
// cryptography is choice tss-crypto's, whose IV and AAD are built here and nowhere else.
#include "uet/tss/seal.hpp"

#include <openssl/evp.h>

#include <memory>

#include "uet/codec/decoded.hpp"
#include "uet/codec/encoder.hpp"

namespace uet::tss {

namespace {

namespace w = uet::wire;
using w::Field;
using w::Node;

constexpr size_t kIcv = w::k_tss_icv_bytes;
constexpr size_t kIv = w::k_tss_iv_bytes;
constexpr Node kPlain[] = {Node::uet, Node::uet_tss, Node::uet_tss_tsc};
constexpr Node kWithSsi[] = {Node::uet, Node::uet_tss, Node::uet_tss_ssi, Node::uet_tss_tsc};

void put_be(uint8_t* p, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) p[i] = static_cast<uint8_t>(v >> (8 * (n - 1 - i)));
}

// Choice tss-crypto: SSI, else the source IPv4 address, else the SDI; then epoch and TSC as in the header.
std::array<uint8_t, kIv> iv_of(const Header& h, const Ips& ips) {
  std::array<uint8_t, kIv> iv{};
  if (h.ssi) put_be(iv.data(), *h.ssi, 4);
  else if (ips.src.size() == 4) std::copy(ips.src.begin(), ips.src.end(), iv.begin());
  else put_be(iv.data(), h.sdi, 4);
  put_be(iv.data() + 4, uint64_t{h.epoch} << 48 | (h.tsc & 0xFFFFFFFFFFFFull), 8);
  return iv;
}

// Choice tss-crypto: source IP, destination IP, TSS header.
std::vector<uint8_t> aad_of(const Ips& ips, std::span<const uint8_t> header) {
  std::vector<uint8_t> aad(ips.src.begin(), ips.src.end());
  aad.insert(aad.end(), ips.dst.begin(), ips.dst.end());
  aad.insert(aad.end(), header.begin(), header.end());
  return aad;
}

using Ctx = std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)>;

}  // namespace

std::vector<uint8_t> encode_header(const Header& h) {
  codec::FieldValues v;
  // The type is the TSS header's own field, which the edge into it (uet.first_type) only peeks at.
  v.set(Field::uet_tss_type, w::pds_type::UET_TSS).set(Field::uet_tss_sp, h.ssi.has_value());
  v.set(Field::uet_tss_sdi, h.sdi & 0xFFFFFF).set(Field::uet_tss_an, h.epoch & 1);
  v.set(Field::uet_tss_epoch, h.epoch).set(Field::uet_tss_tsc, h.tsc & 0xFFFFFFFFFFFFull);
  if (h.ssi) {
    v.set(Field::uet_tss_ssi, *h.ssi);
    return codec::encode_path(kWithSsi, v);
  }
  return codec::encode_path(kPlain, v);
}

std::optional<Header> decode_header(std::span<const uint8_t> udp_payload, size_t* header_len) {
  if (udp_payload.empty() || (udp_payload[0] >> 3) != w::pds_type::UET_TSS) return std::nullopt;
  codec::Decoded d;
  const auto n = static_cast<uint32_t>(udp_payload.size());
  codec::decode(udp_payload.data(), n, n, Node::uet, codec::DecodeOptions{}, d);
  const auto sdi = d.get(Field::uet_tss_sdi), epoch = d.get(Field::uet_tss_epoch), tsc = d.get(Field::uet_tss_tsc);
  if (!sdi || !epoch || !tsc || d.status() == codec::Status::malformed) return std::nullopt;
  Header h{static_cast<uint32_t>(*sdi), static_cast<uint16_t>(*epoch), *tsc, std::nullopt};
  if (auto ssi = d.get(Field::uet_tss_ssi)) h.ssi = static_cast<uint32_t>(*ssi);
  *header_len = d.payload_offset;
  return h;
}

std::vector<uint8_t> seal(const Header& h, std::span<const uint8_t> key, const Ips& ips, std::span<const uint8_t> plain) {
  std::vector<uint8_t> out = encode_header(h);
  const size_t hdr = out.size();
  const auto iv = iv_of(h, ips);
  const auto aad = aad_of(ips, out);
  out.resize(hdr + plain.size() + kIcv);
  Ctx ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  int len = 0;
  bool ok = ctx && key.size() == w::k_tss_key_bytes &&
            EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kIv, nullptr) == 1 &&
            EVP_EncryptInit_ex(ctx.get(), nullptr, nullptr, key.data(), iv.data()) == 1 &&
            EVP_EncryptUpdate(ctx.get(), nullptr, &len, aad.data(), static_cast<int>(aad.size())) == 1 &&
            EVP_EncryptUpdate(ctx.get(), out.data() + hdr, &len, plain.data(), static_cast<int>(plain.size())) == 1 &&
            EVP_EncryptFinal_ex(ctx.get(), out.data() + hdr + len, &len) == 1 &&
            EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kIcv, out.data() + hdr + plain.size()) == 1;
  if (!ok) out.clear();
  return out;
}

std::optional<std::vector<uint8_t>> open(std::span<const uint8_t> udp_payload, std::span<const uint8_t> key,
                                         const Ips& ips, Header* h, std::string* why) {
  auto fail = [why](const char* what) -> std::optional<std::vector<uint8_t>> {
    if (why) *why = what;
    return std::nullopt;
  };
  size_t hdr = 0;
  const auto got = decode_header(udp_payload, &hdr);
  if (!got) return fail("no TSS header");
  if (h) *h = *got;
  if (udp_payload.size() < hdr + kIcv) return fail("shorter than its TSS header and ICV");
  if (key.size() != w::k_tss_key_bytes) return fail("the key is not tss_key_bytes long");
  const size_t body = udp_payload.size() - hdr - kIcv;
  const auto iv = iv_of(*got, ips);
  const auto aad = aad_of(ips, udp_payload.first(hdr));
  std::vector<uint8_t> plain(body);
  std::vector<uint8_t> tag(udp_payload.begin() + static_cast<ptrdiff_t>(hdr + body), udp_payload.end());
  Ctx ctx(EVP_CIPHER_CTX_new(), EVP_CIPHER_CTX_free);
  int len = 0;
  const bool ok = ctx && EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr, nullptr, nullptr) == 1 &&
                  EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, kIv, nullptr) == 1 &&
                  EVP_DecryptInit_ex(ctx.get(), nullptr, nullptr, key.data(), iv.data()) == 1 &&
                  EVP_DecryptUpdate(ctx.get(), nullptr, &len, aad.data(), static_cast<int>(aad.size())) == 1 &&
                  EVP_DecryptUpdate(ctx.get(), plain.data(), &len, udp_payload.data() + hdr, static_cast<int>(body)) == 1 &&
                  EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kIcv, tag.data()) == 1;
  if (!ok || EVP_DecryptFinal_ex(ctx.get(), plain.data() + len, &len) != 1)
    return fail("the ICV does not verify under the key");
  return plain;
}

}  // namespace uet::tss
