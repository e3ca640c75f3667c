#include "app/recent_files.h"

namespace tuneup::gui {

namespace {
const QString kKey = QStringLiteral("recentFiles");
}

QStringList withRecent(QStringList list, const QString& entry, int max) {
    list.removeAll(entry);
    list.prepend(entry);
    while (list.size() > max)
        list.removeLast();
    return list;
}

QStringList recentFiles(QSettings& settings) {
    return settings.value(kKey).toStringList();
}

void addRecentFile(QSettings& settings, const QString& entry) {
    settings.setValue(kKey, withRecent(recentFiles(settings), entry));
}

void clearRecentFiles(QSettings& settings) {
    settings.remove(kKey);
}

} // namespace tuneup::gui
