#include "apnsctl_openssl_shim.h"

#include <string.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/pkcs7.h>
#include <openssl/x509.h>
#include <sys/resource.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

int apnsctl_protect_process_memory(void) {
    int result = 0;
#ifdef __linux__
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0) result = -1;
#endif
    struct rlimit none = {0, 0};
    if (setrlimit(RLIMIT_CORE, &none) != 0) result = -1;
    return result;
}

int apnsctl_process_is_dumpable(void) {
#ifdef __linux__
    return prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
#else
    return -1;
#endif
}

int apnsctl_sk_X509_num(const STACK_OF(X509) *stack) {
    return stack == NULL ? 0 : sk_X509_num(stack);
}

X509 *apnsctl_sk_X509_value(const STACK_OF(X509) *stack, int index) {
    return sk_X509_value(stack, index);
}

void apnsctl_sk_X509_pop_free(STACK_OF(X509) *stack) {
    sk_X509_pop_free(stack, X509_free);
}

static void append(char *out, size_t out_len, const char *text) {
    if (out == NULL || out_len == 0) return;
    size_t used = strlen(out);
    if (used > 0 && used + 1 < out_len) {
        strncat(out, ",", out_len - used - 1);
        used++;
    }
    if (used < out_len) strncat(out, text, out_len - used - 1);
}

static void name_of(const ASN1_OBJECT *obj, char *buf, size_t len, int *unknown) {
    int nid = OBJ_obj2nid(obj);
    if (nid == NID_undef) {
        OBJ_obj2txt(buf, (int)len, obj, 1);
        if (unknown) *unknown = 1;
    } else {
        snprintf(buf, len, "%s", OBJ_nid2ln(nid));
    }
}

/* Names a password-based encryption algorithm; PBES2 is expanded into its KDF,
 * PRF and cipher because that is where "AES-256 with PBKDF2" lives. */
static void describe_pbe(const X509_ALGOR *alg, char *buf, size_t len, int *unknown) {
    const ASN1_OBJECT *oid = NULL;
    int ptype = 0;
    const void *pval = NULL;
    X509_ALGOR_get0(&oid, &ptype, &pval, alg);
    if (OBJ_obj2nid(oid) != NID_pbes2 || ptype != V_ASN1_SEQUENCE) {
        name_of(oid, buf, len, unknown);
        return;
    }
    PBE2PARAM *pbe2 = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBE2PARAM), (const ASN1_TYPE *)alg->parameter);
    if (pbe2 == NULL) {
        snprintf(buf, len, "PBES2/?");
        return;
    }
    char kdf[80] = {0}, prf[80] = "hmacWithSHA1", cipher[80] = {0};
    name_of(pbe2->keyfunc->algorithm, kdf, sizeof kdf, unknown);
    if (OBJ_obj2nid(pbe2->keyfunc->algorithm) == NID_id_pbkdf2) {
        PBKDF2PARAM *kdfp = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBKDF2PARAM), pbe2->keyfunc->parameter);
        if (kdfp != NULL) {
            if (kdfp->prf != NULL) name_of(kdfp->prf->algorithm, prf, sizeof prf, unknown);
            PBKDF2PARAM_free(kdfp);
        }
    }
    name_of(pbe2->encryption->algorithm, cipher, sizeof cipher, unknown);
    snprintf(buf, len, "PBES2/%s/%s/%s", kdf, prf, cipher);
    PBE2PARAM_free(pbe2);
}

