#include "apnsctl_key_exchange.h"

#include <CCryptoBoringSSL_bn.h>
#include <CCryptoBoringSSL_mem.h>

#include <string.h>

/* p = 2^1024 - 2^960 - 1 + 2^64 * (floor(2^894 pi) + 129093) (RFC 2409, section 6.2). */
static const uint8_t prime_bytes[APNSCTL_DH_PRIME_LENGTH] = {
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xC9, 0x0F, 0xDA, 0xA2, 0x21, 0x68, 0xC2, 0x34,
    0xC4, 0xC6, 0x62, 0x8B, 0x80, 0xDC, 0x1C, 0xD1, 0x29, 0x02, 0x4E, 0x08, 0x8A, 0x67, 0xCC, 0x74,
    0x02, 0x0B, 0xBE, 0xA6, 0x3B, 0x13, 0x9B, 0x22, 0x51, 0x4A, 0x08, 0x79, 0x8E, 0x34, 0x04, 0xDD,
    0xEF, 0x95, 0x19, 0xB3, 0xCD, 0x3A, 0x43, 0x1B, 0x30, 0x2B, 0x0A, 0x6D, 0xF2, 0x5F, 0x14, 0x37,
    0x4F, 0xE1, 0x35, 0x6D, 0x6D, 0x51, 0xC2, 0x45, 0xE4, 0x85, 0xB5, 0x76, 0x62, 0x5E, 0x7E, 0xC6,
    0xF4, 0x4C, 0x42, 0xE9, 0xA6, 0x37, 0xED, 0x6B, 0x0B, 0xFF, 0x5C, 0xB6, 0xF4, 0x06, 0xB7, 0xED,
    0xEE, 0x38, 0x6B, 0xFB, 0x5A, 0x89, 0x9F, 0xA5, 0xAE, 0x9F, 0x24, 0x11, 0x7C, 0x4B, 0x1F, 0xE6,
    0x49, 0x28, 0x66, 0x51, 0xEC, 0xE6, 0x53, 0x81, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
};

struct apnsctl_dh {
    BIGNUM *prime;
    BIGNUM *exponent;
    BN_MONT_CTX *montgomery;
    uint8_t public_value[APNSCTL_DH_PRIME_LENGTH];
    size_t public_length;
};

void apnsctl_dh_free(apnsctl_dh *exchange) {
    if (exchange == NULL) {
        return;
    }
    BN_clear_free(exchange->exponent);
    BN_free(exchange->prime);
    BN_MONT_CTX_free(exchange->montgomery);
    OPENSSL_free(exchange);
}

/* base^exponent mod p into `result`, constant-time in the exponent, which is the secret. */
static int power(const apnsctl_dh *exchange, BIGNUM *result, const BIGNUM *base) {
    BN_CTX *context = BN_CTX_new();
    if (context == NULL) {
        return 0;
    }
    int ok = BN_mod_exp_mont_consttime(result, base, exchange->exponent, exchange->prime, context,
                                       exchange->montgomery);
    BN_CTX_free(context);
    return ok;
}

apnsctl_dh *apnsctl_dh_new(void) {
    apnsctl_dh *exchange = OPENSSL_zalloc(sizeof(apnsctl_dh));
    if (exchange == NULL) {
        return NULL;
    }
    BIGNUM *generator = BN_new();
    BIGNUM *value = BN_new();
    BN_CTX *context = BN_CTX_new();
    exchange->prime = BN_bin2bn(prime_bytes, sizeof(prime_bytes), NULL);
    exchange->exponent = BN_new();
    int ok = generator != NULL && value != NULL && context != NULL && exchange->exponent != NULL &&
             exchange->prime != NULL && BN_set_word(generator, 2) &&
             /* APNSCTL_DH_EXPONENT_BITS random bits from the kernel's source, the top one set:
              * in [2^255, 2^256), so far inside [2, p - 2]. */
             BN_rand(exchange->exponent, APNSCTL_DH_EXPONENT_BITS, BN_RAND_TOP_ONE, BN_RAND_BOTTOM_ANY) &&
             (exchange->montgomery = BN_MONT_CTX_new_for_modulus(exchange->prime, context)) != NULL &&
             power(exchange, value, generator);
    if (ok) {
        exchange->public_length = BN_num_bytes(value);
        ok = exchange->public_length <= sizeof(exchange->public_value) &&
             BN_bn2bin_padded(exchange->public_value, exchange->public_length, value);
    }
    BN_free(generator);
    BN_free(value);
    BN_CTX_free(context);
    if (!ok) {
        apnsctl_dh_free(exchange);
        return NULL;
    }
    return exchange;
}

size_t apnsctl_dh_public_value(const apnsctl_dh *exchange, uint8_t *out) {
    memcpy(out, exchange->public_value, exchange->public_length);
    return exchange->public_length;
}

int apnsctl_dh_shared_value(const apnsctl_dh *exchange, const uint8_t *peer, size_t peer_length,
                            uint8_t *out) {
    OPENSSL_cleanse(out, APNSCTL_DH_PRIME_LENGTH);
    BIGNUM *value = BN_bin2bn(peer, peer_length, NULL);
    BIGNUM *limit = BN_dup(exchange->prime);
    BIGNUM *result = BN_new();
    /* 1 < y < p - 1: anything else gives a shared value an eavesdropper knows. */
    int ok = value != NULL && limit != NULL && result != NULL && BN_sub_word(limit, 1) &&
             !BN_is_zero(value) && !BN_is_one(value) && BN_cmp(value, limit) < 0 &&
             power(exchange, result, value) &&
             BN_bn2bin_padded(out, APNSCTL_DH_PRIME_LENGTH, result);
    BN_free(value);
    BN_free(limit);
    BN_clear_free(result);
    if (!ok) {
        OPENSSL_cleanse(out, APNSCTL_DH_PRIME_LENGTH);
    }
    return ok;
}

void apnsctl_dh_cleanse(void *memory, size_t length) {
    OPENSSL_cleanse(memory, length);
}
