// Package infile reads the files a user names as input (a calibration's CSVs, a custom
// model's JSON) the way a careful program reads them: the start first, checked by the
// caller (a CSV's header, a JSON object's first byte), so that a wrong file is refused
// after a few bytes rather than after it was read whole; then the rest, up to a limit
// with a sentence that says what the limit is for (/dev/zero or a 300 MB file of NULs
// grew the process by gigabytes before); and a cancelled context (Ctrl-C, SIGTERM)
// stops a read between two chunks, or at once while it waits on a pipe.
//
// Imports: the standard library only.
package infile
