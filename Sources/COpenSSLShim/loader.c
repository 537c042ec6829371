// OpenSSL's libcrypto, loaded when a command first calls it instead of when the program starts.
//
// Linked the usual way, libcrypto.so.3 is mapped and relocated before main() in every run of
// apnsctl: about 4,200 symbol bindings and 17,000 relocations, some 1.5-2 ms of a cold command's
// start-up (docs/performance.md, "the cold probe, sixth round"). Only importing and exporting
// PKCS#12, reading encrypted keys, certificate requests and Vault's key wrapping use it; a cold
// `send` does not. So the program defines each function it calls in libcrypto (the same name and
// signature, checked here by the compiler against OpenSSL's own headers, included below) as a
// forwarder to the real one, found with dlsym after dlopen of libcrypto.so.3 on first use. The
// forwarders are hidden: libcrypto's calls among its own functions stay its own.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/objects.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/provider.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "apnsctl_openssl_shim.h"

// Every forwarded function: what it returns, its name, parameters and arguments. OpenSSL's
// headers above declare each; a forwarder that differs from its declaration does not compile.
#define RETURNING_VALUE(X) \
    X(int, ASN1_INTEGER_get_int64, (int64_t *a0, const ASN1_INTEGER *a1), (a0, a1)) \
    X(void *, ASN1_TYPE_unpack_sequence, (const ASN1_ITEM *a0, const ASN1_TYPE *a1), (a0, a1)) \
    X(int, BIO_free, (BIO *a0), (a0)) \
    X(BIO *, BIO_new_mem_buf, (const void *a0, int a1), (a0, a1)) \
    X(long unsigned int, ERR_get_error, (void), ()) \
    X(EVP_CIPHER_CTX *, EVP_CIPHER_CTX_new, (void), ()) \
    X(EVP_CIPHER *, EVP_CIPHER_fetch, (OSSL_LIB_CTX *a0, const char *a1, const char *a2), (a0, a1, a2)) \
    X(const char *, EVP_CIPHER_get0_name, (const EVP_CIPHER *a0), (a0)) \
    X(int, EVP_EncryptFinal_ex, (EVP_CIPHER_CTX *a0, unsigned char *a1, int *a2), (a0, a1, a2)) \
    X(int, EVP_EncryptInit_ex, (EVP_CIPHER_CTX *a0, const EVP_CIPHER *a1, ENGINE *a2, const unsigned char *a3, const unsigned char *a4), (a0, a1, a2, a3, a4)) \
    X(int, EVP_EncryptUpdate, (EVP_CIPHER_CTX *a0, unsigned char *a1, int *a2, const unsigned char *a3, int a4), (a0, a1, a2, a3, a4)) \
    X(int, EVP_PBE_CipherInit_ex, (ASN1_OBJECT *a0, const char *a1, int a2, ASN1_TYPE *a3, EVP_CIPHER_CTX *a4, int a5, OSSL_LIB_CTX *a6, const char *a7), (a0, a1, a2, a3, a4, a5, a6, a7)) \
    X(EVP_PKEY *, EVP_PKCS82PKEY, (const PKCS8_PRIV_KEY_INFO *a0), (a0)) \
    X(PKCS8_PRIV_KEY_INFO *, EVP_PKEY2PKCS8, (const EVP_PKEY *a0), (a0)) \
    X(EVP_PKEY_CTX *, EVP_PKEY_CTX_new_from_name, (OSSL_LIB_CTX *a0, const char *a1, const char *a2), (a0, a1, a2)) \
    X(int, EVP_PKEY_CTX_set_rsa_keygen_bits, (EVP_PKEY_CTX *a0, int a1), (a0, a1)) \
    X(int, EVP_PKEY_generate, (EVP_PKEY_CTX *a0, EVP_PKEY **a1), (a0, a1)) \
    X(int, EVP_PKEY_get_base_id, (const EVP_PKEY *a0), (a0)) \
    X(int, EVP_PKEY_get_bits, (const EVP_PKEY *a0), (a0)) \
    X(int, EVP_PKEY_get_group_name, (const EVP_PKEY *a0, char *a1, size_t a2, size_t *a3), (a0, a1, a2, a3)) \
    X(int, EVP_PKEY_keygen_init, (EVP_PKEY_CTX *a0), (a0)) \
    X(const EVP_CIPHER *, EVP_aes_128_wrap_pad, (void), ()) \
    X(const EVP_CIPHER *, EVP_aes_192_wrap_pad, (void), ()) \
    X(const EVP_CIPHER *, EVP_aes_256_wrap_pad, (void), ()) \
    X(const EVP_MD *, EVP_sha1, (void), ()) \
    X(const EVP_MD *, EVP_sha256, (void), ()) \
    X(const char *, OBJ_nid2ln, (int a0), (a0)) \
    X(const char *, OBJ_nid2sn, (int a0), (a0)) \
    X(int, OBJ_obj2nid, (const ASN1_OBJECT *a0), (a0)) \
    X(int, OBJ_obj2txt, (char *a0, int a1, const ASN1_OBJECT *a2, int a3), (a0, a1, a2, a3)) \
    X(OPENSSL_STACK *, OPENSSL_sk_new_null, (void), ()) \
    X(int, OPENSSL_sk_num, (const OPENSSL_STACK *a0), (a0)) \
    X(int, OPENSSL_sk_push, (OPENSSL_STACK *a0, const void *a1), (a0, a1)) \
    X(void *, OPENSSL_sk_value, (const OPENSSL_STACK *a0, int a1), (a0, a1)) \
    X(OSSL_PROVIDER *, OSSL_PROVIDER_load, (OSSL_LIB_CTX *a0, const char *a1), (a0, a1)) \
    X(const char *, OpenSSL_version, (int a0), (a0)) \
    X(const ASN1_ITEM *, PBE2PARAM_it, (void), ()) \
    X(const ASN1_ITEM *, PBEPARAM_it, (void), ()) \
    X(const ASN1_ITEM *, PBKDF2PARAM_it, (void), ()) \
    X(int, PEM_get_EVP_CIPHER_INFO, (char *a0, EVP_CIPHER_INFO *a1), (a0, a1)) \
    X(int, PEM_read_bio, (BIO *a0, char **a1, char **a2, unsigned char **a3, long int *a4), (a0, a1, a2, a3, a4)) \
    X(EVP_PKEY *, PEM_read_bio_PrivateKey, (BIO *a0, EVP_PKEY **a1, pem_password_cb (*a2), void *a3), (a0, a1, a2, a3)) \
    X(const X509_SIG *, PKCS12_SAFEBAG_get0_pkcs8, (const PKCS12_SAFEBAG *a0), (a0)) \
    X(const struct stack_st_PKCS12_SAFEBAG *, PKCS12_SAFEBAG_get0_safes, (const PKCS12_SAFEBAG *a0), (a0)) \
    X(int, PKCS12_SAFEBAG_get_nid, (const PKCS12_SAFEBAG *a0), (a0)) \
    X(PKCS12 *, PKCS12_create, (const char *a0, const char *a1, EVP_PKEY *a2, X509 *a3, struct stack_st_X509 *a4, int a5, int a6, int a7, int a8, int a9), (a0, a1, a2, a3, a4, a5, a6, a7, a8, a9)) \
    X(int, PKCS12_mac_present, (const PKCS12 *a0), (a0)) \
    X(int, PKCS12_parse, (PKCS12 *a0, const char *a1, EVP_PKEY **a2, X509 **a3, struct stack_st_X509 **a4), (a0, a1, a2, a3, a4)) \
    X(int, PKCS12_set_mac, (PKCS12 *a0, const char *a1, int a2, unsigned char *a3, int a4, int a5, const EVP_MD *a6), (a0, a1, a2, a3, a4, a5, a6)) \
    X(struct stack_st_PKCS7 *, PKCS12_unpack_authsafes, (const PKCS12 *a0), (a0)) \
    X(struct stack_st_PKCS12_SAFEBAG *, PKCS12_unpack_p7data, (PKCS7 *a0), (a0)) \
    X(struct stack_st_PKCS12_SAFEBAG *, PKCS12_unpack_p7encdata, (PKCS7 *a0, const char *a1, int a2), (a0, a1, a2)) \
    X(int, PKCS12_verify_mac, (PKCS12 *a0, const char *a1, int a2), (a0, a1, a2)) \
    X(PKCS8_PRIV_KEY_INFO *, PKCS8_decrypt, (const X509_SIG *a0, const char *a1, int a2), (a0, a1, a2)) \
    X(const ASN1_ITEM *, SCRYPT_PARAMS_it, (void), ()) \
    X(int, X509_NAME_add_entry_by_txt, (X509_NAME *a0, const char *a1, int a2, const unsigned char *a3, int a4, int a5, int a6), (a0, a1, a2, a3, a4, a5, a6)) \
    X(EVP_PKEY *, X509_REQ_get0_pubkey, (X509_REQ *a0), (a0)) \
    X(X509_NAME *, X509_REQ_get_subject_name, (const X509_REQ *a0), (a0)) \
    X(X509_REQ *, X509_REQ_new, (void), ()) \
    X(int, X509_REQ_set_pubkey, (X509_REQ *a0, EVP_PKEY *a1), (a0, a1)) \
    X(int, X509_REQ_set_version, (X509_REQ *a0, long int a1), (a0, a1)) \
    X(int, X509_REQ_sign, (X509_REQ *a0, EVP_PKEY *a1, const EVP_MD *a2), (a0, a1, a2)) \
    X(int, X509_REQ_verify, (X509_REQ *a0, EVP_PKEY *a1), (a0, a1)) \
    X(int, X509_check_ca, (X509 *a0), (a0)) \
    X(int, X509_check_private_key, (const X509 *a0, const EVP_PKEY *a1), (a0, a1)) \
    X(EVP_PKEY *, X509_get0_pubkey, (const X509 *a0), (a0)) \
    X(EVP_PKEY *, d2i_AutoPrivateKey, (EVP_PKEY **a0, const unsigned char **a1, long int a2), (a0, a1, a2)) \
    X(PKCS12 *, d2i_PKCS12, (PKCS12 **a0, const unsigned char **a1, long int a2), (a0, a1, a2)) \
    X(X509 *, d2i_X509, (X509 **a0, const unsigned char **a1, long int a2), (a0, a1, a2)) \
    X(X509_REQ *, d2i_X509_REQ, (X509_REQ **a0, const unsigned char **a1, long int a2), (a0, a1, a2)) \
    X(X509_SIG *, d2i_X509_SIG, (X509_SIG **a0, const unsigned char **a1, long int a2), (a0, a1, a2)) \
    X(int, i2d_PKCS12, (const PKCS12 *a0, unsigned char **a1), (a0, a1)) \
    X(int, i2d_PKCS8_PRIV_KEY_INFO, (const PKCS8_PRIV_KEY_INFO *a0, unsigned char **a1), (a0, a1)) \
    X(int, i2d_PUBKEY, (const EVP_PKEY *a0, unsigned char **a1), (a0, a1)) \
    X(int, i2d_X509, (const X509 *a0, unsigned char **a1), (a0, a1)) \
    X(int, i2d_X509_REQ, (const X509_REQ *a0, unsigned char **a1), (a0, a1))

