#include "app/error_message.h"

#include "advise/sql_rule.h"
#include "import/import_error.h"
#include "import/tuneup_file.h"

#include <QFileInfo>
#include <new>

namespace tuneup::gui {

using analysis::ImportError;
using analysis::TuneupFileError;

namespace {

QString fileName(const std::string& path) {
    return QFileInfo(QString::fromStdString(path)).fileName();
}

QString importAdvice(ImportError::Kind kind) {
    switch (kind) {
    case ImportError::Kind::NotFound:
        return QStringLiteral("Check the path; the file may have been moved or deleted.");
    case ImportError::Kind::Unreadable:
        return QStringLiteral("Check that it is a file and that you may read it.");
    case ImportError::Kind::Empty:
        return QStringLiteral("The recording or the profiler wrote nothing: record again, and let the program "
                              "finish (or stop it with Ctrl+C, not kill -9).");
    case ImportError::Kind::UnknownFormat:
        return QStringLiteral(
            "tuneup-gui opens tuneup recordings (.db, from `tuneup record`), PyTorch profiler "
            "/ Kineto traces (.json, .json.gz) and Nsight Systems exports (nsys export --type sqlite).");
    case ImportError::Kind::NotATrace:
        return QStringLiteral("The file is valid but holds no trace events: export the trace with "
                              "torch.profiler's export_chrome_trace or on_trace_ready=tensorboard_trace_handler.");
    case ImportError::Kind::Malformed:
        return QStringLiteral("The JSON is damaged at that place: a partial write or a hand edit. Record or export "
                              "it again.");
    case ImportError::Kind::Truncated:
        return QStringLiteral("The file ends early: a copy or download was cut, or the profiler was stopped while "
                              "writing. Copy or record it again.");
    case ImportError::Kind::Corrupt:
        return QStringLiteral("The compressed data is damaged: copy the file again.");
    }
    return {};
}

QString tuneupAdvice(TuneupFileError::Kind kind) {
    switch (kind) {
    case TuneupFileError::Kind::NewerSchema:
        return QStringLiteral("The file was written by a newer tuneup: update tuneup-gui.");
    case TuneupFileError::Kind::Foreign:
    case TuneupFileError::Kind::NotSqlite:
        return QStringLiteral("This SQLite file is not a tuneup recording.");
    case TuneupFileError::Kind::Corrupt:
        return QStringLiteral("The database is damaged; if the run was killed, the WAL file beside it (-wal) may "
                              "still hold the data: keep it next to the .db and open again.");
    default:
        return QStringLiteral("Check the path and that you may read the file.");
    }
}

} // namespace

ErrorMessage describeCurrentException(const std::vector<std::string>& files) {
    ErrorMessage out;
    const QString which = files.size() == 1 ? fileName(files.front()) : QStringLiteral("%1 files").arg(files.size());
    out.title = QStringLiteral("Cannot open %1").arg(which);
    try {
        throw;
    } catch (const ImportError& e) {
        if (!e.path().empty()) out.title = QStringLiteral("Cannot open %1").arg(fileName(e.path()));
        out.text = QString::fromStdString(e.what());
        out.advice = importAdvice(e.kind());
    } catch (const TuneupFileError& e) {
        out.text = QString::fromStdString(e.what());
        out.advice = tuneupAdvice(e.kind());
    } catch (const analysis::SqlRuleError& e) {
        out.title = QStringLiteral("Cannot load the user rules");
        out.text = QString::fromStdString(e.what());
        out.advice = QStringLiteral("Fix the rule file named above (see docs/user-rules.md), or open without --rules.");
    } catch (const std::bad_alloc&) {
        out.text = QStringLiteral("Not enough memory to load the trace.");
        out.advice = QStringLiteral("Close other files, or record fewer steps.");
    } catch (const std::exception& e) {
        out.text = QString::fromStdString(e.what());
        out.advice = QStringLiteral("If the file opens with `tuneup advise`, please report this as a bug.");
    } catch (...) {
        out.text = QStringLiteral("An unknown error occurred while loading.");
        out.advice = QStringLiteral("Please report this as a bug, with the file if you can.");
    }
    return out;
}

} // namespace tuneup::gui
