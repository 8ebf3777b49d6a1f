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

}  // namespace kiln::serve