#define RETURNING_NOTHING(X) \
    X(CRYPTO_clear_free, (void *a0, size_t a1, const char *a2, int a3), (a0, a1, a2, a3)) \
    X(CRYPTO_free, (void *a0, const char *a1, int a2), (a0, a1, a2)) \
    X(ERR_clear_error, (void), ()) \
    X(ERR_error_string_n, (long unsigned int a0, char *a1, size_t a2), (a0, a1, a2)) \
    X(EVP_CIPHER_CTX_free, (EVP_CIPHER_CTX *a0), (a0)) \
    X(EVP_CIPHER_free, (EVP_CIPHER *a0), (a0)) \
    X(EVP_CIPHER_CTX_set_flags, (EVP_CIPHER_CTX *a0, int a1), (a0, a1)) \
    X(EVP_PKEY_CTX_free, (EVP_PKEY_CTX *a0), (a0)) \
    X(EVP_PKEY_free, (EVP_PKEY *a0), (a0)) \
    X(OPENSSL_sk_free, (OPENSSL_STACK *a0), (a0)) \
    X(OPENSSL_sk_pop_free, (OPENSSL_STACK *a0, void (*a1)(void *)), (a0, a1)) \
    X(PBE2PARAM_free, (PBE2PARAM *a0), (a0)) \
    X(PBEPARAM_free, (PBEPARAM *a0), (a0)) \
    X(PBKDF2PARAM_free, (PBKDF2PARAM *a0), (a0)) \
    X(PKCS12_SAFEBAG_free, (PKCS12_SAFEBAG *a0), (a0)) \
    X(PKCS12_free, (PKCS12 *a0), (a0)) \
    X(PKCS12_get0_mac, (const ASN1_OCTET_STRING **a0, const X509_ALGOR **a1, const ASN1_OCTET_STRING **a2, const ASN1_INTEGER **a3, const PKCS12 *a4), (a0, a1, a2, a3, a4)) \
    X(PKCS7_free, (PKCS7 *a0), (a0)) \
    X(PKCS8_PRIV_KEY_INFO_free, (PKCS8_PRIV_KEY_INFO *a0), (a0)) \
    X(SCRYPT_PARAMS_free, (SCRYPT_PARAMS *a0), (a0)) \
    X(X509_ALGOR_get0, (const ASN1_OBJECT **a0, int *a1, const void **a2, const X509_ALGOR *a3), (a0, a1, a2, a3)) \
    X(X509_REQ_free, (X509_REQ *a0), (a0)) \
    X(X509_SIG_free, (X509_SIG *a0), (a0)) \
    X(X509_SIG_get0, (const X509_SIG *a0, const X509_ALGOR **a1, const ASN1_OCTET_STRING **a2), (a0, a1, a2)) \
    X(X509_free, (X509 *a0), (a0))

