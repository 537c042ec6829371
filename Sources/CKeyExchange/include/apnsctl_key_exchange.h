#ifndef APNSCTL_KEY_EXCHANGE_H
#define APNSCTL_KEY_EXCHANGE_H

#include <stddef.h>
#include <stdint.h>

/* The Diffie-Hellman exchange of a Secret Service session ("dh-ietf1024-sha256-aes128-cbc-pkcs7":
 * the 1024-bit group of RFC 2409, generator 2), in the BoringSSL that swift-crypto builds into
 * the program. This header names no BoringSSL type on purpose: a Swift module that sees both
 * BoringSSL's headers and the system's OpenSSL headers (through another module it imports)
 * fails to build, since both declare the same structures differently. */

/* The group's prime in bytes. */
#define APNSCTL_DH_PRIME_LENGTH 128

typedef struct apnsctl_dh apnsctl_dh;

/* The private exponent's length. The group's prime is a safe prime (p = 2q + 1), so the best
 * attack on an exponent of n random bits costs about 2^(n/2) steps: 256 bits give 128-bit
 * security, more than the 1024-bit group itself offers (about 80 bits against the number field
 * sieve), as RFC 3526 (section 8) and RFC 7919 (section 5.2) advise sizing it. A full-length
 * exponent would only make both exponentiations four times slower: they are the largest part
 * of opening a session, which every cold command that reads a secret waits for. */
#define APNSCTL_DH_EXPONENT_BITS 256

/* A fresh exchange: a private exponent of APNSCTL_DH_EXPONENT_BITS random bits (the top one
 * set) from the kernel's random source, and its public value. NULL when memory or the
 * arithmetic failed. */
apnsctl_dh *apnsctl_dh_new(void);

/* Our public value, 2^x mod p, as unsigned big-endian bytes without leading zeros, written to
 * `out` (APNSCTL_DH_PRIME_LENGTH bytes); returns how many bytes it wrote, 0 on failure. */
size_t apnsctl_dh_public_value(const apnsctl_dh *exchange, uint8_t *out);

/* The shared value, peer^x mod p, padded with zeros to APNSCTL_DH_PRIME_LENGTH bytes in `out`.
 * Returns 1, or 0 when the peer's value is not in (1, p - 1) (a value an eavesdropper could
 * predict the result of) or the arithmetic failed; `out` is then zeroed. */
int apnsctl_dh_shared_value(const apnsctl_dh *exchange, const uint8_t *peer, size_t peer_length,
                            uint8_t *out);

/* Clears the private exponent and frees the exchange. NULL is allowed. */
void apnsctl_dh_free(apnsctl_dh *exchange);

/* Zeroes memory in a way the compiler does not remove. */
void apnsctl_dh_cleanse(void *memory, size_t length);

#endif
