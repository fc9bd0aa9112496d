package infile

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// Spec says what a file must be.
type Spec struct {
	// What the file is, for messages: "DeepBench results CSV".
	What string
	// Max is the most bytes it may have.
	Max int64
	// Start checks the file's first line (up to headMax bytes, without its line end);
	// nil checks nothing.
	Start func(first []byte) error
}

// headMax bounds what Read takes for the first line.
const headMax = 64 << 10

// chunk is how much Read reads between two looks at the context.
const chunk = 1 << 20

// Read reads the file at path as spec says: its first line is checked first, then the
// whole file, at most spec.Max bytes. Errors name the file.
func Read(ctx context.Context, path string, spec Spec) ([]byte, error) {
	f, err := open(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", spec.What, path, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil {
		switch {
		case fi.IsDir():
			return nil, fmt.Errorf("read %s %s: it is a folder", spec.What, path)
		case fi.Mode().IsRegular() && fi.Size() > spec.Max:
			return nil, tooLarge(path, spec)
		}
	}
	stop := context.AfterFunc(ctx, func() { f.SetReadDeadline(aLongTimeAgo) })
	defer stop()
	var data []byte
	buf := make([]byte, chunk)
	checked := spec.Start == nil
	for {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("read %s %s: %w", spec.What, path, context.Cause(ctx))
		}
		n, err := f.Read(buf)
		data = append(data, buf[:n]...)
		if int64(len(data)) > spec.Max {
			return nil, tooLarge(path, spec)
		}
		if !checked {
			if first, done := firstLine(data, err != nil); done {
				if serr := spec.Start(first); serr != nil {
					return nil, fmt.Errorf("%s is not a %s: %w", path, spec.What, serr)
				}
				checked = true
			}
		}
		switch {
		case errors.Is(err, io.EOF):
			return data, nil
		case errors.Is(err, os.ErrDeadlineExceeded) && ctx.Err() != nil:
			return nil, fmt.Errorf("read %s %s: %w", spec.What, path, context.Cause(ctx))
		case err != nil:
			return nil, fmt.Errorf("read %s %s: %w", spec.What, path, err)
		}
	}
}

// open opens the file at path for reading. Opening a named pipe waits for a program to
// write it, until ctx ends (the open left waiting then is closed when it completes);
// reads of a pipe go through Go's poller, so a read deadline stops them.
func open(ctx context.Context, path string) (*os.File, error) {
	if fi, err := os.Stat(path); err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
		return os.Open(path)
	}
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		done <- opened{f, err}
	}()
	select {
	case o := <-done:
		return o.f, o.err
	case <-ctx.Done():
		go func() {
			if o := <-done; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, context.Cause(ctx)
	}
}

// aLongTimeAgo is a read deadline in the past: a read waiting on a pipe returns at once.
var aLongTimeAgo = time.Unix(1, 0)

// firstLine is the first line of data, once it is known (a line end, headMax bytes, or
// the end of the file).
func firstLine(data []byte, atEnd bool) ([]byte, bool) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return bytes.TrimSuffix(data[:i], []byte("\r")), true
	}
	if len(data) >= headMax {
		return data[:headMax], true
	}
	return data, atEnd
}

func tooLarge(path string, spec Spec) error { return &TooLargeError{Path: path, Spec: spec} }

// TooLargeError is a file larger than its Spec's Max.
type TooLargeError struct {
	Path string
	Spec Spec
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %s, more than a %s may be: is it the right file?", e.Path, size(e.Spec.Max), e.Spec.What)
}

// size says n bytes in MB or kB.
func size(n int64) string {
	if n >= 1<<20 {
		return fmt.Sprintf("%d MB", n>>20)
	}
	return fmt.Sprintf("%d kB", n>>10)
}

// CSVHeader is a Start that wants a CSV header line holding every one of columns.
func CSVHeader(columns ...string) func([]byte) error {
	return func(first []byte) error {
		if err := text(first); err != nil {
			return err
		}
		header, err := csv.NewReader(bytes.NewReader(first)).Read()
		if err != nil {
			return fmt.Errorf("its first line is no CSV header (%v)", err)
		}
		for i, h := range header {
			header[i] = strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))
		}
		var missing []string
		for _, c := range columns {
			if !slices.Contains(header, c) {
				missing = append(missing, c)
			}
		}
		if len(missing) > 0 {
			return fmt.Errorf("its header lacks the columns %s", strings.Join(missing, ", "))
		}
		return nil
	}
}

// JSONObject is a Start that wants a JSON object: its first byte past white space is {.
func JSONObject(first []byte) error {
	if err := text(first); err != nil {
		return err
	}
	t := bytes.TrimLeft(bytes.TrimPrefix(first, []byte("\ufeff")), " \t\r\n")
	if len(t) > 0 && t[0] != '{' {
		return errors.New("it does not start with a JSON object ({)")
	}
	return nil
}

// text refuses a first line that is not text: NUL or other control bytes, invalid UTF-8.
func text(b []byte) error {
	if !utf8.Valid(b) {
		return errors.New("its first line is not UTF-8 text")
	}
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\r' {
			return fmt.Errorf("its first line holds the control byte %#02x: it is not text", c)
		}
	}
	return nil
}
