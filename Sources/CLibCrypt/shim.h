#ifndef APNSCTL_CLIBCRYPT_SHIM_H
#define APNSCTL_CLIBCRYPT_SHIM_H
#include <crypt.h>
#endif
