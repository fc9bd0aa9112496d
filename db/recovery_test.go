package db

import (
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"cnntime/predictor/measure"
)

// The states below are what a process killed at a given moment leaves on disk. Each is
// built the way SQLite itself writes it (a live writer's files copied while it still
// has them open are what SIGKILL leaves behind: the kernel keeps every write, and no
// close runs), so the tests are deterministic where the kill test is random.

// writerFiles are the files of a SQLite database at path, in the order they are copied.
var writerFiles = []string{"", "-wal", "-shm", "-journal"}

// copyDatabaseFiles copies the database at from, with its log, log index and journal
// where present, to to.
func copyDatabaseFiles(t *testing.T, from, to string) {
	t.Helper()
	for _, suffix := range writerFiles {
		b, err := os.ReadFile(from + suffix)
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to+suffix, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// killedCache leaves at path the files of a cache whose writer was killed right after
// write ran: write's commits are in the write-ahead log, not yet checkpointed into the
// file. reopened first closes and re-opens the new cache, so the file's own header
// already marks it as a cache (otherwise the header is still that of an empty file).
func killedCache(t *testing.T, path string, reopened bool, write func(d *DB)) {
	t.Helper()
	live := filepath.Join(t.TempDir(), "live.db")
	d, err := Open(live)
	if err != nil {
		t.Fatal(err)
	}
	if reopened {
		d.Close()
		if d, err = Open(live); err != nil {
			t.Fatal(err)
		}
	}
	write(d)
	copyDatabaseFiles(t, live, path)
	d.Close()
}

// journalMagic opens every valid rollback journal header
// (https://www.sqlite.org/fileformat.html#the_rollback_journal).
var journalMagic = []byte{0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7}

// killedSwitchingToWAL leaves at path what Open leaves when it is killed while creating
// a cache: SQLite switches a new file to WAL mode in a rollback-journal transaction, and
// the kill came after it wrote the file's first page but before it deleted the journal.
// The journal says the database had 0 pages before the transaction.
func killedSwitchingToWAL(t *testing.T, path string) {
	t.Helper()
	rawExec(t, path, "PRAGMA journal_mode = WAL") // the file's first page, as the transaction writes it
	header := make([]byte, 512)                   // one sector
	copy(header, journalMagic)
	binary.BigEndian.PutUint32(header[8:], 0)           // page records: none, a new page is not journalled
	binary.BigEndian.PutUint32(header[12:], 0x63bed4f2) // checksum nonce
	binary.BigEndian.PutUint32(header[16:], 0)          // database size before the transaction, in pages
	binary.BigEndian.PutUint32(header[20:], 512)        // sector size
	binary.BigEndian.PutUint32(header[24:], 4096)       // page size
	if err := os.WriteFile(path+"-journal", header, 0o644); err != nil {
		t.Fatal(err)
	}
}

// killedWithSpilledTransaction leaves at path another program's database (a notes table
// with one committed row) whose writer was killed in a transaction after SQLite had
// written part of it to the file: a hot journal that holds the original pages.
func killedWithSpilledTransaction(t *testing.T, path string) {
	t.Helper()
	live := filepath.Join(t.TempDir(), "live.db")
	rawExec(t, live, "CREATE TABLE notes (id INTEGER PRIMARY KEY, body BLOB)", "INSERT INTO notes (body) VALUES ('keep me')")
	w, err := sql.Open("sqlite", live+"?_pragma=cache_size(2)")
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	tx, err := w.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	for range 100 { // more pages than the cache holds: SQLite writes some to the file
		if _, err := tx.Exec("INSERT INTO notes (body) VALUES (randomblob(1000))"); err != nil {
			t.Fatal(err)
		}
	}
	copyDatabaseFiles(t, live, path)
}

// readOnlyError is the error of reading the schema marks of the file at path on a
// read-only connection.
func readOnlyError(t *testing.T, path string) error {
	t.Helper()
	ro, err := sql.Open("sqlite", dsn(path, true))
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	_, err = readMarks(context.Background(), ro)
	return err
}

// wantHotJournal fails the test unless SQLite sees a hot journal at path: the state
// that a read-only connection cannot read (SQLITE_READONLY_ROLLBACK).
func wantHotJournal(t *testing.T, path string) {
	t.Helper()
	var se *sqlite.Error
	if err := readOnlyError(t, path); !errors.As(err, &se) || se.Code() != sqlite3.SQLITE_READONLY_ROLLBACK {
		t.Fatalf("the fixture is not a hot journal: a read-only read gave %v, want SQLITE_READONLY_ROLLBACK", err)
	}
}

// wantUncheckpointed fails the test unless the file at path has commits in its log that
// its own header does not show: appID is the application id the header still holds.
func wantUncheckpointed(t *testing.T, path string, appID uint32) {
	t.Helper()
	h, _, err := readHeader(path)
	if err != nil {
		t.Fatal(err)
	}
	wal, err := os.Stat(path + "-wal")
	if err != nil || wal.Size() == 0 || h.applicationID != appID {
		t.Fatalf("the fixture's log holds no commits past the header (header application id %#x, want %#x; log: %v)", h.applicationID, appID, err)
	}
}

func recoveryMeasurements(n int) []measure.Measurement {
	ms := make([]measure.Measurement, n)
	for i := range ms {
		ms[i] = kernel("cpu:h:recovery", "conv/recovery", i+1, measure.Forward, float64(i)+1)
	}
	return ms
}

func TestOpenRecoversWhatAKilledWriterLeft(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		make  func(t *testing.T, path string)
		wantN int // measurements the recovered cache holds
	}{
		{"creator killed while switching the new file to WAL (hot journal)", func(t *testing.T, path string) {
			killedSwitchingToWAL(t, path)
			wantHotJournal(t, path)
		}, 0},
		{"creator killed before its first checkpoint", func(t *testing.T, path string) {
			killedCache(t, path, false, func(d *DB) {
				if err := d.PutMeasurements(ctx, recoveryMeasurements(50)); err != nil {
					t.Fatal(err)
				}
			})
			wantUncheckpointed(t, path, 0)
		}, 50},
		{"creator killed before its first checkpoint, log index lost", func(t *testing.T, path string) {
			killedCache(t, path, false, func(d *DB) {
				if err := d.PutMeasurements(ctx, recoveryMeasurements(50)); err != nil {
					t.Fatal(err)
				}
			})
			wantUncheckpointed(t, path, 0)
			os.Remove(path + "-shm")
		}, 50},
		{"creator killed before its first checkpoint, log index stale", func(t *testing.T, path string) {
			killedCache(t, path, false, func(d *DB) {
				if err := d.PutMeasurements(ctx, recoveryMeasurements(50)); err != nil {
					t.Fatal(err)
				}
			})
			wantUncheckpointed(t, path, 0)
			info, err := os.Stat(path + "-shm")
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(path+"-shm", make([]byte, info.Size()), 0o644)
		}, 50},
		{"writer killed with commits in the log", func(t *testing.T, path string) {
			killedCache(t, path, true, func(d *DB) {
				if err := d.PutMeasurements(ctx, recoveryMeasurements(30)); err != nil {
					t.Fatal(err)
				}
			})
			wantUncheckpointed(t, path, applicationID)
		}, 30},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "cache.db")
			tc.make(t, path)
			d, err := Open(path)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer d.Close()
			if v, err := d.SchemaVersion(ctx); err != nil || v != latestVersion {
				t.Errorf("SchemaVersion() = %d, %v; want %d", v, err, latestVersion)
			}
			if problems, err := d.Check(ctx); err != nil || len(problems) > 0 {
				t.Errorf("Check() = %v, %v; want no problems", problems, err)
			}
			ms, err := d.Measurements(ctx, "cpu:h:recovery", []string{"conv/recovery"})
			if err != nil || len(ms) != tc.wantN {
				t.Fatalf("Measurements() = %d rows, %v; want %d", len(ms), err, tc.wantN)
			}
			for i, m := range ms {
				if want := recoveryMeasurements(tc.wantN)[i]; m != want {
					t.Fatalf("measurement %d = %+v, want %+v", i, m, want)
				}
			}
			if err := d.PutMeasurements(ctx, []measure.Measurement{kernel("cpu:h:recovery", "conv/after", 1, measure.Forward, 2)}); err != nil {
				t.Errorf("write after the recovery: %v", err)
			}
			if _, err := os.Stat(path + "-journal"); err == nil {
				t.Error("the hot journal is still there after Open")
			}
		})
	}
}

