#!/usr/bin/env bash
# mint.sh -- (re)generate apnsctl's TEST-ONLY PKI and test fixtures.
#
# NOTHING produced here is issued by Apple or trusted by anything real. The
# "WWDR" CA below is a stand-in whose name says TEST and "not Apple"; the push
# identities only imitate the shape of Apple's push certificates (subject
# layout, environment/topic extensions) so that apnsctl can be tested offline.
#
# Requirements: bash, the OpenSSL 3 command line tool (with its legacy
# provider, for the Keychain-style RC2 bundle), python3 (standard library
# only) and coreutils.
#
# Rerunnable: every run deletes the generated directories and rebuilds the same
# layout. Keys, serial numbers and dates are new on every run, so anything that
# needs exact values (fingerprints, serials, dates) must read manifest.json.
#
# Usage:  ./mint.sh          (from anywhere; it works in its own directory)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"

PASS="apnsctl-test"                  # default password of every bundle
DAY=86400

die() { echo "mint.sh: error: $*" >&2; exit 1; }
step() { echo "==> $*"; }

# --------------------------------------------------------------------------
# Preflight
# --------------------------------------------------------------------------
command -v openssl >/dev/null || die "openssl not found"
command -v python3 >/dev/null || die "python3 not found"
OPENSSL_VERSION="$(openssl version)"
[[ "$OPENSSL_VERSION" == "OpenSSL 3."* ]] || die "need OpenSSL 3.x, found: $OPENSSL_VERSION"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/apnsctl-mint.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# Use our own, minimal OpenSSL configuration instead of the system one, so that
# a distribution config (security level, providers activated by default, ...)
# cannot change what gets minted or what the checks below observe.
export OPENSSL_CONF="$WORK/openssl.cnf"
cat >"$OPENSSL_CONF" <<EOF
# Minimal config used only while minting (written by mint.sh).

[ req ]
distinguished_name = req_dn
string_mask        = utf8only
utf8               = yes
prompt             = no

[ req_dn ]
# Unused: every request passes -subj.
CN = unused

[ ca ]
default_ca = wwdr_ca

# One section per test CA; select with "openssl ca -name ...".
[ wwdr_ca ]
database        = $WORK/wwdr/index.txt
serial          = $WORK/wwdr/serial
new_certs_dir   = $WORK/wwdr/new
certificate     = ca/wwdr-test-ca.pem
private_key     = ca/wwdr-test-ca.key
default_md      = sha256
policy          = policy_any
unique_subject  = no
email_in_dn     = no
copy_extensions = none

[ gateway_ca ]
database        = $WORK/gateway/index.txt
serial          = $WORK/gateway/serial
new_certs_dir   = $WORK/gateway/new
certificate     = ca/gateway-test-ca.pem
private_key     = ca/gateway-test-ca.key
default_md      = sha256
policy          = policy_any
unique_subject  = no
email_in_dn     = no
copy_extensions = none

# Accept any subject; -preserveDN keeps the requested order (UID, CN, OU, O, C).
[ policy_any ]
UID                    = optional
commonName             = optional
organizationalUnitName = optional
organizationName       = optional
countryName            = optional
EOF
for ca in wwdr gateway; do
    mkdir -p "$WORK/$ca/new"
    : >"$WORK/$ca/index.txt"
done
mkdir -p "$WORK/ext" "$WORK/csr"

# --------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------

# Time stamps (GeneralizedTime YYYYMMDDHHMMSSZ) relative to one "now" for the
# whole run. python3 instead of `date -d` so that BSD/macOS date works too.
NOW="$(python3 -c 'import time; print(int(time.time()))')"
ts() { python3 -c 'import sys, time; print(time.strftime("%Y%m%d%H%M%SZ", time.gmtime(int(sys.argv[1]))))' "$1"; }
TWENTY_YEARS=$((7305 * DAY))                    # 20 * 365 + 5 leap days
LONG_START="$(ts $((NOW - DAY)))"               # "long" validity: now - 1 day ...
LONG_END="$(ts $((NOW + TWENTY_YEARS)))"        # ... to now + 20 years
# The CAs are back-dated two years (so the expired identity's whole life lies
# inside them) and end one day after the longest leaf.
CA_START="$(ts $((NOW - 730 * DAY)))"
CA_END="$(ts $((NOW + TWENTY_YEARS + DAY)))"

# Random positive 8-byte serial (top bit clear, first byte >= 0x10 so that it
# always prints as 16 hex digits), written into the CA's serial file.
new_serial() {
    local hex first
    hex="$(openssl rand -hex 8)"
    first=$(( (0x${hex:0:2} & 0x7f) | 0x10 ))
    printf '%02X%s\n' "$first" "${hex:2}" | tr 'a-f' 'A-F' >"$WORK/$1/serial"
}

