#include "process_role.h"

#include <array>
#include <utility>

namespace tuneup {

namespace {

struct RoleNames {
    ProcessRole role;
    std::string_view name, label;
};

constexpr std::array<RoleNames, 6> kRoles { {
    { ProcessRole::Main, "main", "main process" },
    { ProcessRole::Rank, "rank", "rank" },
    { ProcessRole::DataLoaderWorker, "dataloader-worker", "DataLoader worker" },
    { ProcessRole::Launcher, "launcher", "launcher" },
    { ProcessRole::ForkedChild, "forked-child", "forked child" },
    { ProcessRole::Other, "other", "other process" },
} };

const RoleNames& namesOf(ProcessRole role) {
    for (const RoleNames& r : kRoles)
        if (r.role == role) return r;
    return kRoles.back();
}

} // namespace

std::string_view processRoleName(ProcessRole role) {
    return namesOf(role).name;
}

std::string_view processRoleLabel(ProcessRole role) {
    return namesOf(role).label;
}

std::optional<ProcessRole> parseProcessRole(std::string_view name) {
    for (const RoleNames& r : kRoles)
        if (r.name == name) return r.role;
    return std::nullopt;
}

} // namespace tuneup
