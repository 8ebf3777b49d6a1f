// Plain-text tables for the terminal: columns sized to their widest cell, numbers right-aligned.
#pragma once

#include <string>
#include <vector>

namespace kiln {

class TextTable {
 public:
  // `numeric[i]`: right-align column i.
  TextTable(std::vector<std::string> header, std::vector<bool> numeric);
  void add(std::vector<std::string> row);
  std::string str() const;  // header, a rule, the rows; each line ends with '\n'

 private:
  std::vector<std::string> header_;
  std::vector<bool> numeric_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace kiln
