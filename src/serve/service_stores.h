// What a server or a worker keeps its state in, from `--db` and `--data`: the registry, the job
// queue and the content store (models and artifacts), and the compile cache.
//   no --db:                     DATA/registry.sqlite3 (registry and jobs), DATA/blobs
//   --db postgresql://...:       the registry and the jobs in PostgreSQL, DATA/blobs (a folder all
//                                the machines share, e.g. over NFS, until an object store is written)
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "serve/content_store.h"
#include "serve/job_queue.h"
#include "serve/registry_store.h"

namespace kiln::serve {

struct StoreOptions {
  std::string db;                  // empty: SQLite in data
  std::filesystem::path data;
};

struct ServiceStores {
  std::unique_ptr<RegistryStore> registry;
  std::unique_ptr<ContentStore> content;
  std::filesystem::path data, empty_dir, cache_dir;  // cache_dir: DATA/cache, the compile cache
  // A new job queue connection (each worker thread and the server take their own).
  std::unique_ptr<JobQueue> open_queue() const;
  std::string db;
};

// Fails (kBadInput) naming --db or --data when they cannot be opened.
ServiceStores open_stores(const StoreOptions& o);

}  // namespace kiln::serve
