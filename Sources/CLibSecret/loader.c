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
    X(GVariant *, g_variant_get_child_value, (GVariant *value, gsize index_), (value, index_)) \
    X(GVariant *, g_variant_new_string, (const gchar *string), (string)) \
    X(const gchar *, g_variant_get_string, (GVariant *value, gsize *length), (value, length)) \
    X(GVariantType *, g_variant_type_new, (const gchar *type_string), (type_string)) \
    X(GVariant *, g_variant_new_tuple, (GVariant *const *children, gsize n_children), (children, n_children)) \
    X(gsize, g_variant_n_children, (GVariant *value), (value)) \
    X(GVariant *, g_dbus_connection_call_sync, (GDBusConnection *connection, const gchar *bus_name, const gchar *object_path, const gchar *interface_name, const gchar *method_name, GVariant *parameters, const GVariantType *reply_type, GDBusCallFlags flags, gint timeout_msec, GCancellable *cancellable, GError **error), (connection, bus_name, object_path, interface_name, method_name, parameters, reply_type, flags, timeout_msec, cancellable, error)) \
    X(GVariant *, g_variant_get_variant, (GVariant *value), (value)) \
    X(gchar *, g_strdup, (const gchar *str), (str)) \
    X(GVariant *, g_variant_new_object_path, (const gchar *object_path), (object_path)) \
    X(GVariant *, g_variant_new_array, (const GVariantType *child_type, GVariant *const *children, gsize n_children), (child_type, children, n_children)) \
    X(const gchar *, g_variant_get_type_string, (GVariant *value), (value)) \
    X(gboolean, g_variant_get_boolean, (GVariant *value), (value)) \
    X(GQuark, g_io_error_quark, (void), ()) \
    X(GHashTable *, g_hash_table_new_full, (GHashFunc hash_func, GEqualFunc key_equal_func, GDestroyNotify key_destroy_func, GDestroyNotify value_destroy_func), (hash_func, key_equal_func, key_destroy_func, value_destroy_func)) \
    X(gboolean, g_hash_table_insert, (GHashTable *hash_table, gpointer key, gpointer value), (hash_table, key, value)) \
    X(GCancellable *, g_cancellable_new, (void), ()) \
    X(SecretSchema *, secret_schema_newv, (const gchar *name, SecretSchemaFlags flags, GHashTable *attribute_names_and_types), (name, flags, attribute_names_and_types)) \
    X(gboolean, secret_password_storev_sync, (const SecretSchema *schema, GHashTable *attributes, const gchar *collection, const gchar *label, const gchar *password, GCancellable *cancellable, GError **error), (schema, attributes, collection, label, password, cancellable, error)) \
    X(gchar *, secret_password_lookupv_sync, (const SecretSchema *schema, GHashTable *attributes, GCancellable *cancellable, GError **error), (schema, attributes, cancellable, error)) \
    X(gboolean, secret_password_clearv_sync, (const SecretSchema *schema, GHashTable *attributes, GCancellable *cancellable, GError **error), (schema, attributes, cancellable, error)) \
    X(GVariant *, g_variant_new_variant, (GVariant *value), (value)) \
    X(GVariant *, g_variant_new_fixed_array, (const GVariantType *element_type, gconstpointer elements, gsize n_elements, gsize element_size), (element_type, elements, n_elements, element_size)) \
    X(GVariant *, g_variant_new_dict_entry, (GVariant *key, GVariant *value), (key, value)) \
    X(const gchar **, g_variant_get_strv, (GVariant *value, gsize *length), (value, length)) \
    X(gconstpointer, g_variant_get_fixed_array, (GVariant *value, gsize *n_elements, gsize element_size), (value, n_elements, element_size)) \
    X(GVariantClass, g_variant_classify, (GVariant *value), (value)) \
    X(GMainContext *, g_main_context_new, (void), ()) \
    X(gboolean, g_main_context_iteration, (GMainContext *context, gboolean may_block), (context, may_block)) \
    X(GVariant *, g_dbus_connection_call_finish, (GDBusConnection *connection, GAsyncResult *res, GError **error), (connection, res, error)) \
    X(GDBusConnection *, g_bus_get_sync, (GBusType bus_type, GCancellable *cancellable, GError **error), (bus_type, cancellable, error)) \
    X(guint, g_str_hash, (gconstpointer v), (v)) \
    X(gboolean, g_str_equal, (gconstpointer v1, gconstpointer v2), (v1, v2))

#define RETURNING_NOTHING(X) \
    X(g_variant_unref, (GVariant *value), (value)) \
    X(g_variant_type_free, (GVariantType *type), (type)) \
    X(g_error_free, (GError *error), (error)) \
    X(g_object_unref, (gpointer object), (object)) \
    X(g_hash_table_unref, (GHashTable *hash_table), (hash_table)) \
    X(g_dbus_connection_call, (GDBusConnection *connection, const gchar *bus_name, const gchar *object_path, const gchar *interface_name, const gchar *method_name, GVariant *parameters, const GVariantType *reply_type, GDBusCallFlags flags, gint timeout_msec, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data), (connection, bus_name, object_path, interface_name, method_name, parameters, reply_type, flags, timeout_msec, cancellable, callback, user_data)) \
    X(g_cancellable_cancel, (GCancellable *cancellable), (cancellable)) \
    X(secret_password_free, (gchar *password), (password)) \
    X(g_main_context_unref, (GMainContext *context), (context)) \
    X(g_main_context_push_thread_default, (GMainContext *context), (context)) \
    X(g_main_context_pop_thread_default, (GMainContext *context), (context)) \
    X(g_free, (gpointer mem), (mem))

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
