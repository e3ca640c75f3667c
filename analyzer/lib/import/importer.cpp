#include "import/importer.h"

#include "import/format_detect.h"
#include "import/import_error.h"
#include "import/kineto_json.h"
#include "import/tuneup_import.h"

namespace tuneup::analysis {

TraceModel importTrace(const std::string& path, const ImportOptions& options)
{
    switch (detectFileFormat(path)) {
    case TraceFileFormat::TuneupDb:
        return importTuneupFile(path);
    case TraceFileFormat::KinetoJson: {
        KinetoImportOptions kineto;
        kineto.progress = options.progress;
        return importKinetoJson(path, kineto);
    }
    case TraceFileFormat::NsysSqlite:
        // A foreign SQLite file, or an Nsight Systems export (read by a later version).
        return importTuneupFile(path);
    case TraceFileFormat::Unknown:
        break;
    }
    throw ImportError(ImportError::Kind::UnknownFormat, path,
        "not a trace tuneup reads (expected a tuneup recording (.db) or a PyTorch profiler / Kineto JSON "
        "trace (.json, .json.gz))");
}

} // namespace tuneup::analysis