int apnsctl_pkcs12_describe(PKCS12 *p12,
                            char *mac, size_t mac_len,
                            char *certs, size_t certs_len,
                            char *keys, size_t keys_len,
                            int *unknown) {
    if (mac_len) mac[0] = 0;
    if (certs_len) certs[0] = 0;
    if (keys_len) keys[0] = 0;
    if (unknown) *unknown = 0;

    if (PKCS12_mac_present(p12)) {
        const X509_ALGOR *macalg = NULL;
        const ASN1_OBJECT *macoid = NULL;
        PKCS12_get0_mac(NULL, &macalg, NULL, NULL, p12);
        if (macalg != NULL) {
            X509_ALGOR_get0(&macoid, NULL, NULL, macalg);
            char name[80];
            name_of(macoid, name, sizeof name, unknown);
            append(mac, mac_len, name);
        }
    } else {
        append(mac, mac_len, "none");
    }

    STACK_OF(PKCS7) *safes = PKCS12_unpack_authsafes(p12);
    if (safes == NULL) return -1;
    for (int i = 0; i < sk_PKCS7_num(safes); i++) {
        PKCS7 *p7 = sk_PKCS7_value(safes, i);
        int nid = OBJ_obj2nid(p7->type);
        STACK_OF(PKCS12_SAFEBAG) *bags = NULL;
        if (nid == NID_pkcs7_data) {
            bags = PKCS12_unpack_p7data(p7);
            /* Certificates in a plain data safe are not encrypted at all. */
            if (bags != NULL) {
                for (int j = 0; j < sk_PKCS12_SAFEBAG_num(bags); j++) {
                    if (PKCS12_SAFEBAG_get_nid(sk_PKCS12_SAFEBAG_value(bags, j)) == NID_certBag) {
                        append(certs, certs_len, "none");
                        break;
                    }
                }
            }
        } else if (nid == NID_pkcs7_encrypted) {
            char name[200];
            /* The encrypted content is optional in the ASN.1; a file without it is damaged
             * (the shape behind CVE-2024-0727), never something to dereference. */
            if (p7->d.encrypted == NULL || p7->d.encrypted->enc_data == NULL
                || p7->d.encrypted->enc_data->algorithm == NULL) {
                sk_PKCS7_pop_free(safes, PKCS7_free);
                return -1;
            }
            const X509_ALGOR *alg = p7->d.encrypted->enc_data->algorithm;
            describe_pbe(alg, name, sizeof name, unknown);
            append(certs, certs_len, name);
            continue; /* bags inside need the password */
        } else {
            char name[80];
            name_of(p7->type, name, sizeof name, unknown);
            append(certs, certs_len, name);
            continue;
        }
        if (bags == NULL) continue;
        for (int j = 0; j < sk_PKCS12_SAFEBAG_num(bags); j++) {
            const PKCS12_SAFEBAG *bag = sk_PKCS12_SAFEBAG_value(bags, j);
            int bag_nid = PKCS12_SAFEBAG_get_nid(bag);
            if (bag_nid == NID_pkcs8ShroudedKeyBag) {
                const X509_SIG *sig = PKCS12_SAFEBAG_get0_pkcs8(bag);
                const X509_ALGOR *alg = NULL;
                X509_SIG_get0(sig, &alg, NULL);
                char name[200];
                describe_pbe(alg, name, sizeof name, unknown);
                append(keys, keys_len, name);
            } else if (bag_nid == NID_keyBag) {
                append(keys, keys_len, "none");
            }
        }
        sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
    }
    sk_PKCS7_pop_free(safes, PKCS7_free);
    return 0;
}

/* An ASN.1 INTEGER as a count: absent is 1 (the DEFAULT), unreadable or negative is as much as
 * can be: a file that says so is damaged or hostile. */
static uint64_t count_of(const ASN1_INTEGER *value) {
    int64_t number = 0;
    if (value == NULL) return 1;
    if (!ASN1_INTEGER_get_int64(&number, value) || number < 0) return UINT64_MAX;
    return (uint64_t)number;
}

static uint64_t times(uint64_t a, uint64_t b) {
    if (a != 0 && b > UINT64_MAX / a) return UINT64_MAX;
    return a * b;
}

