package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"image"
	"io"
	"net"
	"strings"
	"time"
)

// xScreen is a connection to an X server that reads its root window's pixels with the
// core protocol's GetImage request: what `import -window root` asks the server for,
// without starting ImageMagick for every screenshot (the end-to-end tests take
// hundreds, each import several hundred milliseconds on a busy 2-core machine). Only
// what that needs is spoken: the connection setup without authorisation (a local
// Xvfb accepts it) and GetImage in ZPixmap format of a 24-bit TrueColor screen at 32
// bits per pixel, little-endian, as Xvfb's is.
type xScreen struct {
	conn          net.Conn
	r             *bufio.Reader
	root          uint32
	width, height int
	redShift      [3]uint // the red, green and blue masks' shifts
	seq           uint16
}

// dialXScreen connects to the X server of display ":N" over its Unix socket.
func dialXScreen(display string) (*xScreen, error) {
	n := strings.TrimPrefix(display, ":")
	if i := strings.IndexByte(n, '.'); i >= 0 {
		n = n[:i]
	}
	conn, err := net.DialTimeout("unix", "/tmp/.X11-unix/X"+n, 10*time.Second)
	if err != nil {
		return nil, fmt.Errorf("connect to X display %s: %w", display, err)
	}
	s := &xScreen{conn: conn, r: bufio.NewReaderSize(conn, 1<<16)}
	if err := s.setup(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("X display %s: %w", display, err)
	}
	return s, nil
}

func (s *xScreen) Close() error { return s.conn.Close() }

// setup sends the connection setup (little-endian, protocol 11.0, no authorisation)
// and reads the first screen's root window, size and pixel format from the reply.
func (s *xScreen) setup() error {
	req := []byte{'l', 0, 11, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	if _, err := s.conn.Write(req); err != nil {
		return err
	}
	head := make([]byte, 8)
	if _, err := io.ReadFull(s.r, head); err != nil {
		return err
	}
	body := make([]byte, 4*int(binary.LittleEndian.Uint16(head[6:])))
	if _, err := io.ReadFull(s.r, body); err != nil {
		return err
	}
	if head[0] != 1 {
		reason := body
		if n := int(head[1]); n <= len(reason) {
			reason = reason[:n]
		}
		return fmt.Errorf("the server refused the connection: %q", reason)
	}
	// The reply after its first 8 bytes: release (4), resource id base and mask (8),
	// motion buffer (4), vendor length (2), max request length (2), screens (1),
	// formats (1), image byte order (1), bitmap order, unit and pad (3), min and max
	// keycode (2), unused (4); then the vendor, the formats (8 bytes each), the screens.
	le := binary.LittleEndian
	vendor := int(le.Uint16(body[16:]))
	nformats := int(body[21])
	if body[22] != 0 {
		return fmt.Errorf("the server's images are big-endian: not supported here")
	}
	off := 32 + (vendor+3)/4*4
	bpp := 0
	for i := range nformats {
		f := body[off+8*i:]
		if f[0] == 24 { // depth 24
			bpp = int(f[1])
		}
	}
	off += 8 * nformats
	scr := body[off:]
	s.root = le.Uint32(scr[0:])
	s.width, s.height = int(le.Uint16(scr[20:])), int(le.Uint16(scr[22:]))
	rootVisual, depth, ndepths := le.Uint32(scr[32:]), scr[38], int(scr[39])
	if depth != 24 || bpp != 32 {
		return fmt.Errorf("root window of depth %d at %d bits per pixel: want 24 at 32", depth, bpp)
	}
	d := scr[40:]
	for range ndepths {
		nvisuals := int(le.Uint16(d[2:]))
		for v := range nvisuals {
			vis := d[8+24*v:]
			if le.Uint32(vis) == rootVisual {
				for i, at := range []int{8, 12, 16} {
					mask := le.Uint32(vis[at:])
					for mask != 0 && mask&1 == 0 {
						mask >>= 1
						s.redShift[i]++
					}
				}
				return nil
			}
		}
		d = d[8+24*nvisuals:]
	}
	return fmt.Errorf("the root window's visual %d is not listed", rootVisual)
}

// rootImage reads the root window's pixels (GetImage, ZPixmap, every plane).
func (s *xScreen) rootImage() (*image.RGBA, error) {
	if err := s.conn.SetDeadline(time.Now().Add(20 * time.Second)); err != nil {
		return nil, err
	}
	req := make([]byte, 20)
	le := binary.LittleEndian
	req[0], req[1] = 73, 2 // GetImage, ZPixmap
	le.PutUint16(req[2:], 5)
	le.PutUint32(req[4:], s.root)
	le.PutUint16(req[12:], uint16(s.width))
	le.PutUint16(req[14:], uint16(s.height))
	le.PutUint32(req[16:], 0xffffffff)
	if _, err := s.conn.Write(req); err != nil {
		return nil, err
	}
	s.seq++
	head := make([]byte, 32)
	for {
		if _, err := io.ReadFull(s.r, head); err != nil {
			return nil, err
		}
		switch head[0] {
		case 0:
			return nil, fmt.Errorf("GetImage failed: X error %d", head[1])
		case 1:
		default:
			continue // an event: not asked for, skipped
		}
		break
	}
	if seq := le.Uint16(head[2:]); seq != s.seq {
		return nil, fmt.Errorf("reply to request %d, want %d", seq, s.seq)
	}
	n := 4 * int(le.Uint32(head[4:]))
	if n != 4*s.width*s.height {
		return nil, fmt.Errorf("GetImage returned %d bytes, want %d for %dx%d at 32 bits", n, 4*s.width*s.height, s.width, s.height)
	}
	img := image.NewRGBA(image.Rect(0, 0, s.width, s.height))
	if _, err := io.ReadFull(s.r, img.Pix); err != nil {
		return nil, err
	}
	r, g, b := s.redShift[0], s.redShift[1], s.redShift[2]
	for i := 0; i < len(img.Pix); i += 4 {
		px := le.Uint32(img.Pix[i:])
		img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = uint8(px>>r), uint8(px>>g), uint8(px>>b), 0xff
	}
	return img, nil
}
