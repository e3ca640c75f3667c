#pragma once
// The recent-files list kept in QSettings: the newest first, each file once, at most kMaxRecent.

#include <QSettings>
#include <QStringList>

namespace tuneup::gui {

inline constexpr int kMaxRecent = 10;

// `list` with `entry` moved (or added) to the front and cut to `max` entries. An entry is one file, or
// several files opened together joined by '\n'.
QStringList withRecent(QStringList list, const QString& entry, int max = kMaxRecent);

QStringList recentFiles(QSettings& settings);
void addRecentFile(QSettings& settings, const QString& entry);
void clearRecentFiles(QSettings& settings);

} // namespace tuneup::gui
