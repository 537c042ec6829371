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
typedef signed long gssize;
typedef void *gpointer;
typedef const void *gconstpointer;
typedef guint32 GQuark;

typedef struct _GCancellable GCancellable;
typedef struct _GHashTable GHashTable;
typedef struct _GError GError;
typedef struct _GList GList;
typedef struct _GMainContext GMainContext;
typedef struct _GAsyncResult GAsyncResult;
typedef struct _GObject GObject;
typedef struct _SecretService SecretService;
typedef struct _SecretCollection SecretCollection;
typedef struct _SecretItem SecretItem;
typedef struct _SecretValue SecretValue;

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

#ifndef __G_LIST_H__
struct _GList {
    gpointer data;
    GList *next;
    GList *prev;
};
#endif

#ifndef __GIO_ENUMS_H__
// Only the codes apnsctl tells apart, with GLib's numbers.
typedef enum {
    G_IO_ERROR_NOT_FOUND = 1,
    G_IO_ERROR_PERMISSION_DENIED = 14,
    G_IO_ERROR_CLOSED = 18,
    G_IO_ERROR_CANCELLED = 19,
    G_IO_ERROR_TIMED_OUT = 24,
    G_IO_ERROR_CONNECTION_REFUSED = 39,
    G_IO_ERROR_BROKEN_PIPE = 44
} GIOErrorEnum;

typedef enum {
    G_DBUS_ERROR_SERVICE_UNKNOWN = 2,
    G_DBUS_ERROR_NAME_HAS_NO_OWNER = 3,
    G_DBUS_ERROR_NO_REPLY = 4,
    G_DBUS_ERROR_IO_ERROR = 5,
    G_DBUS_ERROR_BAD_ADDRESS = 6,
    G_DBUS_ERROR_AUTH_FAILED = 10,
    G_DBUS_ERROR_NO_SERVER = 11,
    G_DBUS_ERROR_TIMEOUT = 12,
    G_DBUS_ERROR_NO_NETWORK = 13,
    G_DBUS_ERROR_DISCONNECTED = 15,
    G_DBUS_ERROR_FILE_NOT_FOUND = 17,
    G_DBUS_ERROR_TIMED_OUT = 20,
    // The bus's failures to start a service by activation run from the first to the last.
    G_DBUS_ERROR_SPAWN_EXEC_FAILED = 23,
    G_DBUS_ERROR_SPAWN_NO_MEMORY = 34
} GDBusError;
#endif

#ifndef __SECRET_SCHEMA_H__
typedef struct _ApnsctlSecretSchema SecretSchema;
typedef enum { SECRET_SCHEMA_NONE = 0, SECRET_SCHEMA_DONT_MATCH_NAME = (1 << 1) } SecretSchemaFlags;
#endif

#ifndef __SECRET_TYPES_H__
typedef enum { SECRET_ERROR_PROTOCOL = 1, SECRET_ERROR_IS_LOCKED = 2, SECRET_ERROR_NO_SUCH_OBJECT = 3 } SecretError;
typedef enum {
    SECRET_SEARCH_NONE = 0,
    SECRET_SEARCH_ALL = (1 << 1),
    SECRET_SEARCH_UNLOCK = (1 << 2),
    SECRET_SEARCH_LOAD_SECRETS = (1 << 3)
} SecretSearchFlags;
#endif

#ifndef __SECRET_SERVICE_H__
typedef enum { SECRET_SERVICE_NONE = 0, SECRET_SERVICE_OPEN_SESSION = (1 << 1) } SecretServiceFlags;
#endif

#ifndef __SECRET_ITEM_H__
typedef enum { SECRET_ITEM_NONE = 0 } SecretItemFlags;
#endif

#ifndef __SECRET_COLLECTION_H__
typedef enum { SECRET_COLLECTION_NONE = 0 } SecretCollectionFlags;
#endif

void g_free(gpointer mem);
gchar *g_strdup(const gchar *str);
guint g_str_hash(gconstpointer v);
gboolean g_str_equal(gconstpointer v1, gconstpointer v2);
void g_error_free(GError *error);
GQuark g_io_error_quark(void);
GQuark g_dbus_error_quark(void);
gchar *g_dbus_error_get_remote_error(const GError *error);
void g_object_unref(gpointer object);
void g_list_free_full(GList *list, GDestroyNotify free_func);
void g_strfreev(gchar **str_array);

