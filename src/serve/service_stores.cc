#include "serve/service_stores.h"

#include "serve/postgres_store.h"
#include "serve/sqlite_job_queue.h"
#include "serve/sqlite_store.h"
#include "support/error.h"

namespace kiln::serve {

ServiceStores open_stores(const StoreOptions& o) {
  KILN_CHECK(o.db.empty() || is_postgres_url(o.db), ErrorKind::kBadInput,
             "--db '{}': expected postgresql://[USER[:PASSWORD]@][HOST][:PORT]/DB[?host=SOCKET_DIR] (without --db, "
             "the registry is DATA/registry.sqlite3)",
             o.db.substr(0, 200));
  ServiceStores s;
  s.db = o.db;
  s.data = make_data_dir(o.data);
  s.registry = o.db.empty() ? open_data_registry(s.data) : open_postgres_store(o.db);
  s.content = open_folder_store(s.data);
  s.empty_dir = empty_model_dir(s.data);
  s.cache_dir = s.data / "cache";
  return s;
}

std::unique_ptr<JobQueue> ServiceStores::open_queue() const {
  return db.empty() ? open_sqlite_job_queue(data / "registry.sqlite3") : open_postgres_job_queue(db);
}

}  // namespace kiln::serve