static uint64_t plus(uint64_t a, uint64_t b) {
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* The iterations a password-based encryption asks for: PKCS#12/PKCS#5 v1 PBE and PBES2 with
 * PBKDF2 (or scrypt). 0 for an algorithm that asks for none or that OpenSSL cannot run. */
static uint64_t pbe_iterations(const X509_ALGOR *alg) {
    const ASN1_OBJECT *oid = NULL;
    int ptype = 0;
    const void *pval = NULL;
    if (alg == NULL) return 0;
    X509_ALGOR_get0(&oid, &ptype, &pval, alg);
    if (ptype != V_ASN1_SEQUENCE) return 0;
    if (OBJ_obj2nid(oid) != NID_pbes2) {
        PBEPARAM *pbe = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBEPARAM), (const ASN1_TYPE *)alg->parameter);
        if (pbe == NULL) return 0;
        uint64_t count = count_of(pbe->iter);
        PBEPARAM_free(pbe);
        return count;
    }
    PBE2PARAM *pbe2 = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBE2PARAM), (const ASN1_TYPE *)alg->parameter);
    if (pbe2 == NULL) return 0;
    uint64_t count = 0;
    int kdf = OBJ_obj2nid(pbe2->keyfunc->algorithm);
    if (kdf == NID_id_pbkdf2) {
        PBKDF2PARAM *params = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(PBKDF2PARAM), pbe2->keyfunc->parameter);
        if (params != NULL) {
            count = count_of(params->iter);
            PBKDF2PARAM_free(params);
        }
    }
#ifndef OPENSSL_NO_SCRYPT
    else if (kdf == NID_id_scrypt) {
        SCRYPT_PARAMS *params = ASN1_TYPE_unpack_sequence(ASN1_ITEM_rptr(SCRYPT_PARAMS), pbe2->keyfunc->parameter);
        if (params != NULL) {
            count = times(times(count_of(params->costParameter), count_of(params->blockSize)),
                          count_of(params->parallelizationParameter));
            SCRYPT_PARAMS_free(params);
        }
    }
#endif
    PBE2PARAM_free(pbe2);
    return count;
}

static void note(uint64_t count, int which, uint64_t *largest, int *part, uint64_t *total) {
    if (count > *largest) {
        *largest = count;
        if (part) *part = which;
    }
    *total = plus(*total, count);
}

/* Key bags, also inside nested safe-contents bags (ASN.1 decoding bounds the nesting). */
static void note_bags(const STACK_OF(PKCS12_SAFEBAG) *bags, uint64_t *largest, int *part, uint64_t *total) {
    for (int j = 0; j < sk_PKCS12_SAFEBAG_num(bags); j++) {
        const PKCS12_SAFEBAG *bag = sk_PKCS12_SAFEBAG_value(bags, j);
        int nid = PKCS12_SAFEBAG_get_nid(bag);
        if (nid == NID_pkcs8ShroudedKeyBag) {
            const X509_ALGOR *alg = NULL;
            X509_SIG_get0(PKCS12_SAFEBAG_get0_pkcs8(bag), &alg, NULL);
            note(pbe_iterations(alg), 2, largest, part, total);
        } else if (nid == NID_safeContentsBag) {
            note_bags(PKCS12_SAFEBAG_get0_safes(bag), largest, part, total);
        }
    }
}

int apnsctl_pkcs12_iterations(PKCS12 *p12, uint64_t *largest, int *part, uint64_t *total) {
    *largest = 0;
    *total = 0;
    *part = 0;
    if (PKCS12_mac_present(p12)) {
        const ASN1_INTEGER *iterations = NULL;
        PKCS12_get0_mac(NULL, NULL, NULL, &iterations, p12);
        note(count_of(iterations), 0, largest, part, total);
    }
    STACK_OF(PKCS7) *safes = PKCS12_unpack_authsafes(p12);
    if (safes == NULL) return -1;
    for (int i = 0; i < sk_PKCS7_num(safes); i++) {
        PKCS7 *p7 = sk_PKCS7_value(safes, i);
        int nid = OBJ_obj2nid(p7->type);
        if (nid == NID_pkcs7_encrypted) {
            if (p7->d.encrypted == NULL || p7->d.encrypted->enc_data == NULL) continue;
            note(pbe_iterations(p7->d.encrypted->enc_data->algorithm), 1, largest, part, total);
        } else if (nid == NID_pkcs7_data) {
            STACK_OF(PKCS12_SAFEBAG) *bags = PKCS12_unpack_p7data(p7);
            if (bags == NULL) continue;
            note_bags(bags, largest, part, total);
            sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
        }
    }
    sk_PKCS7_pop_free(safes, PKCS7_free);
    return 0;
}

