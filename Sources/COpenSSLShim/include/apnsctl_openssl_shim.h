#ifndef APNSCTL_OPENSSL_SHIM_H
#define APNSCTL_OPENSSL_SHIM_H

#include <stddef.h>
#include <stdint.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>

/* Loads libcrypto.so.3 (once; every forwarded function does so itself, this asks ahead):
 * 1 when it is loaded, else 0 and apnsctl_openssl_problem() says why. */
int apnsctl_openssl_load(void);
const char *apnsctl_openssl_problem(void);

/* Helpers for OpenSSL macros and inline functions that Swift cannot import.
 * Everything else is called from Swift directly. */

int apnsctl_sk_X509_num(const STACK_OF(X509) *stack);
X509 *apnsctl_sk_X509_value(const STACK_OF(X509) *stack, int index);
void apnsctl_sk_X509_pop_free(STACK_OF(X509) *stack);

/* Describes how a PKCS#12 file is protected without needing its password.
 * Each output buffer receives a comma-separated list of OpenSSL long names
 * ("pbeWithSHA1And40BitRC2-CBC", "PBES2/PBKDF2/hmacWithSHA256/aes-256-cbc",
 * "none" for unencrypted safes), or a dotted OID when OpenSSL does not know it.
 * `unknown` is set to 1 when any algorithm is unknown to OpenSSL.
 * Returns 0 on success, -1 when the structure could not be walked. */
int apnsctl_pkcs12_describe(PKCS12 *p12,
                            char *mac, size_t mac_len,
                            char *certs, size_t certs_len,
                            char *keys, size_t keys_len,
                            int *unknown);

/* The work a PKCS#12 file asks of whoever opens it, read before any of it is done: the
 * iteration counts of its MAC and of every password-based encryption visible without the
 * password (encrypted safes, shrouded key bags in plain safes). `largest` receives the largest
 * count, `part` which one it is (0 the MAC, 1 a certificates' safe, 2 a key), `total` their
 * sum. A count that cannot be read as a number counts as UINT64_MAX. For scrypt, N*r*p.
 * Returns 0 on success, -1 when the structure could not be walked. */
int apnsctl_pkcs12_iterations(PKCS12 *p12, uint64_t *largest, int *part, uint64_t *total);

/* The same for the key bags inside encrypted safes, which only the password shows: each safe
 * is decrypted (its own count was checked before) and its bags' counts read. Safes `pass`
 * does not decrypt are skipped. */
int apnsctl_pkcs12_inner_iterations(PKCS12 *p12, const char *pass, int passlen,
                                    uint64_t *largest, uint64_t *total);

/* The iteration count of an encrypted PKCS#8 key (EncryptedPrivateKeyInfo in DER), as above;
 * 0 when the structure is not one. */
uint64_t apnsctl_pkcs8_iterations(const unsigned char *der, long len);

/* Whether the encryption of an encrypted PKCS#8 key (EncryptedPrivateKeyInfo in DER) is one
 * this OpenSSL can run, with its providers as loaded: 1 when it is (the key is derived from
 * `pass` and the cipher set up, as decrypting would), 0 when not, -1 when the bytes are not such
 * a key. After a failed decryption, 1 means the password (or the data) was wrong, not the
 * algorithm: a wrong key can leave valid padding, and the parse error that follows says nothing
 * about the algorithm. */
int apnsctl_pkcs8_encryption_usable(const unsigned char *der, long len, const char *pass, int passlen);

/* The same for one PEM private-key block: "ENCRYPTED PRIVATE KEY" as above, a traditional
 * block by its DEK-Info cipher (known by name and fetchable from the loaded providers); -1 when
 * the block is not an encrypted key. */
int apnsctl_pem_key_encryption_usable(const char *pem, int len, const char *pass, int passlen);

/* Keeps secrets held in this process's memory out of core dumps: marks the process not
 * dumpable (prctl(PR_SET_DUMPABLE, 0), which Swift cannot call: it is variadic) and sets the
 * core size limit to 0. Returns 0 when both took effect. */
int apnsctl_protect_process_memory(void);

/* 1 when the process is dumpable, 0 when not, -1 where that cannot be told. */
int apnsctl_process_is_dumpable(void);

#endif
