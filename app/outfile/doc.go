// Package outfile writes the files a user names for an export (a chart, a CSV, a job
// script) the way a careful program writes them: a regular file appears whole or not
// at all (a temporary file beside it, renamed into place) with the user's umask; what
// is not a regular file, a terminal, /dev/null, a named pipe, /dev/stdout, is written
// into as it is and keeps its type; and what an export must never replace (a folder, a
// disk, an SQLite database, a read-only file) or create (the missing target of a
// dangling symbolic link) is refused with a sentence that says why.
//
// A killed write leaves its temporary file, ".NAME.….tmp"; the next write to NAME
// removes it (db/heldtemp tells a dead writer's leftover from a live one's).
//
// Imports: the standard library and db/heldtemp (the standard library only), so that
// every layer that writes a user's file can use it.
package outfile
