// Package hw describes the hardware that training runs on: GPU specifications and
// machines (cloud instances and the user's own), and loads and validates the catalog
// of both from CSV bytes. It does no I/O of its own; callers pass the files' contents.
//
// A numeric specification of zero means unknown: the public sources did not give it.
// Code that reads a GPU must cope with unknown figures, never assume a value.
//
// Imports: nothing of ours.
package hw
