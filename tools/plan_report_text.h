// `evenfeed plan`'s report as text: what was planned and how its settings were chosen,
// one line each, then our figures beside the baselines', a row per figure. The JSON
// report (run_plan_report, plan_report.h) holds every figure; this only lays it out.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace evenfeed::cli {

std::string plan_report_text(const nlohmann::json& report);

}  // namespace evenfeed::cli
