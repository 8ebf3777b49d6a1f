// How the profile reports write numbers and operands: "12.3 ms", "41.2%", "3.1 G", "float[1,64]".
#pragma once

#include <string>
#include <vector>

#include "ops/cost.h"

namespace kiln {

std::string format_ms(double ms);            // "0.042 ms", "12.3 ms", "1234 ms"
std::string format_percent(double share);    // 0.412 -> "41.2%"
std::string format_count(double x);          // 3.1e9 -> "3.10 G"
std::string format_rate(double per_second);  // a GFLOP/s or GB/s figure: "0.12", "41.2", "1234"
// "float[1,3,224,224]"; "seq" for a sequence; "-" for an absent operand.
std::string format_operand(const OperandShape& s);
// The present operands, comma-separated.
std::string format_operands(const std::vector<OperandShape>& operands);

}  // namespace kiln
