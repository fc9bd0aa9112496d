package app

import (
	"context"
	"os"
	"syscall"
	"time"
)

// CacheStamp is what a cache file looks like from outside: the file itself (its device
// and inode: another file put at its path is a change however alike) and the size and
// modification time of the file and of its write-ahead log. Every committed write
// changes it — another cnntime (`cnntime machine add`, a sweep, another window) or this
// one — and a read does not.
type CacheStamp struct {
	dev, ino        uint64
	size, walSize   int64
	mtime, walMtime time.Time
}

// StampCache reads the stamp of the cache at path; a file that is not there has the
// zero stamp.
func StampCache(path string) CacheStamp {
	var s CacheStamp
	if fi, err := os.Stat(path); err == nil {
		s.size, s.mtime = fi.Size(), fi.ModTime()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			s.dev, s.ino = uint64(st.Dev), st.Ino
		}
	}
	if fi, err := os.Stat(path + "-wal"); err == nil {
		s.walSize, s.walMtime = fi.Size(), fi.ModTime()
	}
	return s
}

// Equal reports whether two stamps are of the same state of the cache.
func (s CacheStamp) Equal(o CacheStamp) bool {
	return s.dev == o.dev && s.ino == o.ino && s.size == o.size && s.walSize == o.walSize && s.mtime.Equal(o.mtime) && s.walMtime.Equal(o.walMtime)
}

// DefaultCacheWatch is how often the window looks whether the cache changed: machines,
// models and prices another program adds appear within a few seconds.
const DefaultCacheWatch = 2 * time.Second

// WatchCache looks at the cache file at path every interval until ctx ends, and calls
// changed (on the watching goroutine) once for each time it finds the cache written,
// deleted, replaced or created again since it last looked. A write made while changed
// runs is found at the next look.
func WatchCache(ctx context.Context, path string, interval time.Duration, changed func()) {
	watchFrom(ctx, path, interval, StampCache(path), changed)
}

// watchFrom is WatchCache from the stamp last: a write after it was read, before the
// watching goroutine first looks, is a change too.
func watchFrom(ctx context.Context, path string, interval time.Duration, last CacheStamp, changed func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if now := StampCache(path); !now.Equal(last) {
			last = now
			changed()
		}
	}
}
