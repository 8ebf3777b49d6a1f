// kiln ci PIPELINE.json|yaml [--server URL] [--token-file FILE] [--promote] [--data DIR] [--report FILE]:
// compiles the pipeline's model for its targets (on a kiln serve, or here), verifies its accuracy,
// compares its latency with the version its alias points at (or a baseline file), prints the
// gate's table and exits 0 (passed; with --promote the alias moved), 1 (not passed) or 2 (bad input).
#include "cli/ci_command.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/serve_options.h"
#include "serve/ci_pipeline.h"
#include "support/error.h"
#include "support/read_file.h"

namespace kiln::cli {

namespace {

namespace fs = std::filesystem;

struct CiArgs {
  std::string pipeline, server, token_file, data, report;
  bool promote = false;
  int job_timeout_s = 900;
};

std::string token_of(const CiArgs& a, const serve::Pipeline& p) {
  if (!a.token_file.empty()) {
    std::string t = with_context("--token-file: ", [&] { return read_file(a.token_file, 4096); });
    t = t.substr(0, t.find('\n'));
    while (!t.empty() && (t.back() == '\r' || t.back() == ' ')) t.pop_back();
    return t;
  }
  const char* t = std::getenv(p.token_env.c_str());
  return t ? t : "";
}

int run(const CiArgs& a) {
  KILN_CHECK(!a.pipeline.empty(), ErrorKind::kBadInput, "kiln ci needs PIPELINE.json or PIPELINE.yaml");
  const serve::Pipeline p = serve::read_pipeline(a.pipeline);
  serve::CiOptions o{.server = a.server, .promote = a.promote, .report = a.report};
  o.token = token_of(a, p);
  const bool local = (a.server.empty() ? p.server : a.server).empty();
  KILN_CHECK(local || !o.token.empty(), ErrorKind::kBadInput,
             "kiln ci --server needs a token: --token-file FILE or ${} (kiln token create)", p.token_env);
  std::optional<fs::path> temporary;
  if (local) {
    ServeCommonArgs common;
    common.job_timeout_s = a.job_timeout_s;
    o.worker = worker_options(common);
    o.worker.name = "kiln-ci";
    if (a.data.empty()) {  // a registry of this run only
      temporary = fs::temp_directory_path() / fmt::format("kiln-ci-{}", ::getpid());
      o.data = *temporary;
    } else {
      o.data = a.data;
    }
  }
  int code = 1;
  try {
    code = serve::run_ci(p, o);
  } catch (...) {
    std::error_code ec;
    if (temporary) fs::remove_all(*temporary, ec);
    throw;
  }
  std::error_code ec;
  if (temporary) fs::remove_all(*temporary, ec);
  return code;
}

}  // namespace

Action add_ci(CLI::App& app) {
  auto a = std::make_shared<CiArgs>();
  app.add_option("pipeline", a->pipeline,
                 "The pipeline: a JSON file, or YAML when it ends in .yaml or .yml (docs/service.md)");
  app.add_option("--server", a->server, "http://HOST:PORT of a kiln serve (default: the pipeline's 'server', "
                                        "else the jobs run here)");
  app.add_option("--token-file", a->token_file,
                 "A file holding the token (default: the variable the pipeline's token_env names, KILN_TOKEN)");
  app.add_flag("--promote", a->promote, "When the gate passes, move the pipeline's alias to the new version");
  app.add_option("--data", a->data, "Local runs: keep the registry, jobs and compile cache in DIR (default: a "
                                    "temporary folder)");
  app.add_option("--report", a->report, "Write the gate's verdict here as JSON");
  app.add_option("--job-timeout", a->job_timeout_s, "Seconds a target's compile may take (default 900)")
      ->check(CLI::Range(1, 86400));
  return [a] { return run(*a); };
}

}  // namespace kiln::cli
