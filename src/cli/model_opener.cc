#include "cli/model_opener.h"

#include "artifact/load/artifact.h"
#include "artifact/placement.h"
#include "frontend/runners.h"

namespace kiln::cli {

std::unique_ptr<engine::ModelRunner> open_runner(const std::string& path, engine::EngineKind kind,
                                                 const engine::EngineOptions& opts) {
  if (artifact::is_artifact_file(path))
    return artifact::open_artifact_runner(path, kind, opts, artifact::artifact_placement);
  return frontend::open_model(path, kind, opts);
}

}  // namespace kiln::cli
