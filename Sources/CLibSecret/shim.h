#ifndef APNSCTL_CLIBSECRET_SHIM_H
#define APNSCTL_CLIBSECRET_SHIM_H
#include <libsecret/secret.h>
#endif
