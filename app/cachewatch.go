package app

import (
	"context"
	"os"
	"time"
)

// CacheStamp is what a cache file looks like from outside: the size and modification
// time of the file and of its write-ahead log. Every committed write changes it —
// another cnntime (`cnntime machine add`, a sweep, another window) or this one — and a
// read does not.
type CacheStamp struct {
	size, walSize   int64
	mtime, walMtime time.Time
}

// StampCache reads the stamp of the cache at path; a file that is not there has the
// zero stamp.
func StampCache(path string) CacheStamp {
	var s CacheStamp
	if fi, err := os.Stat(path); err == nil {
		s.size, s.mtime = fi.Size(), fi.ModTime()
	}
	if fi, err := os.Stat(path + "-wal"); err == nil {
		s.walSize, s.walMtime = fi.Size(), fi.ModTime()
	}
	return s
}

// Equal reports whether two stamps are of the same state of the cache.
func (s CacheStamp) Equal(o CacheStamp) bool {
	return s.size == o.size && s.walSize == o.walSize && s.mtime.Equal(o.mtime) && s.walMtime.Equal(o.walMtime)
}

// DefaultCacheWatch is how often the window looks whether the cache changed: machines,
// models and prices another program adds appear within a few seconds.
const DefaultCacheWatch = 2 * time.Second

// WatchCache looks at the cache file at path every interval until ctx ends, or the file
// is gone (removed: nothing to follow), and calls changed (on the watching goroutine)
// once for each time it finds the cache written since it last looked. A write made
// while changed runs is found at the next look.
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
		now := StampCache(path)
		if now.Equal(CacheStamp{}) {
			return
		}
		if !now.Equal(last) {
			last = now
			changed()
		}
	}
}
