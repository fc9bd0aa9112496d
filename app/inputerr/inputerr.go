package inputerr

import "fmt"

// Error is a request refused because of what was asked.
type Error struct{ Msg string }

func (e *Error) Error() string { return e.Msg }

// Errorf returns an *Error.
func Errorf(format string, args ...any) error { return &Error{Msg: fmt.Sprintf(format, args...)} }
