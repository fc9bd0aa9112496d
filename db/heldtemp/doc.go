// Package heldtemp makes the temporary file a writer fills beside its destination and
// then renames (or links) into place, and tells a dead writer's leftover from a live
// one's. The temporary file is ".NAME.<random>.tmp" beside NAME, and the process that
// fills it holds an exclusive lock (flock) on it from its creation until it is renamed
// or removed. The kernel drops the lock when that process dies however it dies (SIGKILL,
// a crash, a power-off), so a temporary file no process holds is a leftover: Stale lists
// them and RemoveStale removes them, never a live writer's file.
//
// A cleaner removes a leftover while holding its lock; a writer that created its file
// and finds, once it holds the lock, that its name no longer leads to that file (a
// cleaner took it in between) makes another. The lock is flock's, which on Linux is
// apart from the POSIX locks SQLite takes on the same file.
//
// Imports: the standard library only.
package heldtemp