# RSA 2048 private key, PKCS#8 PEM, unencrypted.
rsa_key() { openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$1" 2>/dev/null; }

# DER of Apple's topics extension (1.2.840.113635.100.6.3.6) as hex:
#   SEQUENCE { UTF8String topic, SEQUENCE { UTF8String kind, ... }, ... }
# Arguments: "topic=kind[,kind...]" ...
topics_der_hex() {
    python3 - "$@" <<'PY'
import sys

def tlv(tag, body):
    n = len(body)
    if n < 0x80:
        length = bytes([n])
    else:
        raw = n.to_bytes((n.bit_length() + 7) // 8, "big")
        length = bytes([0x80 | len(raw)]) + raw
    return bytes([tag]) + length + body

UTF8STRING, SEQUENCE = 0x0C, 0x30
body = b""
for arg in sys.argv[1:]:
    topic, kinds = arg.split("=", 1)
    body += tlv(UTF8STRING, topic.encode())
    body += tlv(SEQUENCE, b"".join(tlv(UTF8STRING, k.encode()) for k in kinds.split(",")))
print(tlv(SEQUENCE, body).hex().upper())
PY
}

# Sign a CSR with one of the test CAs (or self-sign with "self").
#   sign CA_SECTION CSR OUT START END EXTFILE [selfsign-key]
sign() {
    local section="$1" csr="$2" out="$3" start="$4" end="$5" extfile="$6" selfkey="${7:-}"
    local dir="${section%_ca}"
    new_serial "$dir"
    local extra=()
    [[ -n "$selfkey" ]] && extra=(-selfsign -keyfile "$selfkey")
    openssl ca -batch -notext -preserveDN -name "$section" -md sha256 \
        -in "$csr" -out "$out" -startdate "$start" -enddate "$end" \
        -extfile "$extfile" -extensions ext ${extra[@]+"${extra[@]}"} 2>"$WORK/ca.log" \
        || { cat "$WORK/ca.log" >&2; die "signing $out failed"; }
}

# Make a CA: key, self-signed certificate.   make_ca NAME SUBJECT SECTION
make_ca() {
    local name="$1" subj="$2" section="$3"
    rsa_key "ca/$name.key"
    openssl req -new -key "ca/$name.key" -subj "$subj" -out "$WORK/csr/$name.csr"
    cat >"$WORK/ext/$name.cnf" <<EOF
[ ext ]
basicConstraints       = critical, CA:TRUE
keyUsage               = critical, keyCertSign, cRLSign
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid:always
EOF
    sign "$section" "$WORK/csr/$name.csr" "ca/$name.pem" "$CA_START" "$CA_END" \
        "$WORK/ext/$name.cnf" "ca/$name.key"
}

# Make a push identity signed by the WWDR test CA.
#   push_identity NAME BUNDLE CN_PREFIX START END [extension lines...]
# Every identity gets the common leaf extensions; extra lines (Apple markers,
# topics) are appended to the [ ext ] section.
push_identity() {
    local name="$1" bundle="$2" prefix="$3" start="$4" end="$5"
    shift 5
    local subj="/UID=$bundle/CN=$prefix: $bundle/OU=ABCDE12345/O=Example Corp/C=US"
    leaf "$name" "$subj" "$start" "$end" "extendedKeyUsage = clientAuth" "$@"
}

# Generic leaf signed by the WWDR test CA.   leaf NAME SUBJECT START END [ext lines...]
leaf() {
    local name="$1" subj="$2" start="$3" end="$4"
    shift 4
    rsa_key "identities/$name.key"
    openssl req -new -key "identities/$name.key" -subj "$subj" -out "$WORK/csr/$name.csr"
    {
        echo "[ ext ]"
        echo "basicConstraints       = critical, CA:FALSE"
        echo "keyUsage               = critical, digitalSignature"
        echo "subjectKeyIdentifier   = hash"
        echo "authorityKeyIdentifier = keyid"
        local line
        for line in "$@"; do echo "$line"; done
    } >"$WORK/ext/$name.cnf"
    sign wwdr_ca "$WORK/csr/$name.csr" "identities/$name.pem" "$start" "$end" "$WORK/ext/$name.cnf"
}

# PKCS#12 export with the default password; extra openssl options follow.
#   p12 OUT CERT KEY [options...]
p12() {
    local out="$1" cert="$2" key="$3"
    shift 3
    openssl pkcs12 -export -in "$cert" -inkey "$key" -passout "pass:$PASS" -out "p12/$out" "$@"
}

# Apple's markers: DER-encoded ASN.1 NULL.
EXT_DEV="1.2.840.113635.100.6.3.1 = DER:0500"    # development / sandbox
EXT_PROD="1.2.840.113635.100.6.3.2 = DER:0500"   # production
EXT_VOIP="1.2.840.113635.100.6.3.4 = DER:0500"   # VoIP Services
ext_topics() { echo "1.2.840.113635.100.6.3.6 = DER:$(topics_der_hex "$@")"; }

# --------------------------------------------------------------------------
# Start from a clean slate (only the generated paths; mint.sh/README.md stay).
# --------------------------------------------------------------------------
rm -rf ca identities gateway p12 pem bad keys manifest.json
mkdir -p ca identities gateway p12 pem bad keys

# --------------------------------------------------------------------------
# 1-2. Test certification authorities
# --------------------------------------------------------------------------
step "CAs"
make_ca wwdr-test-ca \
    "/CN=apnsctl TEST Worldwide Developer Relations CA/OU=apnsctl test PKI/O=apnsctl (not Apple)/C=US" \
    wwdr_ca
make_ca gateway-test-ca \
    "/CN=apnsctl TEST Gateway CA/O=apnsctl (not Apple)/C=US" \
    gateway_ca

# --------------------------------------------------------------------------
# 3. Push identities (RSA 2048, signed by the WWDR test CA)
# --------------------------------------------------------------------------
step "push identities"
push_identity sandbox com.example.app "Apple Development IOS Push Services" \
    "$LONG_START" "$LONG_END" "$EXT_DEV"

push_identity production com.example.app "Apple Production IOS Push Services" \
    "$LONG_START" "$LONG_END" "$EXT_PROD"

push_identity universal com.example.app "Apple Push Services" \
    "$LONG_START" "$LONG_END" "$EXT_DEV" "$EXT_PROD" \
    "$(ext_topics com.example.app=app com.example.app.voip=voip com.example.app.complication=complication)"

push_identity expired com.example.old "Apple Push Services" \
    "$(ts $((NOW - 400 * DAY)))" "$(ts $((NOW - 35 * DAY)))" "$EXT_DEV" "$EXT_PROD" \
    "$(ext_topics com.example.old=app)"

push_identity expiring com.example.soon "Apple Push Services" \
    "$LONG_START" "$(ts $((NOW + 20 * DAY)))" "$EXT_DEV" "$EXT_PROD" \
    "$(ext_topics com.example.soon=app)"

# No environment marker: the environment is unknown (CN prefix gives none).
push_identity voip com.example.app.voip "VoIP Services" \
    "$LONG_START" "$LONG_END" "$EXT_VOIP"

# No Apple extension at all: only the CN prefix says "development".
push_identity cn-only-sandbox com.example.legacy "Apple Development IOS Push Services" \
    "$LONG_START" "$LONG_END"

# Not a push certificate (a TLS server certificate from the same CA).
leaf other "/CN=not-a-push-cert.example.com/O=Example Corp" "$LONG_START" "$LONG_END" \
    "extendedKeyUsage = serverAuth" "subjectAltName = DNS:not-a-push-cert.example.com"

# --------------------------------------------------------------------------
# 4. Local gateway server identity (signed by the gateway test CA)
# --------------------------------------------------------------------------
step "gateway server identity"
rsa_key gateway/server.key
openssl req -new -key gateway/server.key -subj "/CN=localhost" -out "$WORK/csr/server.csr"
cat >"$WORK/ext/server.cnf" <<'EOF'
[ ext ]
basicConstraints       = critical, CA:FALSE
keyUsage               = critical, digitalSignature, keyEncipherment
extendedKeyUsage       = serverAuth
subjectAltName         = DNS:localhost, IP:127.0.0.1, IP:::1
subjectKeyIdentifier   = hash
authorityKeyIdentifier = keyid
EOF
sign gateway_ca "$WORK/csr/server.csr" gateway/server.pem "$LONG_START" "$LONG_END" "$WORK/ext/server.cnf"

# --------------------------------------------------------------------------
# 5. PKCS#12 bundles
# --------------------------------------------------------------------------
step "PKCS#12 bundles"
ID=identities

# What macOS Keychain Access exports: RC2-40 certs, 3DES key, SHA-1 MAC.
# Needs OpenSSL's legacy provider both to write and to read.
p12 keychain-legacy.p12 $ID/sandbox.pem $ID/sandbox.key -legacy \
    -certpbe PBE-SHA1-RC2-40 -keypbe PBE-SHA1-3DES -macalg sha1 \
    -name "Apple Development IOS Push Services: com.example.app"
if openssl pkcs12 -in p12/keychain-legacy.p12 -noout -passin "pass:$PASS" 2>/dev/null; then
    die "keychain-legacy.p12 was readable WITHOUT -legacy; it must need the legacy provider"
fi
openssl pkcs12 -in p12/keychain-legacy.p12 -noout -passin "pass:$PASS" -legacy 2>/dev/null \
    || die "keychain-legacy.p12 is not readable with -legacy"
if openssl pkcs12 -in p12/keychain-legacy.p12 -noout -passin pass:wrong-password -legacy 2>/dev/null; then
    die "keychain-legacy.p12 accepted a wrong password"
fi

# OpenSSL 3 defaults (PBES2/PBKDF2/AES-256-CBC, SHA-256 MAC) plus the CA as chain.
p12 openssl3-default.p12 $ID/production.pem $ID/production.key -certfile ca/wwdr-test-ca.pem
p12 3des-only.p12 $ID/universal.pem $ID/universal.key \
    -certpbe PBE-SHA1-3DES -keypbe PBE-SHA1-3DES -macalg sha1
openssl pkcs12 -export -in $ID/universal.pem -inkey $ID/universal.key -passout pass: \
    -out p12/empty-password.p12
p12 no-mac.p12 $ID/sandbox.pem $ID/sandbox.key -nomac
openssl pkcs12 -export -in $ID/production.pem -nokeys -passout "pass:$PASS" -out p12/cert-only.p12

# Key of "other" + certificate of "sandbox". openssl refuses a key that matches
# no certificate given with -in, and python's cryptography package refuses it
# too, so: export the key alone (-nocerts) and add the sandbox certificate as an
# extra certificate (-certfile). The result is a valid PKCS#12 holding one key
# bag and one certificate bag; as nothing matches, the two bags carry no
# localKeyID (and PKCS12_parse() returns the key, no leaf, and the certificate
# among the "CA" certificates).
# (-chain is never given; openssl 3.0 still warns "-chain option ignored".)
openssl pkcs12 -export -nocerts -inkey $ID/other.key -certfile $ID/sandbox.pem \
    -name "Apple Development IOS Push Services: com.example.app" \
    -caname "Apple Development IOS Push Services: com.example.app" \
    -passout "pass:$PASS" -out p12/mismatched-key.p12 2>/dev/null

p12 expired.p12 $ID/expired.pem $ID/expired.key
p12 expiring.p12 $ID/expiring.pem $ID/expiring.key
p12 voip.p12 $ID/voip.pem $ID/voip.key

# A valid no-MAC 3DES bundle whose PBE OID is then changed into an unknown one
# (pbeWithSHAAnd3-KeyTripleDES-CBC 1.2.840.113549.1.12.1.3 -> ...1.12.1.99).
openssl pkcs12 -export -in $ID/sandbox.pem -inkey $ID/sandbox.key -passout "pass:$PASS" \
    -nomac -certpbe PBE-SHA1-3DES -keypbe PBE-SHA1-3DES -out "$WORK/unknown-source.p12"
openssl pkcs12 -in "$WORK/unknown-source.p12" -noout -passin "pass:$PASS" 2>/dev/null \
    || die "source of unknown-encryption.p12 is not readable"
python3 - "$WORK/unknown-source.p12" p12/unknown-encryption.p12 <<'PY'
import sys
src, dst = sys.argv[1], sys.argv[2]
old = bytes.fromhex("060a2a864886f70d010c0103")   # OID 1.2.840.113549.1.12.1.3
new = bytes.fromhex("060a2a864886f70d010c0163")   # OID 1.2.840.113549.1.12.1.99
data = open(src, "rb").read()
count = data.count(old)
if count < 2:   # one for the certificate safe, one for the shrouded key bag
    sys.exit(f"expected the 3DES OID at least twice, found {count}")
open(dst, "wb").write(data.replace(old, new))
print(f"    patched {count} occurrences of the 3DES PBE OID")
PY
if openssl pkcs12 -in p12/unknown-encryption.p12 -noout -passin "pass:$PASS" 2>/dev/null; then
    die "unknown-encryption.p12 is still readable by openssl"
fi
if openssl pkcs12 -in p12/unknown-encryption.p12 -noout -passin "pass:$PASS" -legacy 2>/dev/null; then
    die "unknown-encryption.p12 is still readable by openssl -legacy"
fi

# The first 60 % of a good bundle.
size=$(wc -c <p12/openssl3-default.p12)
head -c $((size * 60 / 100)) p12/openssl3-default.p12 >p12/truncated.p12
if openssl pkcs12 -in p12/truncated.p12 -noout -passin "pass:$PASS" 2>/dev/null; then
    die "truncated.p12 is still readable by openssl"
fi

# --------------------------------------------------------------------------
# 6. PEM and DER files
# --------------------------------------------------------------------------
step "PEM and DER files"
openssl pkcs12 -in p12/keychain-legacy.p12 -legacy -nodes -passin "pass:$PASS" \
    -out pem/sandbox-bag-attributes.pem 2>/dev/null
[[ $(grep -c '^Bag Attributes' pem/sandbox-bag-attributes.pem) -ge 2 ]] \
    || die "sandbox-bag-attributes.pem lacks 'Bag Attributes' lines"
grep -q -- '-----BEGIN CERTIFICATE-----' pem/sandbox-bag-attributes.pem \
    && grep -q -- '-----BEGIN PRIVATE KEY-----' pem/sandbox-bag-attributes.pem \
    || die "sandbox-bag-attributes.pem must hold a certificate and an unencrypted key"

openssl x509 -in $ID/production.pem -out pem/production-cert.pem
openssl x509 -in $ID/universal.pem -outform DER -out pem/universal.cer
cp $ID/sandbox.key pem/key-only.pem
{
    openssl x509 -in $ID/production.pem
    openssl pkcs8 -topk8 -v2 aes-256-cbc -in $ID/production.key -passout "pass:$PASS"
} >pem/encrypted-key-bundle.pem
grep -q -- '-----BEGIN ENCRYPTED PRIVATE KEY-----' pem/encrypted-key-bundle.pem \
    || die "encrypted-key-bundle.pem has no ENCRYPTED PRIVATE KEY block"

# --------------------------------------------------------------------------
# 7. Bad inputs
# --------------------------------------------------------------------------
step "bad inputs"
: >bad/empty.p12
printf '%s\n' '-----BEGIN CERTIFICATE-----' 'not base64 !!!' '-----END CERTIFICATE-----' >bad/garbage.pem
cat >bad/notes.txt <<'EOF'
Notes for the push rollout
==========================
This is a plain text file, not a certificate or a key. apnsctl must say
that it is not a certificate instead of failing with a parser error.
EOF
# A real 1x1 grey baseline JPEG, encoded by hand (python3 stdlib only):
# SOI, JFIF APP0, one quantisation table, SOF0, two one-symbol Huffman tables
# (DC category 0, AC end-of-block), SOS, one 8x8 block, EOI.
python3 - bad/photo.jpg <<'PY'
import struct, sys

def segment(marker, payload):
    return bytes([0xFF, marker]) + struct.pack(">H", len(payload) + 2) + payload

jpeg = b"\xFF\xD8"                                                       # SOI
jpeg += segment(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")   # APP0 JFIF 1.01
jpeg += segment(0xDB, b"\x00" + bytes([1] * 64))                         # DQT table 0, all 1
jpeg += segment(0xC0, b"\x08" + struct.pack(">HH", 1, 1) + b"\x01" + b"\x01\x11\x00")  # SOF0 1x1, 1 comp
bits_one_code = b"\x01" + b"\x00" * 15                                   # one code of length 1
jpeg += segment(0xC4, b"\x00" + bits_one_code + b"\x00")                 # DHT DC0: symbol 0 (diff 0)
jpeg += segment(0xC4, b"\x10" + bits_one_code + b"\x00")                 # DHT AC0: symbol 0 (EOB)
jpeg += segment(0xDA, b"\x01" + b"\x01\x00" + b"\x00\x3F\x00")           # SOS comp 1, tables 0/0
# Pixel 128 -> level-shifted DC 0: DC code "0", AC EOB code "0", pad with 1s.
jpeg += b"\x3F"
jpeg += b"\xFF\xD9"                                                      # EOI
open(sys.argv[1], "wb").write(jpeg)
PY

# --------------------------------------------------------------------------
# 8. Token-authentication keys (.p8)
# --------------------------------------------------------------------------
step "token keys"
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out keys/AuthKey_ABC123DEFG.p8
openssl pkey -in keys/AuthKey_ABC123DEFG.p8 -pubout -out keys/AuthKey_ABC123DEFG.pub.pem
rsa_key keys/AuthKey_RSA0000001.p8
openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-384 -out keys/AuthKey_P384KEY001.p8

# --------------------------------------------------------------------------
# 9. manifest.json -- every value read back from the files with openssl
# --------------------------------------------------------------------------
step "manifest.json"
MINT_NOW="$NOW" MINT_PASS="$PASS" MINT_OPENSSL_VERSION="$OPENSSL_VERSION" \
    python3 - <<'PY'
import json, os, re, subprocess, sys, time

PASS = os.environ["MINT_PASS"]
ENV_OIDS = {"1.2.840.113635.100.6.3.1": "sandbox", "1.2.840.113635.100.6.3.2": "production"}
TOPICS_OID = "1.2.840.113635.100.6.3.6"
APPLE_OID_PREFIX = "1.2.840.113635.100.6.3."
CN_PREFIX_ENV = {   # fallback only when no environment extension is present
    "Apple Development IOS Push Services": ["sandbox"],
    "Apple Development Mac Push Services": ["sandbox"],
    "Apple Production IOS Push Services": ["production"],
    "Apple Production Mac Push Services": ["production"],
    "Apple Push Services": ["sandbox", "production"],
}


def openssl(*args, data=None, check=True):
    p = subprocess.run(["openssl", *args], input=data, capture_output=True)
    if check and p.returncode != 0:
        sys.exit(f"openssl {' '.join(args)} failed:\n{p.stderr.decode(errors='replace')}")
    return p


def pem_blocks(text):
    """(label, full block) for every PEM block; text outside is ignored."""
    return [(m.group(1), m.group(0) + "\n")
            for m in re.finditer(r"-----BEGIN ([A-Z0-9 ]+)-----.*?-----END \1-----", text, re.S)]


def der_items(buf):
    """Split a DER byte string into (tag, content) items."""
    out, i = [], 0
    while i < len(buf):
        tag, n = buf[i], buf[i + 1]
        i += 2
        if n & 0x80:
            k = n & 0x7F
            n = int.from_bytes(buf[i:i + k], "big")
            i += k
        out.append((tag, buf[i:i + n]))
        i += n
    return out


def decode_topics(der):
    (tag, body), = der_items(der)
    assert tag == 0x30, "topics extension is not a SEQUENCE"
    items = der_items(body)
    topics = []
    for (t_tag, topic), (k_tag, kinds) in zip(items[0::2], items[1::2]):
        assert t_tag == 0x0C and k_tag == 0x30, "unexpected topics layout"
        topics.append({"topic": topic.decode(),
                       "kinds": [k.decode() for tag, k in der_items(kinds) if tag == 0x0C]})
    return topics


def rfc3339(openssl_iso):   # "2026-11-22 03:10:00Z" -> "2026-11-22T03:10:00Z"
    return openssl_iso.replace(" ", "T")


def cert_info(pem):
    data = pem.encode()
    lines = openssl("x509", "-noout", "-serial", "-startdate", "-enddate",
                    "-dateopt", "iso_8601", data=data).stdout.decode().splitlines()
    fields = dict(l.split("=", 1) for l in lines)
    subject_lines = openssl("x509", "-noout", "-subject", "-nameopt",
                            "sep_multiline,space_eq,sname,utf8", data=data).stdout.decode().splitlines()[1:]
    rdn = [tuple(s.strip().split(" = ", 1)) for s in subject_lines]
    attrs = dict(rdn)
    info = {
        "subject": openssl("x509", "-noout", "-subject", "-nameopt", "RFC2253,utf8",
                           data=data).stdout.decode().strip().split("=", 1)[1],
        "issuer": openssl("x509", "-noout", "-issuer", "-nameopt", "RFC2253,utf8",
                          data=data).stdout.decode().strip().split("=", 1)[1],
        "serial": fields["serial"].upper(),
        "not_before": rfc3339(fields["notBefore"]),
        "not_after": rfc3339(fields["notAfter"]),
        "sha256": openssl("x509", "-noout", "-fingerprint", "-sha256", data=data)
                  .stdout.decode().strip().split("=", 1)[1],
        "sha1": openssl("x509", "-noout", "-fingerprint", "-sha1", data=data)
                .stdout.decode().strip().split("=", 1)[1],
    }
    # Apple extensions, found with asn1parse: OBJECT line, optional BOOLEAN
    # (critical), then the OCTET STRING holding the value.
    apple = {}
    lines = openssl("asn1parse", data=data).stdout.decode().splitlines()
    for i, line in enumerate(lines):
        m = re.search(r"OBJECT\s+:(1\.2\.840\.113635\.100\.6\.3\.\d+)\s*$", line)
        if not m:
            continue
        for nxt in lines[i + 1:i + 3]:
            v = re.search(r"OCTET STRING\s+\[HEX DUMP\]:([0-9A-F]+)", nxt)
            if v:
                apple[m.group(1)] = bytes.fromhex(v.group(1))
                break
        else:
            sys.exit(f"no value found for extension {m.group(1)}")
    for oid in ENV_OIDS:
        if oid in apple and apple[oid] != b"\x05\x00":
            sys.exit(f"extension {oid} is not an ASN.1 NULL")
    cn = attrs.get("CN", "")
    prefix = cn.split(":", 1)[0] if ":" in cn else None
    envs = [name for oid, name in ENV_OIDS.items() if oid in apple]
    if envs:
        source = "extension"
    elif not any(o.startswith(APPLE_OID_PREFIX) for o in apple) and prefix in CN_PREFIX_ENV:
        envs, source = CN_PREFIX_ENV[prefix], "cn"
    else:
        source = "none"
    info["environments"] = envs
    info["environment_source"] = source
    info["topics"] = decode_topics(apple[TOPICS_OID]) if TOPICS_OID in apple else []
    info["apple_extensions"] = sorted(apple)
    info["push_certificate"] = bool(apple) or prefix in CN_PREFIX_ENV or prefix == "VoIP Services"
    if "UID" in attrs:
        info["bundle_id"] = attrs["UID"]
        if "OU" in attrs:
            info["team_id"] = attrs["OU"]
    ca = openssl("x509", "-noout", "-ext", "basicConstraints", data=data).stdout.decode()
    info["is_ca"] = "CA:TRUE" in ca
    return info


def public_key_of_key(pem, password=None):
    args = ["pkey", "-pubout"]
    if password is not None:
        args += ["-passin", "pass:" + password]
    return openssl(*args, data=pem.encode()).stdout


def public_key_of_cert(pem):
    return openssl("x509", "-noout", "-pubkey", data=pem.encode()).stdout


def key_type(pem):
    text = openssl("pkey", "-noout", "-text", data=pem.encode()).stdout.decode()
    if "NIST CURVE: P-256" in text: return "ec-p256"
    if "NIST CURVE: P-384" in text: return "ec-p384"
    m = re.search(r"Private-Key: \((\d+) bit", text)
    if m and "modulus" in text: return "rsa" + m.group(1)
    return "unknown"


def describe_material(entry, certs, keys, password=None):
    """Fill certificate/key fields from PEM certificate and key blocks."""
    key_pem = keys[0] if keys else None
    leaf = None
    if key_pem and certs:
        pub = public_key_of_key(key_pem, password)
        leaf = next((c for c in certs if public_key_of_cert(c) == pub), None)
    infos = [(c, cert_info(c)) for c in certs]
    if leaf is None and infos:   # no key, or a key that matches nothing: first non-CA cert
        leaf = next((c for c, i in infos if not i["is_ca"]), infos[0][0])
    if leaf is not None:
        info = dict(next(i for c, i in infos if c == leaf))
        info.pop("is_ca")
        entry.update(info)
        entry["chain_count"] = len(certs) - 1
    entry["has_key"] = key_pem is not None
    if key_pem is not None and leaf is not None:
        entry["key_matches"] = public_key_of_key(key_pem, password) == public_key_of_cert(leaf)
    else:
        entry["key_matches"] = None
    if key_pem is not None:
        entry["key_type"] = key_type_of(key_pem, password)


def key_type_of(pem, password):
    if password is not None:
        pem = openssl("pkey", "-passin", "pass:" + password, data=pem.encode()).stdout.decode()
    return key_type(pem)


def p12_info(path, password, legacy=False):
    extra = ["-legacy"] if legacy else []
    pw = ["-passin", "pass:" + password]
    info = openssl("pkcs12", "-in", path, "-info", "-noout", *pw, *extra)
    text = info.stderr.decode() + info.stdout.decode()
    mac = re.search(r"^MAC: (\S+),", text, re.M)
    certs_enc = re.search(r"^PKCS7 Encrypted data: (.+?), Iteration", text, re.M)
    key_enc = re.search(r"^Shrouded Keybag: (.+?), Iteration", text, re.M)
    certs = openssl("pkcs12", "-in", path, "-nokeys", *pw, *extra).stdout.decode()
    keys = openssl("pkcs12", "-in", path, "-nocerts", "-nodes", *pw, *extra).stdout.decode()
    return ({"mac": mac.group(1) if mac else None,
             "cert_encryption": certs_enc.group(1) if certs_enc else None,
             "key_encryption": key_enc.group(1) if key_enc else None},
            [b for label, b in pem_blocks(certs) if label == "CERTIFICATE"],
            [b for label, b in pem_blocks(keys) if label.endswith("PRIVATE KEY")])


# ---- the catalogue: static facts; everything else is read from the files ----
FILES = [
    # path, format, static fields
    ("ca/wwdr-test-ca.pem", "pem", {"description": "stand-in WWDR CA (TEST, not Apple); issuer of every push identity"}),
    ("ca/gateway-test-ca.pem", "pem", {"description": "CA of the local gateway's TLS server certificate"}),
]
IDENTITY_NOTES = {
    "sandbox": "development (sandbox) push certificate, extension 1.2.840.113635.100.6.3.1",
    "production": "production push certificate, extension 1.2.840.113635.100.6.3.2",
    "universal": "universal Sandbox & Production certificate with a topics extension",
    "expired": "universal certificate that expired 35 days before minting",
    "expiring": "universal certificate that expires 20 days after minting",
    "voip": "VoIP Services certificate: no environment marker, environment unknown",
    "cn-only-sandbox": "no Apple extension; environment only from the CN prefix",
    "other": "not a push certificate (TLS server certificate)",
}
for name, note in IDENTITY_NOTES.items():
    FILES.append((f"identities/{name}.pem", "pem", {"identity": name, "description": note}))
    FILES.append((f"identities/{name}.key", "pem", {"identity": name,
                  "description": f"private key of {name} (PKCS#8, unencrypted)"}))
FILES += [
    ("gateway/server.pem", "pem", {"description": "local gateway TLS server certificate (localhost, 127.0.0.1, ::1)"}),
    ("gateway/server.key", "pem", {"description": "private key of gateway/server.pem"}),
    ("p12/keychain-legacy.p12", "p12", {"identity": "sandbox", "password": PASS, "legacy": True,
        "legacy_provider_needed": True, "wrong_password_is_error": True,
        "description": "as macOS Keychain exports: RC2-40 certificates, 3DES key, SHA-1 MAC"}),
    ("p12/openssl3-default.p12", "p12", {"identity": "production", "password": PASS,
        "description": "OpenSSL 3 defaults (PBES2/PBKDF2/AES-256-CBC, SHA-256 MAC) with the WWDR test CA as chain"}),
    ("p12/3des-only.p12", "p12", {"identity": "universal", "password": PASS,
        "description": "3DES for certificates and key, SHA-1 MAC"}),
    ("p12/empty-password.p12", "p12", {"identity": "universal", "password": "",
        "description": "empty password (openssl -passout pass:)"}),
    ("p12/no-mac.p12", "p12", {"identity": "sandbox", "password": PASS, "has_mac": False,
        "description": "no integrity MAC"}),
    ("p12/cert-only.p12", "p12", {"identity": "production", "password": PASS,
        "description": "certificate only, no private key"}),
    ("p12/mismatched-key.p12", "p12", {"identity": "sandbox", "password": PASS,
        "key_identity": "other",
        "description": "sandbox certificate with the private key of 'other' (key and certificate do not match)"}),
    ("p12/expired.p12", "p12", {"identity": "expired", "password": PASS, "description": "expired identity"}),
    ("p12/expiring.p12", "p12", {"identity": "expiring", "password": PASS, "description": "identity expiring in 20 days"}),
    ("p12/voip.p12", "p12", {"identity": "voip", "password": PASS, "description": "VoIP Services identity"}),
    ("p12/unknown-encryption.p12", "p12", {"identity": "sandbox", "password": PASS, "unreadable": True,
        "expected_error": "unknown_encryption",
        "description": "no-MAC 3DES bundle whose PBE OID was patched to unknown 1.2.840.113549.1.12.1.99"}),
    ("p12/truncated.p12", "p12", {"identity": "production", "password": PASS, "unreadable": True,
        "expected_error": "truncated", "description": "first 60% of openssl3-default.p12"}),
    ("pem/sandbox-bag-attributes.pem", "pem", {"identity": "sandbox", "has_bag_attributes": True,
        "description": "openssl pkcs12 -nodes output of keychain-legacy.p12: certificate and key with Bag Attributes"}),
    ("pem/production-cert.pem", "pem", {"identity": "production", "description": "production certificate only"}),
    ("pem/universal.cer", "der", {"identity": "universal", "description": "universal certificate in DER"}),
    ("pem/key-only.pem", "pem", {"identity": "sandbox", "expected_error": "no_certificate",
        "description": "a private key (sandbox's) and no certificate"}),
    ("pem/encrypted-key-bundle.pem", "pem", {"identity": "production", "password": PASS,
        "description": "production certificate + its key as ENCRYPTED PRIVATE KEY (PBES2, AES-256-CBC)"}),
    ("bad/empty.p12", "p12", {"unreadable": True, "expected_error": "empty_file", "description": "0 bytes"}),
    ("bad/photo.jpg", "other", {"unreadable": True, "expected_error": "not_a_certificate", "description": "a 1x1 JPEG image"}),
    ("bad/garbage.pem", "pem", {"unreadable": True, "expected_error": "corrupt",
        "description": "CERTIFICATE block whose body is not base64"}),
    ("bad/notes.txt", "other", {"unreadable": True, "expected_error": "not_a_certificate", "description": "plain text"}),
    ("keys/AuthKey_ABC123DEFG.p8", "p8", {"key_id": "ABC123DEFG", "token_key_valid": True,
        "description": "token-auth key as Apple issues it: P-256, PKCS#8 PEM"}),
    ("keys/AuthKey_ABC123DEFG.pub.pem", "pem", {"key_id": "ABC123DEFG",
        "description": "public key of AuthKey_ABC123DEFG.p8 (for verifying JWTs)"}),
    ("keys/AuthKey_RSA0000001.p8", "p8", {"key_id": "RSA0000001", "token_key_valid": False,
        "description": "wrong key type: RSA 2048"}),
    ("keys/AuthKey_P384KEY001.p8", "p8", {"key_id": "P384KEY001", "token_key_valid": False,
        "description": "wrong curve: P-384"}),
]

# What the identities must look like (checked against what was read back).
EXPECTED = {
    "sandbox": (["sandbox"], "extension", []),
    "production": (["production"], "extension", []),
    "universal": (["sandbox", "production"], "extension",
                  [{"topic": "com.example.app", "kinds": ["app"]},
                   {"topic": "com.example.app.voip", "kinds": ["voip"]},
                   {"topic": "com.example.app.complication", "kinds": ["complication"]}]),
    "expired": (["sandbox", "production"], "extension", [{"topic": "com.example.old", "kinds": ["app"]}]),
    "expiring": (["sandbox", "production"], "extension", [{"topic": "com.example.soon", "kinds": ["app"]}]),
    "voip": ([], "none", []),
    "cn-only-sandbox": (["sandbox"], "cn", []),
    "other": ([], "none", []),
}

entries = []
for path, fmt, static in FILES:
    entry = {"path": path, "format": fmt}
    entry.update({k: v for k, v in static.items() if k not in ("legacy", "unreadable")})
    if not static.get("unreadable"):
        password = static.get("password")
        if fmt == "p12":
            enc, certs, keys = p12_info(path, password, static.get("legacy", False))
            describe_material(entry, certs, keys)
            entry.update(enc)
        elif fmt == "der":
            pem = openssl("x509", "-inform", "DER", "-in", path).stdout.decode()
            describe_material(entry, [pem], [])
        else:
            blocks = pem_blocks(open(path).read())
            certs = [b for label, b in blocks if label == "CERTIFICATE"]
            keys = [b for label, b in blocks if label.endswith("PRIVATE KEY")]
            describe_material(entry, certs, keys, password)
            if any(label == "PUBLIC KEY" for label, _ in blocks):
                entry["has_public_key"] = True
    # Self-checks.
    ident = entry.get("identity")
    if ident and "environments" in entry:
        envs, source, topics = EXPECTED[ident]
        got = (entry["environments"], entry["environment_source"], entry["topics"])
        if got != (envs, source, topics):
            sys.exit(f"{path}: expected {(envs, source, topics)}, read {got}")
    if static.get("key_identity") and entry.get("key_matches") is not False:
        sys.exit(f"{path}: key unexpectedly matches the certificate")
    if fmt == "p12" and not static.get("unreadable") and path != "p12/mismatched-key.p12" \
            and entry.get("has_key") and entry.get("key_matches") is not True:
        sys.exit(f"{path}: key does not match the certificate")
    entries.append(entry)

manifest = {
    "comment": "TEST-ONLY fixtures minted by certs/mint.sh; nothing here is issued by Apple.",
    "minted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(int(os.environ["MINT_NOW"]))),
    "minted_with": os.environ["MINT_OPENSSL_VERSION"],
    "password": PASS,
    "files": entries,
}
with open("manifest.json", "w") as f:
    json.dump(manifest, f, indent=2, ensure_ascii=False)
    f.write("\n")
PY

# --------------------------------------------------------------------------
# Summary
# --------------------------------------------------------------------------
python3 - <<'PY'
import json
m = json.load(open("manifest.json"))
print(f"\nminted {len(m['files'])} fixtures at {m['minted_at']} (default password {m['password']!r})")
for e in m["files"]:
    bits = []
    if "identity" in e: bits.append(e["identity"])
    if e.get("environments"): bits.append("+".join(e["environments"]))
    if "not_after" in e: bits.append("until " + e["not_after"])
    if e.get("expected_error"): bits.append("error: " + e["expected_error"])
    if e.get("key_matches") is False: bits.append("KEY MISMATCH")
    if e["format"] == "p8": bits.append(e["key_type"] + (" (usable)" if e["token_key_valid"] else " (wrong type)"))
    if e.get("chain_count"): bits.append(f"+{e['chain_count']} chain cert")
    print(f"  {e['path']:<36} {e['format']:<5} {', '.join(bits)}")
PY
