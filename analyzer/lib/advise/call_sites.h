#pragma once
// Which line of the user's Python code a finding comes from. For each event of a finding's evidence, the
// innermost Python frame around it on its thread (Kineto's python_function events, recorded with
// with_stack=True; in tuneup recordings, the frames of the calls the Python bootstrap watches) that is the
// user's: not PyTorch (torch, torchvision, torchaudio, functorch, triton), not Python's standard library, not a
// built-in. Traces without Python stacks give no sites. And where the main thread's Python was, sampled.

#include "advise/finding.h"
#include "model/trace_model.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tuneup::analysis {

// "transformers/models/bert/modeling_bert.py(412): forward" -> file, line, function; nullopt for built-ins
// ("<built-in method ...>") and names of another form.
struct PythonFrame {
    std::string_view file;
    int64_t line = 0;
    std::string_view function;
};
std::optional<PythonFrame> parsePythonFrame(std::string_view name);
// A frame in the user's code: not PyTorch's, the standard library's ("inspect.py", "<frozen os>",
// "/usr/lib/python3.11/...") or a built-in.
bool isUserFrame(std::string_view file);

class CallSites {
public:
    explicit CallSites(const TraceModel& model);
    // The user frames behind `evidence`'s events, the most events first (at most `limit`); empty without
    // Python stacks.
    std::vector<SourceSite> of(const Evidence& evidence, size_t limit = 5) const;
    // The lines the watched Python calls named `calls` were made from (tuneup recordings), the most calls
    // first.
    std::vector<SourceSite> ofCalls(const std::vector<std::string>& calls, size_t limit = 5) const;

private:
    struct Frame {
        int64_t startNs, endNs;
        RowIndex row; // in model.pythonFunctions
    };
    // Where and when an event was issued on the host: its thread and start (kernels and copies: their
    // launching op or call's).
    std::optional<std::pair<ThreadIndex, int64_t>> issuedAt(const EventRef& event) const;
    RowIndex innermostUserFrame(ThreadIndex thread, int64_t timeNs) const;

    const TraceModel& m_model;
    std::vector<std::vector<Frame>> m_framesByThread; // user frames, by start
};

// Where the main thread's code was during `spans` (tuneup recordings only: the bootstrap's samples of its Python
// stack, or the agent's of a native program's stack): the user's frames, the most samples first (at most `limit`,
// `sampled` set), each with its share of the samples that fell in the spans. Empty without samples there.
struct SampledSites {
    std::vector<SourceSite> sites;
    size_t samples = 0; // in the spans, with a user frame
};
SampledSites sampledSites(const TraceModel& model, std::vector<TimeSpan> spans, size_t limit = 5);
// "41% data/augment.py:88 in resize; 20% train.py:57 in train_step" (the first `shown`); "" without samples.
std::string describeSampledSites(const SampledSites& sampled, size_t shown = 3);

} // namespace tuneup::analysis
