package pricefeed

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

const body = "InstanceType,AcceleratorName\np3.2xlarge,V100\n"

// server answers like a static file host: ETag and Last-Modified, 304 to a matching
// conditional request.
func server(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok.csv":
			if r.Header.Get("If-None-Match") == `"v1"` {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("ETag", `"v1"`)
			w.Header().Set("Last-Modified", "Fri, 20 Nov 2026 08:00:00 GMT")
			fmt.Fprint(w, body)
		case "/broken":
			http.Error(w, "<html>oops</html>", http.StatusInternalServerError)
		case "/short":
			w.Header().Set("Content-Length", "1000")
			fmt.Fprint(w, body) // fewer bytes than promised, then the connection closes
		case "/huge":
			w.Header().Set("Content-Length", fmt.Sprint(int64(1)<<30))
			fmt.Fprint(w, body)
		case "/endless":
			for i := 0; i < 200; i++ { // 200 × 1 KiB, no length announced
				fmt.Fprint(w, strings.Repeat("x", 1023)+"\n")
			}
		case "/slow":
			select {
			case <-time.After(5 * time.Second):
			case <-r.Context().Done():
			}
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestFetch(t *testing.T) {
	srv := server(t)
	ctx := context.Background()
	res, err := Fetch(ctx, srv.Client(), Request{URL: srv.URL + "/ok.csv"})
	if err != nil {
		t.Fatal(err)
	}
	if string(res.Body) != body || res.ETag != `"v1"` || res.LastModified == "" || res.Date.Format(time.DateOnly) != "2026-11-20" || res.NotModified {
		t.Errorf("Fetch = %+v, want the body, its ETag and the date 2026-11-20", res)
	}
	again, err := Fetch(ctx, srv.Client(), Request{URL: srv.URL + "/ok.csv", ETag: res.ETag, LastModified: res.LastModified})
	if err != nil {
		t.Fatal(err)
	}
	if !again.NotModified || len(again.Body) != 0 || again.ETag != `"v1"` {
		t.Errorf("conditional Fetch = %+v, want NotModified keeping the ETag", again)
	}
}

func TestFetchFailures(t *testing.T) {
	srv := server(t)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + listener.Addr().String() + "/vms.csv"
	listener.Close() // nothing listens there any more
	tests := []struct {
		name    string
		req     Request
		timeout time.Duration
		wantErr string
	}{
		{"server error", Request{URL: srv.URL + "/broken"}, 0, "the server answered 500 Internal Server Error"},
		{"not found", Request{URL: srv.URL + "/missing"}, 0, "there is no such file"},
		{"cut short", Request{URL: srv.URL + "/short"}, 0, "cut short"},
		{"announced too large", Request{URL: srv.URL + "/huge"}, 0, "bytes, more than the limit of 64 MiB"},
		{"too large", Request{URL: srv.URL + "/endless", MaxBytes: 100 << 10}, 0, "the response is more than the limit of 100 KiB: not a price catalog"},
		{"timeout", Request{URL: srv.URL + "/slow"}, 200 * time.Millisecond, "timed out"},
		{"offline", Request{URL: closed}, 0, "seems to be offline"},
		{"plain http elsewhere", Request{URL: "http://example.org/vms.csv"}, 0, "over HTTPS only"},
		{"not an address", Request{URL: "catalogs/v7"}, 0, "is not an address"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := srv.Client()
			client.Timeout = tc.timeout
			res, err := Fetch(context.Background(), client, tc.req)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Fetch = %v, want an error with %q", err, tc.wantErr)
			}
			if len(res.Body) != 0 {
				t.Errorf("a failed Fetch returned %d bytes", len(res.Body))
			}
		})
	}
	var offline *OfflineError
	if _, err := Fetch(context.Background(), nil, Request{URL: closed}); !errors.As(err, &offline) {
		t.Errorf("Fetch of a closed port = %v, want an *OfflineError", err)
	}
}
