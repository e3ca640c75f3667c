#pragma once
// Sets environment variables for one test and restores them after it.

#include <cstdlib>
#include <map>
#include <optional>
#include <string>

namespace tuneup::test {

class EnvGuard {
public:
    ~EnvGuard() {
        for (auto& [name, value] : m_saved) {
            if (value)
                setenv(name.c_str(), value->c_str(), 1);
            else
                unsetenv(name.c_str());
        }
    }
    void set(const std::string& name, const std::string& value) {
        save(name);
        setenv(name.c_str(), value.c_str(), 1);
    }
    void unset(const std::string& name) {
        save(name);
        unsetenv(name.c_str());
    }

private:
    void save(const std::string& name) {
        if (m_saved.count(name)) return;
        const char* value = getenv(name.c_str());
        m_saved[name] = value ? std::optional<std::string>(value) : std::nullopt;
    }
    std::map<std::string, std::optional<std::string>> m_saved;
};

} // namespace tuneup::test