// The real functions, found in the loaded library.
#define VALUE_POINTER(returns, name, parameters, arguments) static __typeof__(name) *real_##name;
#define VOID_POINTER(name, parameters, arguments) static __typeof__(name) *real_##name;
RETURNING_VALUE(VALUE_POINTER)
RETURNING_NOTHING(VOID_POINTER)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static char problem[512];

// The soname of OpenSSL 3, which Debian 12's libssl3 package ships.
#define LIBRARY "libcrypto.so.3"

static void load(void) {
    void *library = dlopen(LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *why = dlerror();
        snprintf(problem, sizeof problem, "%s", why ? why : LIBRARY " cannot be loaded");
        return;
    }
#define FIND(name) \
    *(void **)(&real_##name) = dlsym(library, #name); \
    if (real_##name == NULL) { \
        snprintf(problem, sizeof problem, LIBRARY " lacks %s (an OpenSSL older than 3.0?)", #name); \
        return; \
    }
#define FIND_VALUE(returns, name, parameters, arguments) FIND(name)
#define FIND_VOID(name, parameters, arguments) FIND(name)
    RETURNING_VALUE(FIND_VALUE)
    RETURNING_NOTHING(FIND_VOID)
    __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
}

int apnsctl_openssl_load(void) {
    if (__atomic_load_n(&loaded, __ATOMIC_ACQUIRE)) return 1;
    pthread_once(&once, load);
    return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE);
}

const char *apnsctl_openssl_problem(void) { return problem[0] ? problem : NULL; }

// Without the library nothing that asked for OpenSSL can go on. Linked the usual way, the
// program would not have started at all; here it stops with what is missing and how to get it.
static void require(void) {
    if (__builtin_expect(apnsctl_openssl_load(), 1)) return;
    static const char head[] = "apnsctl: OpenSSL's libcrypto cannot be loaded: ";
    static const char tail[] = "\nInstall it: `sudo apt install libssl3`.\n";
    ssize_t ignored = write(2, head, sizeof head - 1);
    ignored = write(2, problem, strnlen(problem, sizeof problem));
    ignored = write(2, tail, sizeof tail - 1);
    (void)ignored;
    _exit(69);
}

// The forwarders, under the library's own names, not exported from the program.
#define FORWARD_VALUE(returns, name, parameters, arguments) \
    __attribute__((visibility("hidden"))) returns name parameters { \
        require(); \
        return real_##name arguments; \
    }
#define FORWARD_VOID(name, parameters, arguments) \
    __attribute__((visibility("hidden"))) void name parameters { \
        require(); \
        real_##name arguments; \
    }
RETURNING_VALUE(FORWARD_VALUE)
RETURNING_NOTHING(FORWARD_VOID)
