// libsecret, GIO, GObject and GLib, loaded when the Secret Service is first used instead of
// when the program starts (declarations: apnsctl_libsecret.h).
//
// Linked the usual way, these libraries (and the dozen they depend on: libmount, libselinux,
// libgcrypt, PCRE2...) are mapped, relocated and initialised before main() in every run of
// apnsctl, about 4 ms, most of a cold command's start-up that is not its own work; most commands
// never touch the Secret Service. So the program defines each function it calls in them (the
// same name and signature as the libraries' headers) as a forwarder to the real one, found with
// dlsym after dlopen of libsecret-1.so.0 on first use. The forwarders are not exported (the
// release link exports nothing), so the libraries' calls among themselves stay their own.
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "apnsctl_libsecret.h"

// Every forwarded function: what it returns, its name, parameters and arguments. The header
// declares each the same way, and the compiler holds each forwarder to that declaration.
#define RETURNING_VALUE(X) \
    X(gchar *, g_strdup, (const gchar *str), (str)) \
    X(guint, g_str_hash, (gconstpointer v), (v)) \
    X(gboolean, g_str_equal, (gconstpointer v1, gconstpointer v2), (v1, v2)) \
    X(GQuark, g_io_error_quark, (void), ()) \
    X(GQuark, g_dbus_error_quark, (void), ()) \
    X(gchar *, g_dbus_error_get_remote_error, (const GError *error), (error)) \
    X(GHashTable *, g_hash_table_new_full, (GHashFunc hash_func, GEqualFunc key_equal_func, GDestroyNotify key_destroy_func, GDestroyNotify value_destroy_func), (hash_func, key_equal_func, key_destroy_func, value_destroy_func)) \
    X(gboolean, g_hash_table_insert, (GHashTable *hash_table, gpointer key, gpointer value), (hash_table, key, value)) \
    X(gpointer, g_hash_table_lookup, (GHashTable *hash_table, gconstpointer key), (hash_table, key)) \
    X(GCancellable *, g_cancellable_new, (void), ()) \
    X(GQuark, secret_error_get_quark, (void), ()) \
    X(SecretSchema *, secret_schema_newv, (const gchar *name, SecretSchemaFlags flags, GHashTable *attribute_names_and_types), (name, flags, attribute_names_and_types)) \
    X(SecretService *, secret_service_get_sync, (SecretServiceFlags flags, GCancellable *cancellable, GError **error), (flags, cancellable, error)) \
    X(GList *, secret_service_search_finish, (SecretService *service, GAsyncResult *result, GError **error), (service, result, error)) \
    X(GMainContext *, g_main_context_new, (void), ()) \
    X(gboolean, g_main_context_iteration, (GMainContext *context, gboolean may_block), (context, may_block)) \
    X(gboolean, secret_service_store_sync, (SecretService *service, const SecretSchema *schema, GHashTable *attributes, const gchar *collection, const gchar *label, SecretValue *value, GCancellable *cancellable, GError **error), (service, schema, attributes, collection, label, value, cancellable, error)) \
    X(gboolean, secret_service_clear_sync, (SecretService *service, const SecretSchema *schema, GHashTable *attributes, GCancellable *cancellable, GError **error), (service, schema, attributes, cancellable, error)) \
    X(SecretCollection *, secret_collection_for_alias_sync, (SecretService *service, const gchar *alias, SecretCollectionFlags flags, GCancellable *cancellable, GError **error), (service, alias, flags, cancellable, error)) \
    X(gboolean, secret_collection_get_locked, (SecretCollection *self), (self)) \
    X(gboolean, secret_item_get_locked, (SecretItem *self), (self)) \
    X(GHashTable *, secret_item_get_attributes, (SecretItem *self), (self)) \
    X(SecretValue *, secret_item_get_secret, (SecretItem *self), (self)) \
    X(SecretValue *, secret_value_new, (const gchar *secret, gssize length, const gchar *content_type), (secret, length, content_type)) \
    X(const gchar *, secret_value_get, (SecretValue *value, gsize *length), (value, length)) \
    X(const gchar *, secret_value_get_content_type, (SecretValue *value), (value)) \
    X(gboolean, secret_service_search_for_dbus_paths_finish, (SecretService *self, GAsyncResult *result, gchar ***unlocked, gchar ***locked, GError **error), (self, result, unlocked, locked, error)) \
    X(GHashTable *, secret_service_get_secrets_for_dbus_paths_sync, (SecretService *self, const gchar **item_paths, GCancellable *cancellable, GError **error), (self, item_paths, cancellable, error)) \
    X(SecretItem *, secret_item_new_for_dbus_path_sync, (SecretService *service, const gchar *item_path, SecretItemFlags flags, GCancellable *cancellable, GError **error), (service, item_path, flags, cancellable, error))

