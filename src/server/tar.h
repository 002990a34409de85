// A minimal POSIX tar (ustar) writer and reader for collection snapshots:
// regular files and directories only, sizes past 8 GiB in GNU's base-256
// form. Enough for what the server writes itself, and strict on what it
// reads: no links, no absolute names, no "..", checksums checked.
#ifndef STRATA_SERVER_TAR_H_
#define STRATA_SERVER_TAR_H_

#include <string>
#include <utility>
#include <vector>

#include "strata/status.h"

namespace strata::server {

// Writes `tar_path` holding each (name in the archive, file on disk), in
// order, and fsyncs it. A directory on disk is added with everything under
// it (its name the prefix of theirs).
Status WriteTar(const std::string& tar_path,
                const std::vector<std::pair<std::string, std::string>>& entries);

// Extracts `tar_path` under `dest_dir` (created if missing). Corruption for
// a damaged archive; NotSupported for entries other than files and
// directories; InvalidArgument for names that would escape dest_dir.
Status ExtractTar(const std::string& tar_path, const std::string& dest_dir);

}  // namespace strata::server

#endif  // STRATA_SERVER_TAR_H_