func TestOpenRefusesAKilledWritersFileWithoutChangingIt(t *testing.T) {
	newerSchema := func(d *DB) {
		if _, err := d.sqldb().Exec(fmt.Sprintf("PRAGMA user_version = %d", latestVersion+1)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name    string
		make    func(t *testing.T, path string)
		wantErr string
	}{
		{"new cache whose log holds a newer schema", func(t *testing.T, path string) {
			killedCache(t, path, false, newerSchema)
			wantUncheckpointed(t, path, 0)
		}, fmt.Sprintf("newer cnntime (schema version %d", latestVersion+1)},
		{"cache whose log holds a newer schema", func(t *testing.T, path string) {
			killedCache(t, path, true, newerSchema)
			wantUncheckpointed(t, path, applicationID)
		}, fmt.Sprintf("newer cnntime (schema version %d", latestVersion+1)},
		{"another program's database with commits in its log", func(t *testing.T, path string) {
			live := filepath.Join(t.TempDir(), "live.db")
			w, err := sql.Open("sqlite", live+"?_pragma=journal_mode(WAL)")
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			for _, s := range []string{"CREATE TABLE notes (body TEXT)", "INSERT INTO notes VALUES ('keep me')"} {
				if _, err := w.Exec(s); err != nil {
					t.Fatal(err)
				}
			}
			copyDatabaseFiles(t, live, path)
			wantUncheckpointed(t, path, 0)
		}, "another program"},
		{"another program's database with a hot journal", func(t *testing.T, path string) {
			killedWithSpilledTransaction(t, path)
			wantHotJournal(t, path)
		}, "another program"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "file.db")
			tc.make(t, path)
			before := map[string][32]byte{}
			for _, suffix := range []string{"", "-wal", "-journal"} { // -shm is an index SQLite may rebuild
				if _, err := os.Stat(path + suffix); err == nil {
					before[suffix] = fileHash(t, path+suffix)
				}
			}
			d, err := Open(path)
			if err == nil {
				d.Close()
				t.Fatalf("Open succeeded, want an error containing %q", tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q does not contain %q", err, tc.wantErr)
			}
			for suffix, hash := range before {
				if _, err := os.Stat(path + suffix); err != nil {
					t.Errorf("file%s is gone: %v", suffix, err)
				} else if fileHash(t, path+suffix) != hash {
					t.Errorf("file%s was changed", suffix)
				}
			}
		})
	}
}

