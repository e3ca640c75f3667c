#include "output_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <unistd.h>

namespace tuneup::cli {

namespace fs = std::filesystem;

std::string writeOutput(const std::string& path, const std::function<void(std::ostream&)>& write) {
    if (path.empty() || path == "-") {
        write(std::cout);
        std::cout.flush();
        // stdout may be a full disk or a closed pipe: fflush and the stream state say so.
        if (!std::cout || fflush(stdout) != 0) return std::string("cannot write to stdout: ") + strerror(errno);
        return {};
    }
    const std::string partial = path + ".partial";
    std::error_code ec;
    {
        std::ofstream file(partial, std::ios::binary | std::ios::trunc);
        if (!file) return "cannot write " + partial + ": " + strerror(errno);
        write(file);
        file.flush();
        const int error = errno;
        if (!file) {
            file.close();
            fs::remove(partial, ec);
            return "cannot write " + path + ": " + strerror(error) + " (disk full?)";
        }
        file.close();
        if (!file) {
            fs::remove(partial, ec);
            return "cannot write " + path + ": closing it failed (disk full?)";
        }
    }
    fs::rename(partial, path, ec);
    if (ec) {
        fs::remove(partial, ec);
        return "cannot write " + path + ": " + ec.message();
    }
    return {};
}

} // namespace tuneup::cli
