// gpuprobe.Session. Config mistakes raise ValueError and print nothing (the exception says it
// all); an output that cannot be opened raises RuntimeError. A Session made while another
// session records (the GPUPROBE variable's, or one the program made earlier) stands down
// instead of raising: the program's ranges are recorded by the session recording (rings are
// process-wide), its outputs get them, and this Session's own outputs are never written. It
// says so in one line on stderr; its stop() leaves the recording session alone.
#include "session_binding.h"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>

#include "gpuprobe/session.hpp"

namespace py = pybind11;

namespace gpuprobe::python {
namespace {

// The C++ messages name the C++ help; from Python the help is gpuprobe.help().
std::string for_python(std::string message) {
  static const std::string kCpp = "gpuprobe::Session::help()";
  for (std::size_t at = message.find(kCpp); at != std::string::npos; at = message.find(kCpp, at)) {
    message.replace(at, kCpp.size(), "gpuprobe.help()");
  }
  return message;
}

py::dict stats_dict(const Stats& s) {
  py::dict d;
  d["written"] = s.written;
  d["dropped"] = s.dropped;
  d["dropped_no_ring"] = s.dropped_no_ring;
  d["ring_capacity"] = s.ring_capacity;
  d["names_overflowed"] = s.names_overflowed;
  py::list threads;
  for (const ThreadInfo& t : s.threads) {
    py::dict td;
    td["tid"] = t.os_tid;
    td["name"] = t.name;
    td["written"] = t.written;
    td["dropped"] = t.dropped;
    td["peak_fill"] = t.peak_fill;
    threads.append(td);
  }
  d["threads"] = threads;
  py::dict gpu;
  gpu["status"] = s.gpu.status;
  gpu["records"] = s.gpu.records;
  gpu["dropped"] = s.gpu.dropped;  // records lost: the one loss figure (see GpuStats)
  gpu["buffers_exhausted"] = s.gpu.buffers_exhausted;
  gpu["filtered"] = s.gpu.filtered;
  gpu["starts_before_launch"] = s.gpu.starts_before_launch;
  gpu["attributed"] = s.gpu.attributed;
  gpu["unattributed"] = s.gpu.unattributed;
  gpu["untimed"] = s.gpu.untimed;
  gpu["sampled"] = s.gpu.sampled;
  gpu["bursts"] = s.gpu.bursts;
  gpu["recorded_ns"] = s.gpu.recorded_ns;
  d["gpu"] = gpu;
  return d;
}

// The recording session, and its stats, are read under gpuprobe's session lock, which a stop on
// another thread holds while its outputs may call into Python: read without the GIL.
RecordingSession recording_now() {
  py::gil_scoped_release release;
  return recording_session();
}

Stats stats_of(std::uint64_t id) {
  py::gil_scoped_release release;
  return recording_session_stats(id);
}

// Says that a Session stands down, once per recording session: a schedule's windows
// (gpuprobe.profile), each a Session of its own, say it once, not once per window.
void say_standing_down(const std::string& config, const RecordingSession& host) {
  static std::mutex mu;
  static std::set<std::uint64_t> said;
  {
    std::lock_guard<std::mutex> lock(mu);
    if (!said.insert(host.id).second) return;
  }
  std::fprintf(stderr,
               "gpuprobe: Session(\"%s\") stands down, its outputs will not be written: "
               "another session records (%s) and gets its ranges\n",
               config.c_str(), describe(host).c_str());
}

// A gpuprobe.Session: a C++ Session of its own, or, standing down, a view of the recording
// session it found (host_).
class PySession {
 public:
  explicit PySession(const std::string& config) {
    if (const Status s = Session::check(config); !s.ok())
      throw py::value_error(for_python(s.message()));
    host_ = recording_now();
    if (host_.id != 0) {
      say_standing_down(config, host_);
      return;
    }
    own_ = std::make_unique<Session>(config);
    if (own_->ok()) return;
    // Another session began between the look and the start (another thread's): stand down for
    // it too; its C++ error has said so on stderr.
    host_ = recording_now();
    if (host_.id != 0) {
      own_.reset();
      return;
    }
    throw std::runtime_error(for_python(own_->error()));
  }

  bool running() const {
    if (own_) return own_->running();
    return !stopped_ && recording_now().id == host_.id;
  }

  // A stop drains the rings, writes the outputs and joins gpuprobe's threads: other Python
  // threads (a server's request handlers) run meanwhile. A Session standing down stops nothing.
  void stop() {
    if (!own_) {
      if (stopped_) return;
      stopped_ = true;
      final_ = stats_of(host_.id);  // assigned with the GIL held again, as stats() reads it
      return;
    }
    Status st;
    {
      py::gil_scoped_release release;
      st = own_->stop();
    }
    if (!st.ok()) throw std::runtime_error(for_python(st.message()));
  }

  void flush() {
    if (!own_ && stopped_) return;
    Session* own = own_.get();
    const std::uint64_t host = host_.id;
    py::gil_scoped_release release;  // the outputs may call back into Python
    if (own != nullptr) {
      own->flush();
    } else {
      flush_recording_session(host);
    }
  }

  py::dict stats() const {
    if (own_) return stats_dict(own_->stats());
    return stats_dict(stopped_ ? final_ : stats_of(host_.id));
  }

  py::object records_into() const {
    if (own_) return py::none();
    return py::str(describe(host_));
  }

 private:
  std::unique_ptr<Session> own_;  // null while standing down
  RecordingSession host_;         // standing down: the session recording when this was made
  bool stopped_ = false;          // standing down: stop() was called
  Stats final_;                   // standing down: the host's stats when stop() was called
};

}  // namespace

void add_session(py::module_& m) {
  py::class_<PySession>(
      m, "Session",
      "A recording session configured by a string, e.g. "
      "'chrome=trace.json,perfetto=trace.pftrace'. Made while another session records, it "
      "stands down: that session records its ranges, and its own outputs are not written.")
      .def(py::init<const std::string&>(), py::arg("config"))
      .def(
          "__enter__", [](PySession& s) -> PySession& { return s; },
          py::return_value_policy::reference)
      .def("__exit__",
           [](PySession& s, py::args) {
             s.stop();
             return false;
           })
      .def_property_readonly("running", &PySession::running,
                             "True while recording (standing down: while the session it "
                             "records into does, until stop()).")
      .def_property_readonly("records_into", &PySession::records_into,
                             "None, or for a Session standing down the session that records "
                             "its ranges, described.")
      .def("stop", &PySession::stop,
           "Stops recording and writes the outputs; raises RuntimeError if an output failed. "
           "Standing down: stops nothing.")
      .def("flush", &PySession::flush, "Hands what was recorded so far to the outputs.")
      .def("stats", &PySession::stats,
           "Written and dropped events, per thread too (standing down: the recording "
           "session's).")
      .def_static("help", &Session::help, "The config keys, generated from the option table.")
      .def_static(
          "check",
          [](const std::string& config) {
            const Status s = Session::check(config);
            return s.ok() ? std::string() : for_python(s.message());
          },
          py::arg("config"),
          "Checks a config without starting anything: '' when valid, else the one-line error.");
}

}  // namespace gpuprobe::python
