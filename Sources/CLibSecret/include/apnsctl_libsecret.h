#ifndef APNSCTL_LIBSECRET_H
#define APNSCTL_LIBSECRET_H

// The part of libsecret, GIO, GObject and GLib that apnsctl calls, declared here rather than
// taken from their headers: the headers come with their libraries' link flags (pkg-config),
// and linked, those libraries are loaded at every start of the program, about 4 ms of it, where
// only the commands that read the Secret Service need them. loader.c loads them on first use.
//
// Every declaration is the libraries' own, checked against their headers by
// scripts/check-libsecret-header (run by scripts/check-dependencies): that check includes the
// real headers first, so a type defined here is skipped there (the guards below) and every
// function declared here must match the real one or the compiler refuses it.

#include <stddef.h>

typedef char gchar;
typedef int gint;
typedef unsigned int guint;
typedef unsigned int guint32;
typedef gint gboolean;
typedef unsigned long gsize;
typedef void *gpointer;
typedef const void *gconstpointer;
typedef guint32 GQuark;

typedef struct _GVariant GVariant;
typedef struct _GVariantType GVariantType;
typedef struct _GDBusConnection GDBusConnection;
typedef struct _GCancellable GCancellable;
typedef struct _GHashTable GHashTable;
typedef struct _GMainContext GMainContext;
typedef struct _GAsyncResult GAsyncResult;
typedef struct _GObject GObject;
typedef struct _GError GError;

typedef guint (*GHashFunc)(gconstpointer key);
typedef gboolean (*GEqualFunc)(gconstpointer a, gconstpointer b);
typedef void (*GDestroyNotify)(gpointer data);
typedef void (*GAsyncReadyCallback)(GObject *source_object, GAsyncResult *res, gpointer user_data);

#ifndef __G_ERROR_H__
struct _GError {
    GQuark domain;
    gint code;
    gchar *message;
};
#endif

#ifndef __GIO_ENUMS_H__
typedef enum {
    G_BUS_TYPE_STARTER = -1,
    G_BUS_TYPE_NONE = 0,
    G_BUS_TYPE_SYSTEM = 1,
    G_BUS_TYPE_SESSION = 2
} GBusType;

typedef enum {
    G_DBUS_CALL_FLAGS_NONE = 0,
    G_DBUS_CALL_FLAGS_NO_AUTO_START = (1 << 0),
    G_DBUS_CALL_FLAGS_ALLOW_INTERACTIVE_AUTHORIZATION = (1 << 1)
} GDBusCallFlags;

// Only the code apnsctl tells apart; GLib's GIOErrorEnum numbers it 19.
typedef enum { G_IO_ERROR_CANCELLED = 19 } GIOErrorEnum;
#endif

#ifndef __G_VARIANT_H__
// Only the class apnsctl asks about; GLib's GVariantClass is the type's character.
typedef enum { G_VARIANT_CLASS_BOOLEAN = 'b' } GVariantClass;
#endif

#ifndef __SECRET_SCHEMA_H__
typedef struct _ApnsctlSecretSchema SecretSchema;
typedef enum { SECRET_SCHEMA_NONE = 0, SECRET_SCHEMA_DONT_MATCH_NAME = (1 << 1) } SecretSchemaFlags;
#endif

void g_free(gpointer mem);
gchar *g_strdup(const gchar *str);
guint g_str_hash(gconstpointer v);
gboolean g_str_equal(gconstpointer v1, gconstpointer v2);
void g_error_free(GError *error);
GQuark g_io_error_quark(void);
void g_object_unref(gpointer object);

GHashTable *g_hash_table_new_full(
    GHashFunc hash_func, GEqualFunc key_equal_func, GDestroyNotify key_destroy_func, GDestroyNotify value_destroy_func);
gboolean g_hash_table_insert(GHashTable *hash_table, gpointer key, gpointer value);
void g_hash_table_unref(GHashTable *hash_table);

GCancellable *g_cancellable_new(void);
void g_cancellable_cancel(GCancellable *cancellable);

GMainContext *g_main_context_new(void);
void g_main_context_unref(GMainContext *context);
void g_main_context_push_thread_default(GMainContext *context);
void g_main_context_pop_thread_default(GMainContext *context);
gboolean g_main_context_iteration(GMainContext *context, gboolean may_block);

GVariantType *g_variant_type_new(const gchar *type_string);
void g_variant_type_free(GVariantType *type);
void g_variant_unref(GVariant *value);
GVariant *g_variant_new_string(const gchar *string);
GVariant *g_variant_new_object_path(const gchar *object_path);
GVariant *g_variant_new_variant(GVariant *value);
GVariant *g_variant_new_tuple(GVariant *const *children, gsize n_children);
GVariant *g_variant_new_array(const GVariantType *child_type, GVariant *const *children, gsize n_children);
GVariant *g_variant_new_dict_entry(GVariant *key, GVariant *value);
GVariant *g_variant_new_fixed_array(
    const GVariantType *element_type, gconstpointer elements, gsize n_elements, gsize element_size);
GVariantClass g_variant_classify(GVariant *value);
const gchar *g_variant_get_type_string(GVariant *value);
gsize g_variant_n_children(GVariant *value);
GVariant *g_variant_get_child_value(GVariant *value, gsize index_);
GVariant *g_variant_get_variant(GVariant *value);
gboolean g_variant_get_boolean(GVariant *value);
const gchar *g_variant_get_string(GVariant *value, gsize *length);
const gchar **g_variant_get_strv(GVariant *value, gsize *length);
gconstpointer g_variant_get_fixed_array(GVariant *value, gsize *n_elements, gsize element_size);

GDBusConnection *g_bus_get_sync(GBusType bus_type, GCancellable *cancellable, GError **error);
GVariant *g_dbus_connection_call_sync(
    GDBusConnection *connection, const gchar *bus_name, const gchar *object_path, const gchar *interface_name,
    const gchar *method_name, GVariant *parameters, const GVariantType *reply_type, GDBusCallFlags flags,
    gint timeout_msec, GCancellable *cancellable, GError **error);
void g_dbus_connection_call(
    GDBusConnection *connection, const gchar *bus_name, const gchar *object_path, const gchar *interface_name,
    const gchar *method_name, GVariant *parameters, const GVariantType *reply_type, GDBusCallFlags flags,
    gint timeout_msec, GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
GVariant *g_dbus_connection_call_finish(GDBusConnection *connection, GAsyncResult *res, GError **error);

SecretSchema *secret_schema_newv(const gchar *name, SecretSchemaFlags flags, GHashTable *attribute_names_and_types);
gboolean secret_password_storev_sync(
    const SecretSchema *schema, GHashTable *attributes, const gchar *collection, const gchar *label,
    const gchar *password, GCancellable *cancellable, GError **error);
gchar *secret_password_lookupv_sync(
    const SecretSchema *schema, GHashTable *attributes, GCancellable *cancellable, GError **error);
gboolean secret_password_clearv_sync(
    const SecretSchema *schema, GHashTable *attributes, GCancellable *cancellable, GError **error);
void secret_password_free(gchar *password);

/// Loads libsecret (and with it GIO, GObject and GLib) unless it is loaded, and finds every
/// function declared above in it. Returns 1 when they are all there, 0 when the library cannot
/// be loaded or lacks one of them (`apnsctl_libsecret_problem` then says which). Safe from any
/// thread, any number of times.
int apnsctl_libsecret_load(void);

/// What the last failed load found wrong (the dynamic loader's message), or NULL.
const char *apnsctl_libsecret_problem(void);

#endif
