#pragma once
// Runs `ENV tuneup record -o DB -- COMMAND > OUT 2> ERR` through the shell, as a user would; the exit code of
// the command (tuneup record passes it on), -1 when it did not exit.

#include <cstdlib>
#include <string>
#include <sys/wait.h>

namespace tuneup::test {

inline int tuneupRecord(const std::string& tuneup, const std::string& db, const std::string& command,
    const std::string& out, const std::string& err, const std::string& env = "") {
    const std::string line = env + " " + tuneup + " record -o " + db + " -- " + command + " > " + out + " 2> " + err;
    const int status = std::system(line.c_str());
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

} // namespace tuneup::test
