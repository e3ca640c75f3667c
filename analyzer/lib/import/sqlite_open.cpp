#include "import/sqlite_open.h"

#include <cctype>
#include <cstring>
#include <filesystem>

namespace tuneup::analysis {

std::string sqliteReadUri(const std::string& path, bool immutable) {
    static const char* kHex = "0123456789ABCDEF";
    std::string absolute = path;
    std::error_code ec;
    if (auto p = std::filesystem::absolute(path, ec); !ec) absolute = p.lexically_normal().string();
    std::string uri = "file:";
    for (unsigned char c : absolute) {
        if (std::isalnum(c) || std::strchr("/-._~", c)) {
            uri += char(c);
        } else {
            uri += '%';
            uri += kHex[c >> 4];
            uri += kHex[c & 15];
        }
    }
    return uri + (immutable ? "?immutable=1" : "?mode=ro");
}

int openSqliteForReading(const std::string& path, bool immutable, sqlite3** db) {
    const int rc = sqlite3_open_v2(sqliteReadUri(path, immutable).c_str(), db,
        SQLITE_OPEN_READONLY | SQLITE_OPEN_URI | SQLITE_OPEN_NOMUTEX, nullptr);
    if (rc != SQLITE_OK || !*db) return rc;
    sqlite3_extended_result_codes(*db, 1);
    sqlite3_db_config(*db, SQLITE_DBCONFIG_DEFENSIVE, 1, nullptr);
    sqlite3_db_config(*db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, nullptr);
    sqlite3_exec(*db, "PRAGMA cell_size_check=ON", nullptr, nullptr, nullptr);
    return rc;
}

} // namespace tuneup::analysis
