// Package pricefeed downloads one file of a price catalog over HTTPS, the way a
// well-behaved client of a public mirror should: a conditional request (If-None-Match,
// If-Modified-Since) so an unchanged file costs nothing, a timeout, a size limit that
// refuses a runaway response before it fills memory, and errors that say what went
// wrong in words (offline, timed out, an error page, cut short). It reads nothing of
// the file's content and stores nothing: the caller parses and keeps it.
//
// Imports: the standard library only (net/http). Nothing of ours.
package pricefeed
