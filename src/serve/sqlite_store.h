// The registry in one SQLite file (DATA/registry.sqlite3): the embedded default of `kiln serve`.
#pragma once

#include <filesystem>
#include <memory>

#include "serve/registry_store.h"

namespace kiln::serve {

// Opens (creating it and its tables when missing) the registry at `file`. Fails (kBadInput)
// naming the file when SQLite cannot open it or it is not a registry. Safe to use from several
// threads; several processes may share the file (WAL journal, a 5 s busy timeout).
std::unique_ptr<RegistryStore> open_sqlite_store(const std::filesystem::path& file);
// Makes DIR when missing; fails (kBadInput) naming it when it is not a folder or cannot be made.
std::filesystem::path make_data_dir(const std::filesystem::path& dir);
// The registry of a data folder (`kiln serve --data DIR`): DIR/registry.sqlite3, DIR made when
// missing. Fails (kBadInput) naming DIR when it is not a folder or cannot be made.
std::unique_ptr<RegistryStore> open_data_registry(const std::filesystem::path& dir);

}  // namespace kiln::serve
