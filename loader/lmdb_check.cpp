#include "loader/lmdb_check.h"

#include <cerrno>

namespace evenfeed {

const char* lmdb_hint(int rc) {
  switch (rc) {
    case MDB_CORRUPTED:
    case MDB_INVALID:
    case MDB_PAGE_NOTFOUND:
      return "; the shard is damaged: run `evenfeed verify` and re-convert the dataset";
    case MDB_VERSION_MISMATCH:
      return "; the shard was written by an incompatible LMDB";
    case ENOSPC:
    case EFBIG:
      return "; the disk is full or a file-size limit was reached: free space or write elsewhere";
    case EIO:
      return "; a write to disk failed: the disk may be full or failing (check `df`), free space "
             "or write "
             "elsewhere";
    case ENOENT:
      return "; the file is missing";
    default:
      return "";
  }
}

}  // namespace evenfeed
