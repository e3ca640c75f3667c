#include "import/importer.h"

#include "import/import_error.h"
#include "import/kineto_json.h"
#include "import/nsys_db.h"
#include "import/nsys_sqlite.h"
#include "import/stream_input.h"
#include "import/tuneup_import.h"

#include <sys/stat.h>

namespace tuneup::analysis {

namespace {

TraceModel importTuneup(const std::string& path, const ImportOptions&) {
    return importTuneupFile(path);
}

TraceModel importKineto(const std::string& path, const ImportOptions& options) {
    KinetoImportOptions kineto;
    kineto.progress = options.progress;
    return importKinetoJson(path, kineto);
}

// Any SQLite file that is not tuneup's by its header. A recording killed early may have its header only
// in its -wal: the tuneup reader knows those, and what to say about a foreign database. Else an Nsight
// Systems export by its tables (isNsysExport describes a file SQLite cannot read).
TraceModel importOtherSqlite(const std::string& path, const ImportOptions& options) {
    struct stat st { };
    if (stat((path + "-wal").c_str(), &st) != 0 && isNsysExport(path)) {
        NsysImportOptions nsys;
        nsys.progress = options.progress;
        return importNsysSqlite(path, nsys);
    }
    return importTuneupFile(path);
}

} // namespace

const std::vector<TraceImporter>& traceImporters() {
    static const std::vector<TraceImporter> importers {
        { TraceFileFormat::TuneupDb, "a tuneup recording (.db)", true, importTuneup },
        { TraceFileFormat::KinetoJson, "a PyTorch profiler / Kineto JSON trace (.json, .json.gz)", false,
            importKineto },
        { TraceFileFormat::NsysSqlite, "an Nsight Systems SQLite export (.sqlite)", true, importOtherSqlite },
    };
    return importers;
}

TraceModel importTrace(const std::string& path, const ImportOptions& options) {
    const TraceFileFormat format = detectFileFormat(path);
    if (format == TraceFileFormat::JobSummary)
        throw ImportError(ImportError::Kind::UnknownFormat, path,
            "a job summary (tuneup advise --summary-out) holds findings and step times, not events: give it to "
            "`tuneup advise`, or give this command the trace files it was made from");
    for (const TraceImporter& importer : traceImporters())
        if (importer.format == format) {
            if (importer.sqlite && isReadOnceInput(path))
                throw ImportError(ImportError::Kind::Unreadable, path,
                    "an SQLite database (a tuneup recording or an Nsight Systems export) arrives here through a "
                    "pipe or standard input, and SQLite reads only files: save it to a file first (e.g. `... > "
                    "run.db`) and give that file");
            return importer.import(path, options);
        }
    std::string expected;
    const auto& importers = traceImporters();
    for (size_t i = 0; i < importers.size(); ++i) {
        if (i > 0) expected += i + 1 == importers.size() ? " or " : ", ";
        expected += importers[i].description;
    }
    throw ImportError(ImportError::Kind::UnknownFormat, path, "not a trace tuneup reads (expected " + expected + ")");
}

} // namespace tuneup::analysis
