// Package lifeline ties the processes cnntime starts to the process that starts them:
// the command's supervised child and the sweep worker die with their parent (Linux's
// parent-death signal, PR_SET_PDEATHSIG), and such a child can check, between
// measurements, that its parent still lives, so that nothing more is measured or
// written once whoever asked for it is gone (a `kill -9` of `cnntime sweep` left its
// worker measuring, and a killed `cnntime prices import` still committed 12 s later).
//
// Imports: the standard library only.
package lifeline
