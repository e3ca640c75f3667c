#pragma once
// The agent's SQLite never touches a descriptor that is no longer its own. A program that closes
// the descriptors it inherited (os.closerange(3, 1024), daemons) closes SQLite's too, and may get
// the same numbers back for its own files: SQLite would then write pages into them. These checks go
// between SQLite's unix VFS and the system (sqlite3_vfs.xSetSystemCall): every read, write, lock,
// map or close first checks, with fstat, that the number still names the file SQLite opened, and
// fails with EBADF otherwise, which SQLite reports as an I/O error.

namespace tuneup::agent {

// Installs the checks into the private SQLite's default VFS. Call once, before any file is opened.
void installSqliteFdGuard();

// Whether every descriptor SQLite holds open still names the file it opened (false once the program
// closed or reused one). A few fstat calls.
bool sqliteFdsIntact();

// In a forked child: the parent's connection is never used here (its descriptors stay open, unused).
void forgetSqliteFdsAfterFork();

} // namespace tuneup::agent