#define RETURNING_NOTHING(X) \
    X(g_free, (gpointer mem), (mem)) \
    X(g_error_free, (GError *error), (error)) \
    X(g_object_unref, (gpointer object), (object)) \
    X(g_list_free_full, (GList *list, GDestroyNotify free_func), (list, free_func)) \
    X(g_hash_table_unref, (GHashTable *hash_table), (hash_table)) \
    X(g_cancellable_cancel, (GCancellable *cancellable), (cancellable)) \
    X(secret_value_unref, (gpointer value), (value)) \
    X(secret_service_search, (SecretService *service, const SecretSchema *schema, GHashTable *attributes, SecretSearchFlags flags, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data), (service, schema, attributes, flags, cancellable, callback, user_data)) \
    X(g_main_context_unref, (GMainContext *context), (context)) \
    X(g_main_context_push_thread_default, (GMainContext *context), (context)) \
    X(g_main_context_pop_thread_default, (GMainContext *context), (context)) \
    X(g_strfreev, (gchar **str_array), (str_array)) \
    X(secret_service_search_for_dbus_paths, (SecretService *self, const SecretSchema *schema, GHashTable *attributes, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data), (self, schema, attributes, cancellable, callback, user_data))

// The real functions, found in the loaded libraries.
#define VALUE_POINTER(returns, name, parameters, arguments) static __typeof__(name) *real_##name;
#define VOID_POINTER(name, parameters, arguments) static __typeof__(name) *real_##name;
RETURNING_VALUE(VALUE_POINTER)
RETURNING_NOTHING(VOID_POINTER)

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;
static char problem[512];

static void load(void) {
    // The soname Debian's libsecret-1-0 ships; it brings GIO, GObject and GLib with it.
    void *library = dlopen("libsecret-1.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *why = dlerror();
        snprintf(problem, sizeof problem, "%s", why ? why : "libsecret-1.so.0 cannot be loaded");
        return;
    }
#define FIND(name) \
    *(void **)(&real_##name) = dlsym(library, #name); \
    if (real_##name == NULL) { \
        snprintf(problem, sizeof problem, "libsecret-1.so.0 and its libraries lack %s", #name); \
        return; \
    }
#define FIND_VALUE(returns, name, parameters, arguments) FIND(name)
#define FIND_VOID(name, parameters, arguments) FIND(name)
    RETURNING_VALUE(FIND_VALUE)
    RETURNING_NOTHING(FIND_VOID)
    __atomic_store_n(&loaded, 1, __ATOMIC_RELEASE);
}

int apnsctl_libsecret_load(void) {
    if (__atomic_load_n(&loaded, __ATOMIC_ACQUIRE)) return 1;
    pthread_once(&once, load);
    return __atomic_load_n(&loaded, __ATOMIC_ACQUIRE);
}

const char *apnsctl_libsecret_problem(void) { return problem[0] ? problem : NULL; }

// Every caller asks apnsctl_libsecret_load first and reports a failure as the Secret Service
// being unavailable; reaching a forwarder without the library is a bug, stopped here rather
// than by a jump to address zero.
static void require(void) {
    if (__builtin_expect(apnsctl_libsecret_load(), 1)) return;
    fprintf(stderr, "apnsctl: internal error: libsecret used without being loaded (%s)\n",
            problem[0] ? problem : "unknown reason");
    abort();
}

// The forwarders, under the libraries' own names.
#define FORWARD_VALUE(returns, name, parameters, arguments) \
    returns name parameters { \
        require(); \
        return real_##name arguments; \
    }
#define FORWARD_VOID(name, parameters, arguments) \
    void name parameters { \
        require(); \
        real_##name arguments; \
    }
RETURNING_VALUE(FORWARD_VALUE)
RETURNING_NOTHING(FORWARD_VOID)
