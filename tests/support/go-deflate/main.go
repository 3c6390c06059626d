// A test-time peer that compresses and decompresses iSCP messages with Go's compress/flate the way the published
// Go client frames them: each message one complete raw DEFLATE stream; with context takeover (WebSocket) the
// last 2^winbits bytes of the direction's earlier messages are the stream's preset dictionary. It reads requests
// on stdin (op byte 'c' or 'd', u32be length, bytes) and answers each on stdout (status byte 0 or 1, u32be length,
// bytes or an error text), keeping one context per direction. As iscp-go before 1.1.0: -zlib frames each message as
// it does on QUIC (a zlib stream, compress/zlib); -keep-first keeps the first 2^winbits bytes as the context.
package main

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/zlib"
	"encoding/binary"
	"flag"
	"io"
	"os"
)

type window struct {
	size int
	buf  []byte
	// keepFirst: the first size bytes stay, as iscp-go before 1.1.0 keeps them (bytes.Buffer.Truncate).
	keepFirst bool
}

func (w *window) add(b []byte) {
	if w == nil {
		return
	}
	w.buf = append(w.buf, b...)
	if len(w.buf) > w.size && w.keepFirst {
		w.buf = w.buf[:w.size]
	} else if len(w.buf) > w.size {
		w.buf = append([]byte(nil), w.buf[len(w.buf)-w.size:]...)
	}
}

func (w *window) dict() []byte {
	if w == nil {
		return nil
	}
	return w.buf
}

func compress(msg []byte, level int, flush bool, w *window) ([]byte, error) {
	var out bytes.Buffer
	fw, err := flate.NewWriterDict(&out, level, w.dict())
	if err != nil {
		return nil, err
	}
	if _, err := fw.Write(msg); err != nil {
		return nil, err
	}
	// The WebSocket transport flushes before it closes each message's writer; the QUIC one only closes it.
	if flush {
		if err := fw.Flush(); err != nil {
			return nil, err
		}
	}
	if err := fw.Close(); err != nil {
		return nil, err
	}
	w.add(msg)
	return out.Bytes(), nil
}

func compressZlib(msg []byte, level int) ([]byte, error) {
	var out bytes.Buffer
	zw, err := zlib.NewWriterLevel(&out, level)
	if err != nil {
		return nil, err
	}
	if _, err := zw.Write(msg); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

func decompressZlib(data []byte) ([]byte, error) {
	zr, err := zlib.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	msg, err := io.ReadAll(zr)
	if err != nil {
		return nil, err
	}
	return msg, zr.Close()
}

func decompress(data []byte, w *window) ([]byte, error) {
	fr := flate.NewReaderDict(bytes.NewReader(data), w.dict())
	msg, err := io.ReadAll(fr)
	if err != nil {
		return nil, err
	}
	if err := fr.Close(); err != nil {
		return nil, err
	}
	w.add(msg)
	return msg, nil
}

func main() {
	level := flag.Int("level", 6, "DEFLATE level")
	transport := flag.String("transport", "ws", "ws or quic")
	takeover := flag.Bool("takeover", false, "context takeover (ws only)")
	winbits := flag.Int("winbits", 15, "context window bits")
	zlibFramed := flag.Bool("zlib", false, "zlib streams (QUIC, iscp-go before 1.1.0)")
	keepFirst := flag.Bool("keep-first", false, "the context is the first 2^winbits bytes (iscp-go before 1.1.0)")
	flag.Parse()

	var sendWin, recvWin *window
	if *takeover && *transport == "ws" {
		sendWin = &window{size: 1 << *winbits, keepFirst: *keepFirst}
		recvWin = &window{size: 1 << *winbits, keepFirst: *keepFirst}
	}
	in := bufio.NewReader(os.Stdin)
	out := bufio.NewWriter(os.Stdout)
	head := make([]byte, 5)
	for {
		if _, err := io.ReadFull(in, head); err != nil {
			return
		}
		body := make([]byte, binary.BigEndian.Uint32(head[1:]))
		if _, err := io.ReadFull(in, body); err != nil {
			return
		}
		var res []byte
		var err error
		if *zlibFramed && head[0] == 'c' {
			res, err = compressZlib(body, *level)
		} else if *zlibFramed {
			res, err = decompressZlib(body)
		} else if head[0] == 'c' {
			res, err = compress(body, *level, *transport == "ws", sendWin)
		} else {
			res, err = decompress(body, recvWin)
		}
		status := byte(0)
		if err != nil {
			status, res = 1, []byte(err.Error())
		}
		reply := make([]byte, 5)
		reply[0] = status
		binary.BigEndian.PutUint32(reply[1:], uint32(len(res)))
		out.Write(reply)
		out.Write(res)
		out.Flush()
	}
}
