#ifndef APNSCTL_OPENSSL_SHIM_H
#define APNSCTL_OPENSSL_SHIM_H

#include <stddef.h>
#include <openssl/pkcs12.h>
#include <openssl/x509.h>

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

/* Keeps secrets held in this process's memory out of core dumps: marks the process not
 * dumpable (prctl(PR_SET_DUMPABLE, 0), which Swift cannot call: it is variadic) and sets the
 * core size limit to 0. Returns 0 when both took effect. */
int apnsctl_protect_process_memory(void);

/* 1 when the process is dumpable, 0 when not, -1 where that cannot be told. */
int apnsctl_process_is_dumpable(void);

#endif
