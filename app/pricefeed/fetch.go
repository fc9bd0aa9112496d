package pricefeed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// DefaultMaxBytes is the largest file Fetch accepts unless told otherwise: SkyPilot's
// largest catalog (AWS, every instance type in every zone) is a few MB.
const DefaultMaxBytes = 64 << 20

// Request is one download: the address, the validators of the copy the caller already
// has (empty for none: the download is then unconditional) and the size limit.
type Request struct {
	URL          string
	ETag         string // the previous response's ETag, sent as If-None-Match
	LastModified string // the previous response's Last-Modified, sent as If-Modified-Since
	MaxBytes     int64  // 0: DefaultMaxBytes
}

// Result is a finished download: NotModified (the caller's copy is current; Body is
// empty), or the whole Body with the validators to send next time. URL is the address
// the file came from after any redirect, without credentials: the source to record.
// Date is the day the file was last changed by the server's Last-Modified, or zero when
// the server gives none (the caller dates it by its own clock).
type Result struct {
	NotModified  bool
	Body         []byte
	URL          string
	ETag         string
	LastModified string
	Date         time.Time
}

// maxRedirects is how many redirects Fetch follows, as Go's default client does.
const maxRedirects = 10

// Fetch downloads r.URL with client (nil: http.DefaultClient; its Timeout, or ctx's
// deadline, bounds the whole download). It accepts https, and plain http only to this
// computer (a local mirror, a test server); every hop of a redirect is held to the same
// rule, a plain-http hop only on the first address's own host. Credentials in the
// address (https://user:password@host/…) are sent to that host and never appear in a
// result or an error. Every failure is an error saying what happened: *OfflineError
// when the host cannot be reached, *StatusError for an answer other than 200 or 304, a
// redirect to where prices are not downloaded from, a timeout, a body larger than the
// limit, or one cut short.
func Fetch(ctx context.Context, client *http.Client, r Request) (Result, error) {
	u, err := url.Parse(r.URL)
	if err != nil || u.Host == "" {
		return Result{}, fmt.Errorf("%q is not an address such as https://example.org/catalogs/v7", Redact(r.URL))
	}
	shown := Redact(r.URL)
	if err := allowed(u, u); err != nil {
		return Result{}, fmt.Errorf("%s: %w", shown, err)
	}
	if client == nil {
		client = http.DefaultClient
	}
	hops := *client // the caller's client, held to the rule on every hop
	hops.CheckRedirect = func(next *http.Request, via []*http.Request) error {
		if err := allowed(u, next.URL); err != nil {
			return &redirectError{to: Redact(next.URL.String()), err: err}
		}
		if client.CheckRedirect != nil {
			return client.CheckRedirect(next, via)
		}
		if len(via) >= maxRedirects {
			return fmt.Errorf("stopped after %d redirects", maxRedirects)
		}
		return nil
	}
	limit := r.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL, nil)
	if err != nil {
		return Result{}, fmt.Errorf("GET %s: %w", shown, err)
	}
	req.Header.Set("User-Agent", "cnntime (price catalog refresh)")
	if r.ETag != "" {
		req.Header.Set("If-None-Match", r.ETag)
	}
	if r.LastModified != "" {
		req.Header.Set("If-Modified-Since", r.LastModified)
	}
	resp, err := hops.Do(req)
	if err != nil {
		var re *redirectError
		if errors.As(err, &re) {
			return Result{}, fmt.Errorf("GET %s: the server redirected to %s: %w; nothing was downloaded", shown, re.to, re.err)
		}
		return Result{}, describe(shown, failedHost(err, u.Host), err)
	}
	defer resp.Body.Close()
	final := shown
	if resp.Request != nil && resp.Request.URL != nil {
		final = Redact(resp.Request.URL.String())
	}
	switch resp.StatusCode {
	case http.StatusNotModified:
		return Result{NotModified: true, URL: final, ETag: r.ETag, LastModified: r.LastModified, Date: fileDate(resp)}, nil
	case http.StatusOK:
	default:
		return Result{}, &StatusError{URL: final, Code: resp.StatusCode, Status: resp.Status}
	}
	if resp.ContentLength > limit {
		return Result{}, tooLarge(final, resp.ContentLength, limit)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return Result{}, fmt.Errorf("GET %s: the download was cut short after %d of %d bytes; try again", final, len(body), resp.ContentLength)
		}
		return Result{}, describe(final, hostOf(final), err)
	}
	if int64(len(body)) > limit {
		return Result{}, tooLarge(final, -1, limit)
	}
	if resp.ContentLength >= 0 && int64(len(body)) != resp.ContentLength {
		return Result{}, fmt.Errorf("GET %s: the download was cut short after %d of %d bytes; try again", final, len(body), resp.ContentLength)
	}
	return Result{Body: body, URL: final, ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified"), Date: fileDate(resp)}, nil
}