func TestImportCacheWhoseWriterWasKilled(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name    string
		make    func(t *testing.T, path string)
		wantN   int    // measurements imported
		wantErr string // "": the import succeeds
	}{
		{"creator killed before its first checkpoint", func(t *testing.T, path string) {
			killedCache(t, path, false, func(d *DB) {
				if err := d.PutMeasurements(ctx, recoveryMeasurements(40)); err != nil {
					t.Fatal(err)
				}
			})
			wantUncheckpointed(t, path, 0)
		}, 40, ""},
		{"writer killed with commits in the log", func(t *testing.T, path string) {
			killedCache(t, path, true, func(d *DB) {
				if err := d.PutMeasurements(ctx, recoveryMeasurements(20)); err != nil {
					t.Fatal(err)
				}
			})
			wantUncheckpointed(t, path, applicationID)
		}, 20, ""},
		{"creator killed while switching the new file to WAL", func(t *testing.T, path string) {
			killedSwitchingToWAL(t, path)
			wantHotJournal(t, path)
		}, 0, "cache check' to recover it"},
		{"new cache whose log holds a newer schema", func(t *testing.T, path string) {
			killedCache(t, path, false, func(d *DB) {
				if _, err := d.sqldb().Exec(fmt.Sprintf("PRAGMA user_version = %d", latestVersion+1)); err != nil {
					t.Fatal(err)
				}
			})
		}, 0, "newer cnntime"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "killed.db")
			tc.make(t, src)
			d := openTemp(t)
			rep, err := d.Import(ctx, src)
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Import: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Import error = %v, want one containing %q", err, tc.wantErr)
			}
			if rep.Measurements.Added != tc.wantN {
				t.Errorf("Import added %d measurements, want %d", rep.Measurements.Added, tc.wantN)
			}
			ms, err := d.Measurements(ctx, "cpu:h:recovery", []string{"conv/recovery"})
			if err != nil || len(ms) != tc.wantN {
				t.Errorf("the cache holds %d measurements, %v; want %d", len(ms), err, tc.wantN)
			}
		})
	}
}

// readRecoveredCopy is what checkMarks falls back on where a read-only connection
// cannot recover the file; it must see the same committed state, and leave the file as
// it was.
func TestReadRecoveredCopySeesTheCommittedState(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		make func(t *testing.T, path string)
		want schemaMarks
	}{
		{"hot journal of a new file", killedSwitchingToWAL, schemaMarks{}},
		{"new cache with commits in its log", func(t *testing.T, path string) {
			killedCache(t, path, false, func(d *DB) {})
			os.Remove(path + "-shm")
		}, schemaMarks{version: latestVersion, appID: applicationID, tables: newCacheSchemaObjects(t)}},
		{"newer schema in the log", func(t *testing.T, path string) {
			killedCache(t, path, true, func(d *DB) {
				if _, err := d.sqldb().Exec("PRAGMA user_version = 77"); err != nil {
					t.Fatal(err)
				}
			})
		}, schemaMarks{version: 77, appID: applicationID, tables: newCacheSchemaObjects(t)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "file.db")
			tc.make(t, path)
			before := map[string][32]byte{}
			for _, suffix := range []string{"", "-wal", "-journal"} {
				if _, err := os.Stat(path + suffix); err == nil {
					before[suffix] = fileHash(t, path+suffix)
				}
			}
			got, err := readRecoveredCopy(ctx, path)
			if err != nil || got != tc.want {
				t.Errorf("readRecoveredCopy() = %+v, %v; want %+v", got, err, tc.want)
			}
			for suffix, hash := range before {
				if fileHash(t, path+suffix) != hash {
					t.Errorf("file%s was changed", suffix)
				}
			}
		})
	}
}

// newCacheSchemaObjects counts the tables, indexes and other schema objects of a new
// cache (what schemaMarks.tables counts).
func newCacheSchemaObjects(t *testing.T) int {
	t.Helper()
	var n int
	if err := openTemp(t).sqldb().QueryRow("SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}
