#pragma once
// Libraries stay mapped while the native stack sampler reads their unwind tables in place. The agent's dlclose
// (dlclose_interposer.cpp, where the agent is LD_PRELOADed) holds this lock around the real one; the sampler holds
// it while it reads the list of loaded modules and unwinds, and calls nothing under it that waits for the loader's
// own lock (dladdr, dlopen). Recursive: a library's destructor may dlclose another. The forking thread holds it
// across fork (process_guard.cpp), so that a child never starts with it held by a thread it does not have; the child
// starts with it new.

namespace tuneup::agent {

void lockModuleUnloads();
void unlockModuleUnloads();
void resetModuleUnloadsAfterFork(); // in the child, for the lock the forking thread held

class ModuleUnloadsHeld {
public:
    ModuleUnloadsHeld() { lockModuleUnloads(); }
    ~ModuleUnloadsHeld() { unlockModuleUnloads(); }
    ModuleUnloadsHeld(const ModuleUnloadsHeld&) = delete;
    ModuleUnloadsHeld& operator=(const ModuleUnloadsHeld&) = delete;
};

} // namespace tuneup::agent