// allowed says why prices may not be downloaded from u, the first address being first:
// over HTTPS only, plain http only from this computer's own host (a local mirror, a
// test server) and, after a redirect, only on the first address's host.
func allowed(first, u *url.URL) error {
	switch {
	case u.Scheme == "https":
		return nil
	case u.Scheme == "http" && isLoopback(u.Hostname()) && strings.EqualFold(u.Host, first.Host):
		return nil
	}
	return errors.New("prices are downloaded over HTTPS only (plain http only from this computer, and not to another host after a redirect)")
}

// redirectError is a redirect Fetch refuses to follow, and where to.
type redirectError struct {
	to  string
	err error
}

func (e *redirectError) Error() string { return "redirect to " + e.to + ": " + e.err.Error() }

// failedHost is the host of the request a transport error is about (after a redirect,
// not the first address's), else first.
func failedHost(err error, first string) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil && u.Host != "" {
			return u.Host
		}
	}
	return first
}

func hostOf(addr string) string {
	if u, err := url.Parse(addr); err == nil && u.Host != "" {
		return u.Host
	}
	return addr
}

// Redact is addr without the credentials an address may carry (user:password@): what
// may be shown, stored or exported. Anything that is not such an address (a file path)
// comes back as it is.
func Redact(addr string) string {
	u, err := url.Parse(addr)
	switch {
	case err != nil:
		return userinfo.ReplaceAllString(addr, "$1") // not an address Go reads: drop what may be credentials all the same
	case u.User == nil:
		return addr
	}
	u.User = nil
	return u.String()
}

// userinfo is the user:password@ of an address: after the scheme, before the host.
var userinfo = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@`)

func tooLarge(addr string, size, limit int64) error {
	what := "more than the limit of " + limitText(limit) // it was cut off there
	if size >= 0 {
		what = fmt.Sprintf("%d bytes, more than the limit of %s", size, limitText(limit))
	}
	return fmt.Errorf("GET %s: the response is %s: not a price catalog, or raise the limit", addr, what)
}

// limitText is a size limit in MiB, or in KiB below one MiB.
func limitText(limit int64) string {
	if limit < 1<<20 {
		return fmt.Sprintf("%d KiB", limit>>10)
	}
	return fmt.Sprintf("%d MiB", limit>>20)
}

// fileDate is the server's Last-Modified in UTC, or zero when it gives none.
func fileDate(resp *http.Response) time.Time {
	if t, err := http.ParseTime(resp.Header.Get("Last-Modified")); err == nil {
		return t.UTC()
	}
	return time.Time{}
}

func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// StatusError is an HTTP answer other than 200 OK or 304 Not Modified.
type StatusError struct {
	URL    string
	Code   int
	Status string
}

func (e *StatusError) Error() string {
	hint := "the server refused or failed; try again later"
	if e.Code == http.StatusNotFound {
		hint = "there is no such file: check the address (--url) and the cloud's name"
	}
	return fmt.Sprintf("GET %s: the server answered %s (%s)", e.URL, e.Status, hint)
}

// OfflineError is a host that cannot be reached: no network, no DNS, or nothing
// listening there.
type OfflineError struct {
	Host string
	Err  error
}

func (e *OfflineError) Error() string {
	return fmt.Sprintf("cannot reach %s (%v): this computer seems to be offline, or the address is wrong", e.Host, e.Err)
}

func (e *OfflineError) Unwrap() error { return e.Err }

// describe turns a transport error into words: offline, timed out, or as it is.
func describe(addr, host string, err error) error {
	var dnsErr *net.DNSError
	var opErr *net.OpError
	var netErr net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &netErr) && netErr.Timeout()):
		return fmt.Errorf("GET %s: timed out; the server is slow or the network is down, try again (or give more time: --timeout)", addr)
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("GET %s: cancelled", addr)
	case errors.As(err, &dnsErr), errors.As(err, &opErr) && opErr.Op == "dial":
		return &OfflineError{Host: host, Err: err}
	}
	if strings.Contains(err.Error(), "certificate") {
		return fmt.Errorf("GET %s: the server's HTTPS certificate is not trusted: %w", addr, err)
	}
	return fmt.Errorf("GET %s: %w", addr, err)
}
