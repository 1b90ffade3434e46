// dump.json, the description the flight recorder writes beside each dump's traces
// (flight/dump_writer.cc, flight/triggers.cc for a trigger's values) and `gpuprobe report DIR`
// reads (tools/flight_dump.cc): one vocabulary, compiled by writer and reader alike (the README's
// flight recorder section says what the file holds).
#pragma once

namespace gpuprobe::formats::dump_description {

inline constexpr char kFileName[] = "dump.json";
inline constexpr char kFormatName[] = "gpuprobe-dump";  // the value of kFormat
inline constexpr int kFormatVersionNumber = 1;          // the value of kFormatVersion

// Top-level members, in the order written.
inline constexpr char kFormat[] = "format";
inline constexpr char kFormatVersion[] = "format_version";
inline constexpr char kGpuprobeVersion[] = "gpuprobe_version";
inline constexpr char kName[] = "name";
inline constexpr char kSource[] = "source";    // "trigger", "signal", "api", ...
inline constexpr char kReason[] = "reason";    // printable text
inline constexpr char kTrigger[] = "trigger";  // the trigger's spec, when the source is one
inline constexpr char kValues[] = "values";    // what the trigger saw: name -> number
inline constexpr char kTriggerTimeNs[] = "trigger_time_ns";
inline constexpr char kWindow[] = "window";  // the span the traces hold (members below)
inline constexpr char kHost[] = "host";
inline constexpr char kPid[] = "pid";
inline constexpr char kProcessName[] = "process_name";
inline constexpr char kRank[] = "rank";
inline constexpr char kWorldSize[] = "world_size";
inline constexpr char kConfig[] = "config";
inline constexpr char kClock[] = "clock";
inline constexpr char kNsPerTick[] = "ns_per_tick";
inline constexpr char kSessionStartNs[] = "session_start_ns";
inline constexpr char kEvents[] = "events";
inline constexpr char kGpuEvents[] = "gpu_events";
inline constexpr char kGpuRecording[] = "gpu_recording";  // members below
inline constexpr char kThreads[] = "threads";             // [{tid, name, events, ...}]
inline constexpr char kDrops[] = "drops";                 // members below
inline constexpr char kGpuStatus[] = "gpu_status";
inline constexpr char kFiles[] = "files";    // the traces written, relative to the dump
inline constexpr char kErrors[] = "errors";  // "output: error" of each output that failed

// kWindow's members.
inline constexpr char kFromNs[] = "from_ns";
inline constexpr char kToNs[] = "to_ns";
inline constexpr char kBeforeS[] = "before_s";
inline constexpr char kAfterS[] = "after_s";
inline constexpr char kAfterCutShort[] = "after_cut_short";

// kGpuRecording's members: whether GPU activity covers the whole window or bursts of it
// (gpu_burst=), the bursts ({kFromNs, kToNs} each) and their total.
inline constexpr char kSampled[] = "sampled";
inline constexpr char kRecorded[] = "recorded";
inline constexpr char kRecordedS[] = "recorded_s";

// A kThreads entry's members besides kName and kEvents.
inline constexpr char kTid[] = "tid";
inline constexpr char kFirstNs[] = "first_ns";
inline constexpr char kLastNs[] = "last_ns";
inline constexpr char kDropped[] = "dropped";

// kDrops's members.
inline constexpr char kEventsDropped[] = "events_dropped";
inline constexpr char kEventsDroppedNoRing[] = "events_dropped_no_ring";
inline constexpr char kGpuDropped[] = "gpu_dropped";
inline constexpr char kOverwrittenByAge[] = "flight_overwritten_by_age";
inline constexpr char kOverwrittenByMemory[] = "flight_overwritten_by_memory";

// kValues's members a trigger writes (flight/triggers.cc) and the report reads.
inline constexpr char kDurationMs[] = "duration_ms";
inline constexpr char kThresholdMs[] = "threshold_ms";
inline constexpr char kWindowS[] = "window_s";

}  // namespace gpuprobe::formats::dump_description
