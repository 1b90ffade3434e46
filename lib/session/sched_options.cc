#include "session/sched_options.h"

#include <iterator>
#include <string>
#include <string_view>

#include "base/option_values.h"

namespace gpuprobe::session {
namespace {

Status apply_sched(std::string_view v, SchedOptions& c) {
  std::int64_t period = 0;
  if (v == "off" || v == "0") {
    c.period_ns = 0;
    return {};
  }
  if (!base::parse_duration(v, 1'000'000, &period) || period < 1'000'000 || period > 1'000'000'000)
    return base::bad_value("sched", v, "a period from 1ms to 1s (e.g. 2ms), or off");
  c.period_ns = period;
  return {};
}

constexpr base::OptionSpec<SchedOptions> kOptions[] = {
    {"sched", "PERIOD|off",
     [](const SchedOptions& c) {
       return c.period_ns ? std::to_string(c.period_ns / 1'000'000) + "ms" : std::string("off");
     },
     "sample every thread's scheduler statistics (time on a CPU, time waiting for one) this "
     "often, as counters \"sched running ns (tid N)\" and \"sched waiting ns (tid N)\", so "
     "that the report tells a slow request's running from its waiting for a CPU and from its "
     "being blocked (a lock, I/O, sleep), and names what ran meanwhile",
     apply_sched},
};

}  // namespace

const base::OptionTable<SchedOptions>& sched_options() {
  static constexpr base::OptionTable<SchedOptions> kTable{kOptions, std::size(kOptions)};
  return kTable;
}

}  // namespace gpuprobe::session
