// kiln token create --data DIR --scope read|write|admin: prints a new token; the registry in DIR
// keeps only its sha256 and scope.
#include "cli/token_command.h"

#include <iostream>
#include <memory>
#include <string>

#include "serve/sqlite_store.h"
#include "serve/tokens.h"
#include "support/error.h"

namespace kiln::cli {

Action add_token(CLI::App& app) {
  app.require_subcommand(1);
  CLI::App* create = app.add_subcommand("create", "Make an access token; prints it (the one time it is shown)");
  auto data = std::make_shared<std::string>();
  auto scope = std::make_shared<std::string>();
  create->add_option("--data", *data, "kiln serve's data folder (made when missing)")->required();
  create->add_option("--scope", *scope, "read, write (also read) or admin (everything)")
      ->required()
      ->check(CLI::IsMember({"read", "write", "admin"}));
  return [=]() {
    auto store = serve::open_data_registry(*data);
    const std::string token = serve::create_token(*store, *serve::parse_scope(*scope));
    std::cout << token << "\n";
    std::cerr << "kiln: a " << *scope << " token; " << *data
              << "/registry.sqlite3 keeps only its sha256, so keep it now\n";
    return 0;
  };
}

}  // namespace kiln::cli
