// LMDB_CHECK(call, where): every LMDB call goes through this, turning a non-zero
// return code into an evenfeed::Error that names the call, the file and the cause.
#pragma once

#include <lmdb.h>

#include "core/error.h"

#define LMDB_CHECK(call, where)                                                            \
  do {                                                                                     \
    int lmdb_rc_ = (call);                                                                 \
    if (lmdb_rc_ != MDB_SUCCESS) {                                                         \
      ::evenfeed::fail("{}: LMDB {} failed: {}{}", (where), #call, mdb_strerror(lmdb_rc_), \
                       ::evenfeed::lmdb_hint(lmdb_rc_));                                   \
    }                                                                                      \
  } while (0)

namespace evenfeed {
// What a user can do about an LMDB error code, or "" when there is nothing useful.
const char* lmdb_hint(int rc);
}  // namespace evenfeed
