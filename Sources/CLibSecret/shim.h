#ifndef APNSCTL_CLIBSECRET_SHIM_H
#define APNSCTL_CLIBSECRET_SHIM_H
// For secret-paths.h: item paths and GetSecrets without a proxy object per item (the batch
// read of a store's secrets). Marked "subject to change" upstream, unchanged since libsecret 0.7.
#define SECRET_API_SUBJECT_TO_CHANGE 1
#include <libsecret/secret.h>
#endif
