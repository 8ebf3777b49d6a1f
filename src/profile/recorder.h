// The observer a profile runs with: records every node executed in each measured run.
#pragma once

#include <unordered_map>
#include <vector>

#include "profile/profile_data.h"
#include "runtime/observer.h"

namespace kiln {

class ProfileRecorder : public RunObserver {
 public:
  explicit ProfileRecorder(ProfileData& data) : data_(data) {}

  // Brackets one measured run; nodes heard in between belong to it.
  void begin_run();
  void end_run();
  void on_node(const NodeEvent& e) override;

 private:
  // The index in data_.nodes of the entry matching e, adding one when new.
  int node_index(const NodeEvent& e);

  ProfileData& data_;
  TimeSpan current_;
  bool in_run_ = false;
  std::unordered_map<const Node*, std::vector<int>> by_node_;  // node -> its entries
  std::vector<std::vector<OperandShape>> reported_inputs_;     // per entry, as its step gave them
};

}  // namespace kiln