int apnsctl_pkcs12_inner_iterations(PKCS12 *p12, const char *pass, int passlen,
                                    uint64_t *largest, uint64_t *total) {
    int part = 0;
    *largest = 0;
    *total = 0;
    STACK_OF(PKCS7) *safes = PKCS12_unpack_authsafes(p12);
    if (safes == NULL) return -1;
    for (int i = 0; i < sk_PKCS7_num(safes); i++) {
        PKCS7 *p7 = sk_PKCS7_value(safes, i);
        if (OBJ_obj2nid(p7->type) != NID_pkcs7_encrypted) continue;
        STACK_OF(PKCS12_SAFEBAG) *bags = PKCS12_unpack_p7encdata(p7, pass, passlen);
        if (bags == NULL) continue;
        note_bags(bags, largest, &part, total);
        sk_PKCS12_SAFEBAG_pop_free(bags, PKCS12_SAFEBAG_free);
    }
    sk_PKCS7_pop_free(safes, PKCS7_free);
    return 0;
}

uint64_t apnsctl_pkcs8_iterations(const unsigned char *der, long len) {
    const unsigned char *cursor = der;
    X509_SIG *sig = d2i_X509_SIG(NULL, &cursor, len);
    if (sig == NULL) return 0;
    const X509_ALGOR *alg = NULL;
    X509_SIG_get0(sig, &alg, NULL);
    uint64_t count = pbe_iterations(alg);
    X509_SIG_free(sig);
    return count;
}

int apnsctl_pkcs8_encryption_usable(const unsigned char *der, long len, const char *pass, int passlen) {
    const unsigned char *cursor = der;
    X509_SIG *sig = d2i_X509_SIG(NULL, &cursor, len);
    if (sig == NULL) return -1;
    const X509_ALGOR *alg = NULL;
    X509_SIG_get0(sig, &alg, NULL);
    const ASN1_OBJECT *oid = NULL;
    const void *parameter = NULL;
    int type = 0;
    X509_ALGOR_get0(&oid, &type, &parameter, alg);
    int usable = 0;
    EVP_CIPHER_CTX *context = EVP_CIPHER_CTX_new();
    if (context != NULL && oid != NULL) {
        /* What PKCS8_decrypt does before decrypting: derive the key and set up the cipher. */
        usable = EVP_PBE_CipherInit_ex((ASN1_OBJECT *)oid, pass, passlen, (ASN1_TYPE *)alg->parameter, context, 0,
                                       NULL, NULL) == 1;
    }
    EVP_CIPHER_CTX_free(context);
    X509_SIG_free(sig);
    return usable;
}

int apnsctl_pem_key_encryption_usable(const char *pem, int len, const char *pass, int passlen) {
    BIO *bio = BIO_new_mem_buf(pem, len);
    if (bio == NULL) return -1;
    char *name = NULL, *header = NULL;
    unsigned char *data = NULL;
    long length = 0;
    int result = -1;
    if (PEM_read_bio(bio, &name, &header, &data, &length) == 1) {
        if (strcmp(name, PEM_STRING_PKCS8) == 0) {
            result = apnsctl_pkcs8_encryption_usable(data, length, pass, passlen);
        } else if (header != NULL && header[0] != 0) {
            EVP_CIPHER_INFO info;
            if (PEM_get_EVP_CIPHER_INFO(header, &info) != 1) {
                result = 0; /* a DEK-Info cipher OpenSSL does not know */
            } else if (info.cipher != NULL) {
                /* Known by name is not enough: DES and others need the legacy provider. */
                EVP_CIPHER *fetched = EVP_CIPHER_fetch(NULL, EVP_CIPHER_get0_name(info.cipher), NULL);
                result = fetched != NULL;
                EVP_CIPHER_free(fetched);
            }
        }
    }
    if (data != NULL) OPENSSL_clear_free(data, (size_t)length);
    OPENSSL_free(name);
    OPENSSL_free(header);
    BIO_free(bio);
    return result;
}
