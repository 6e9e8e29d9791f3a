// io.go — the I/O workloads (echo, echo-open; workloads/io/echo.hpp) served as a Go user
// writes a TCP server: net.Listen, then a goroutine per accepted connection (the net
// package's documented pattern, https://pkg.go.dev/net#Listener, "go handleConnection(conn)";
// the goroutines park in Go's netpoller, runtime/netpoll_epoll.go), the echo loop
// io.ReadFull + Write on a buffer of the message's size. TCP_NODELAY is Go's default
// (net.TCPConn.SetNoDelay: "The default is true (no delay)"). GOMAXPROCS = the point's
// processors (main.go). The serving protocol: docs/adding-a-backend.md, "Serving an I/O
// workload" — print {"listening": PORT}, serve until stdin ends, exit.
package main

import (
	"bufio"
	"io"
	"net"
	"os"
	"strconv"
	"sync/atomic"
)

func isIO(workload string) bool { return workload == "echo" || workload == "echo-open" }

func serveEcho(req *Request, stdin *bufio.Reader) {
	size := 512
	if s, ok := req.Params["size"]; ok {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			emit(Reply{Status: "failed", Reason: "bad size " + s})
			return
		}
		size = v
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		emit(Reply{Status: "failed", Reason: "listen: " + err.Error()})
		return
	}
	var corrupt atomic.Bool
	corrupt.Store(req.InjectFault)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				buf := make([]byte, size)
				for {
					if _, err := io.ReadFull(c, buf); err != nil {
						return
					}
					if corrupt.CompareAndSwap(true, false) {
						buf[0] ^= 0xFF // --inject-fault: the load generator's byte check must catch it
					}
					if _, err := c.Write(buf); err != nil {
						return
					}
				}
			}(c)
		}
	}()
	emit(map[string]any{"listening": ln.Addr().(*net.TCPAddr).Port})
	io.Copy(io.Discard, stdin) // the load generator closes stdin when it is done
	ln.Close()
	os.Exit(0)
}
