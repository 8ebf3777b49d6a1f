// kiln token create --data DIR --scope read|write|admin: prints a new token; the registry in DIR
// keeps only its sha256 and scope.
#include "cli/token_command.h"

#include <iostream>
#include <memory>
#include <string>

#include "serve/postgres_store.h"
#include "serve/sqlite_store.h"
#include "serve/tokens.h"
#include "support/error.h"

namespace kiln::cli {

Action add_token(CLI::App& app) {
  app.require_subcommand(1);
  CLI::App* create = app.add_subcommand("create", "Make an access token; prints it (the one time it is shown)");
  auto data = std::make_shared<std::string>();
  auto db = std::make_shared<std::string>();
  auto scope = std::make_shared<std::string>();
  create->add_option("--data", *data, "kiln serve's data folder (made when missing): its registry.sqlite3");
  create->add_option("--db", *db, "kiln serve's PostgreSQL database (postgresql://...) instead of --data");
  create->add_option("--scope", *scope, "read, write (also read) or admin (everything)")
      ->required()
      ->check(CLI::IsMember({"read", "write", "admin"}));
  return [=]() {
    KILN_CHECK(data->empty() != db->empty(), ErrorKind::kBadInput,
               "kiln token create needs one of --data DIR (the SQLite registry) or --db postgresql://...");
    KILN_CHECK(db->empty() || serve::is_postgres_url(*db), ErrorKind::kBadInput,
               "--db '{}': expected postgresql://...", db->substr(0, 200));
    auto store = db->empty() ? serve::open_data_registry(*data) : serve::open_postgres_store(*db);
    const std::string token = serve::create_token(*store, *serve::parse_scope(*scope));
    std::cout << token << "\n";
    std::cerr << "kiln: a " << *scope << " token; " << (db->empty() ? *data + "/registry.sqlite3" : "the database")
              << " keeps only its sha256, so keep it now\n";
    return 0;
  };
}

}  // namespace kiln::cli
