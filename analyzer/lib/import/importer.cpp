#include "import/importer.h"

#include "import/format_detect.h"
#include "import/import_error.h"
#include "import/kineto_json.h"
#include "import/nsys_db.h"
#include "import/nsys_sqlite.h"
#include "import/tuneup_import.h"

#include <sys/stat.h>

namespace tuneup::analysis {

TraceModel importTrace(const std::string& path, const ImportOptions& options) {
    switch (detectFileFormat(path)) {
    case TraceFileFormat::TuneupDb:
        return importTuneupFile(path);
    case TraceFileFormat::KinetoJson: {
        KinetoImportOptions kineto;
        kineto.progress = options.progress;
        return importKinetoJson(path, kineto);
    }
    case TraceFileFormat::NsysSqlite: {
        // Any other SQLite file. A recording killed early may have its header only in its -wal: the tuneup
        // reader knows those, and what to say about a foreign database. Else an Nsight Systems export by
        // its tables (isNsysExport describes a file SQLite cannot read).
        struct stat st { };
        if (stat((path + "-wal").c_str(), &st) != 0 && isNsysExport(path)) {
            NsysImportOptions nsys;
            nsys.progress = options.progress;
            return importNsysSqlite(path, nsys);
        }
        return importTuneupFile(path);
    }
    case TraceFileFormat::JobSummary:
        throw ImportError(ImportError::Kind::UnknownFormat, path,
            "a job summary (tuneup advise --summary-out) holds findings and step times, not events: give it to "
            "`tuneup advise`, or give this command the trace files it was made from");
    case TraceFileFormat::Unknown:
        break;
    }
    throw ImportError(ImportError::Kind::UnknownFormat, path,
        "not a trace tuneup reads (expected a tuneup recording (.db), a PyTorch profiler / Kineto JSON "
        "trace (.json, .json.gz) or an Nsight Systems SQLite export (.sqlite))");
}

} // namespace tuneup::analysis
