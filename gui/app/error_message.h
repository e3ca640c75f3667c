#pragma once
// What the error dialog says when a file cannot be opened: what is wrong, where, and what to do next.
// The importers' errors already name the file, the place and the problem; this adds the advice.

#include <QString>
#include <exception>
#include <string>
#include <vector>

namespace tuneup::gui {

struct ErrorMessage {
    QString title; // "Cannot open run.db"
    QString text; // the importer's message
    QString advice; // what to do next
};

// From the exception in flight (call inside a catch block); `files` are the files being opened.
ErrorMessage describeCurrentException(const std::vector<std::string>& files);

} // namespace tuneup::gui
