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

// Every hop of a redirect is held to the first request's rule (issue 30): HTTPS, or
// plain http only on this computer's own mirror. The source is where the file came
// from at last, and a failure names the host that failed.
func TestFetchRedirects(t *testing.T) {
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, body) }))
	t.Cleanup(elsewhere.Close)
	// The same server answers as "localhost" too: another host name, plain http.
	other := strings.Replace(elsewhere.URL, "127.0.0.1", "localhost", 1)
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "https://" + listener.Addr().String() + "/vms.csv"
	listener.Close()
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/to-http":
			http.Redirect(w, r, other+"/vms.csv", http.StatusFound)
		case "/to-closed":
			http.Redirect(w, r, closed, http.StatusFound)
		case "/moved":
			http.Redirect(w, r, "/vms.csv", http.StatusMovedPermanently)
		case "/vms.csv":
			fmt.Fprint(w, body)
		}
	}))
	t.Cleanup(tlsSrv.Close)
	mirror := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/elsewhere":
			http.Redirect(w, r, other+"/vms.csv", http.StatusFound)
		case "/here":
			http.Redirect(w, r, "/vms.csv", http.StatusFound)
		case "/vms.csv":
			fmt.Fprint(w, body)
		}
	}))
	t.Cleanup(mirror.Close)

	ctx := context.Background()
	for _, tc := range []struct {
		name, url, wantURL string
	}{
		{"https to https on its host", tlsSrv.URL + "/moved", tlsSrv.URL + "/vms.csv"},
		{"the local mirror within itself", mirror.URL + "/here", mirror.URL + "/vms.csv"},
	} {
		res, err := Fetch(ctx, tlsSrv.Client(), Request{URL: tc.url})
		if err != nil || string(res.Body) != body || res.URL != tc.wantURL {
			t.Errorf("%s: Fetch = %q from %q, %v; want the body from %s", tc.name, res.Body, res.URL, err, tc.wantURL)
		}
	}
	for _, tc := range []struct {
		name, url, wantErr string
	}{
		{"https to plain http", tlsSrv.URL + "/to-http", "the server redirected to " + other + "/vms.csv: prices are downloaded over HTTPS only"},
		{"the local mirror to another host", mirror.URL + "/elsewhere", "the server redirected to " + other + "/vms.csv: prices are downloaded over HTTPS only"},
		{"a redirect to a host that is down", tlsSrv.URL + "/to-closed", "cannot reach " + listener.Addr().String()},
	} {
		res, err := Fetch(ctx, tlsSrv.Client(), Request{URL: tc.url})
		if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
			t.Errorf("%s: Fetch = %v, want an error with %q", tc.name, err, tc.wantErr)
		}
		if len(res.Body) != 0 {
			t.Errorf("%s: a refused redirect returned %d bytes", tc.name, len(res.Body))
		}
	}
}

// Credentials in the address reach the server and nothing else: not the result's
// source, not an error (issue 30).
func TestFetchKeepsCredentialsOut(t *testing.T) {
	var gotUser, gotPassword string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotUser, gotPassword, _ = r.BasicAuth()
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, body)
	}))
	t.Cleanup(srv.Close)
	withCreds := strings.Replace(srv.URL, "http://", "http://u:secret@", 1)
	res, err := Fetch(context.Background(), nil, Request{URL: withCreds + "/vms.csv"})
	if err != nil {
		t.Fatal(err)
	}
	if gotUser != "u" || gotPassword != "secret" {
		t.Errorf("the server got user %q, password %q; want the address's", gotUser, gotPassword)
	}
	if res.URL != srv.URL+"/vms.csv" {
		t.Errorf("the source is %q, want %q without the credentials", res.URL, srv.URL+"/vms.csv")
	}
	for _, addr := range []string{withCreds + "/missing", "http://u:secret@example.org/vms.csv", "ftp://u:secret@[::1/vms.csv"} {
		if _, err := Fetch(context.Background(), nil, Request{URL: addr}); err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("Fetch(%s) = %v; want an error without the password", addr, err)
		}
	}
}

func TestRedact(t *testing.T) {
	for in, want := range map[string]string{
		"https://u:p@example.org/catalogs/v7": "https://example.org/catalogs/v7",
		"https://example.org/catalogs/v7":     "https://example.org/catalogs/v7",
		"http://u:p@[::1/x":                   "http://[::1/x",
		"/home/me/catalogs/v7/aws/vms.csv":    "/home/me/catalogs/v7/aws/vms.csv",
	} {
		if got := Redact(in); got != want {
			t.Errorf("Redact(%q) = %q, want %q", in, got, want)
		}
	}
}