GHashTable *g_hash_table_new_full(
    GHashFunc hash_func, GEqualFunc key_equal_func, GDestroyNotify key_destroy_func, GDestroyNotify value_destroy_func);
gboolean g_hash_table_insert(GHashTable *hash_table, gpointer key, gpointer value);
gpointer g_hash_table_lookup(GHashTable *hash_table, gconstpointer key);
void g_hash_table_unref(GHashTable *hash_table);

GCancellable *g_cancellable_new(void);
void g_cancellable_cancel(GCancellable *cancellable);

GMainContext *g_main_context_new(void);
void g_main_context_unref(GMainContext *context);
void g_main_context_push_thread_default(GMainContext *context);
void g_main_context_pop_thread_default(GMainContext *context);
gboolean g_main_context_iteration(GMainContext *context, gboolean may_block);

GQuark secret_error_get_quark(void);
SecretSchema *secret_schema_newv(const gchar *name, SecretSchemaFlags flags, GHashTable *attribute_names_and_types);
SecretService *secret_service_get_sync(SecretServiceFlags flags, GCancellable *cancellable, GError **error);
void secret_service_search(
    SecretService *service, const SecretSchema *schema, GHashTable *attributes, SecretSearchFlags flags,
    GCancellable *cancellable, GAsyncReadyCallback callback, gpointer user_data);
GList *secret_service_search_finish(SecretService *service, GAsyncResult *result, GError **error);
// libsecret's path-level API (secret-paths.h, under SECRET_API_SUBJECT_TO_CHANGE): items by
// their D-Bus object paths, without an item object (a D-Bus proxy) each.
void secret_service_search_for_dbus_paths(
    SecretService *self, const SecretSchema *schema, GHashTable *attributes, GCancellable *cancellable,
    GAsyncReadyCallback callback, gpointer user_data);
gboolean secret_service_search_for_dbus_paths_finish(
    SecretService *self, GAsyncResult *result, gchar ***unlocked, gchar ***locked, GError **error);
GHashTable *secret_service_get_secrets_for_dbus_paths_sync(
    SecretService *self, const gchar **item_paths, GCancellable *cancellable, GError **error);
SecretItem *secret_item_new_for_dbus_path_sync(
    SecretService *service, const gchar *item_path, SecretItemFlags flags, GCancellable *cancellable,
    GError **error);
gboolean secret_service_store_sync(
    SecretService *service, const SecretSchema *schema, GHashTable *attributes, const gchar *collection,
    const gchar *label, SecretValue *value, GCancellable *cancellable, GError **error);
gboolean secret_service_clear_sync(
    SecretService *service, const SecretSchema *schema, GHashTable *attributes, GCancellable *cancellable,
    GError **error);
SecretCollection *secret_collection_for_alias_sync(
    SecretService *service, const gchar *alias, SecretCollectionFlags flags, GCancellable *cancellable,
    GError **error);
gboolean secret_collection_get_locked(SecretCollection *self);
gboolean secret_item_get_locked(SecretItem *self);
GHashTable *secret_item_get_attributes(SecretItem *self);
SecretValue *secret_item_get_secret(SecretItem *self);
SecretValue *secret_value_new(const gchar *secret, gssize length, const gchar *content_type);
const gchar *secret_value_get(SecretValue *value, gsize *length);
const gchar *secret_value_get_content_type(SecretValue *value);
void secret_value_unref(gpointer value);

/// Loads libsecret (and with it GIO, GObject and GLib) unless it is loaded, and finds every
/// function declared above in it. Returns 1 when they are all there, 0 when the library cannot
/// be loaded or lacks one of them (`apnsctl_libsecret_problem` then says which). Safe from any
/// thread, any number of times.
int apnsctl_libsecret_load(void);

/// What the last failed load found wrong (the dynamic loader's message), or NULL.
const char *apnsctl_libsecret_problem(void);

#endif
