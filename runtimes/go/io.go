// io.go — the I/O workloads (echo, echo-open; workloads/io/echo.hpp) served as a Go user
// writes a TCP server: net.Listen, then a goroutine per accepted connection (the net
// package's documented pattern, https://pkg.go.dev/net#Listener, "go handleConnection(conn)";
// the goroutines park in Go's netpoller, runtime/netpoll_epoll.go), the echo loop
// io.ReadFull + Write on a buffer of the message's size. TCP_NODELAY is Go's default
// (net.TCPConn.SetNoDelay: "The default is true (no delay)"). GOMAXPROCS = the point's
// processors (main.go). The serving protocol: docs/adding-a-backend.md, "Serving an I/O
// workload" — print {"listening": PORT}, serve until stdin ends, exit.
//
// http-hello, http-hello-open (harness/loadgen/protocol.hpp; docs/io-workloads.md): the same
// goroutine per connection, on raw TCP, not net/http — every backend runs the same minimal
// responder, so that the comparison is of the runtimes, not of Go's HTTP stack against
// another's. Conn.Read into a buffer of httpMaxHead bytes, bytes.Index for each "\r\n\r\n"
// (every complete request head answered, in order), one Write of as many responses.
//
// churn: echo's server, unchanged (a goroutine per connection, one request on each).
//
// rpc, rpc-open: echo's goroutine, the work (rpcWork, protocol.hpp's rpc_work) done in the
// handler's goroutine before the Write, as a Go server does short CPU work (no pool).
//
// echo-hogs: echo's server, and K goroutines beside it, each a loop of { one slice of rpcWork
// (hogSliceRounds: protocol.hpp's hog_slice_rounds); runtime.Gosched() } until stdin ends.
// Gosched "yields the processor, allowing other goroutines to run" (pkg.go.dev/runtime#Gosched):
// the goroutine goes to the global run queue (runtime/proc.go, goschedImpl → globrunqput), and
// the scheduler's next pick (findRunnable) takes the local queue, the global one every 61st
// tick, and polls the network only when it finds nothing else, or from sysmon when no P has
// polled for 10 ms (runtime/proc.go, sysmon; Go 1.19): what the workload measures. Go also
// preempts a goroutine that runs 10 ms without a yield (async preemption, Go 1.14), which a
// slice of 10 ms meets. The slices they completed are printed when stdin ends.
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"io"
	"net"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
)

// The bytes of harness/loadgen/protocol.hpp.
const (
	httpResponse = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 13\r\n\r\nHello, World!"
	httpMaxHead  = 8192
)

var headEnd = []byte("\r\n\r\n")

func isIO(workload string) bool {
	return workload == "echo" || workload == "echo-open" || workload == "churn" || workload == "echo-idle" || workload == "echo-hogs" || isHTTP(workload) || isRPC(workload)
}

func isRPC(workload string) bool { return workload == "rpc" || workload == "rpc-open" }

var hogSink atomic.Uint64

// hogSliceRounds — harness/loadgen/protocol.hpp's hog_slice_rounds: 600 rounds of rpcWork a µs.
func hogSliceRounds(sliceUs uint64) uint64 { return sliceUs * 600 }

// rpcWork — harness/loadgen/protocol.hpp's rpc_work: rounds dependent LCG steps (Knuth's MMIX
// constants), each followed by an xorshift.
func rpcWork(seed, rounds uint64) uint64 {
	x := seed
	for i := uint64(0); i < rounds; i++ {
		x = x*6364136223846793005 + 1442695040888963407
		x ^= x >> 29
	}
	return x
}

func isHTTP(workload string) bool { return workload == "http-hello" || workload == "http-hello-open" }

// serveHTTP — answer every complete request head with httpResponse until the client closes
// (or sends a head longer than httpMaxHead).
func serveHTTP(c net.Conn, corrupt *atomic.Bool) {
	defer c.Close()
	buf := make([]byte, httpMaxHead)
	out := make([]byte, 0, 4*len(httpResponse))
	have, scan := 0, 0
	for have < len(buf) {
		n, err := c.Read(buf[have:])
		if n == 0 && err != nil {
			return
		}
		have += n
		used := 0
		out = out[:0]
		for {
			i := bytes.Index(buf[scan:have], headEnd)
			if i < 0 {
				break
			}
			used = scan + i + len(headEnd)
			scan = used
			out = append(out, httpResponse...)
		}
		// Resume the search where a terminator split over reads may begin.
		if scan = have - len(headEnd) + 1; scan < used {
			scan = used
		}
		copy(buf, buf[used:have])
		have -= used
		scan -= used
		if len(out) == 0 {
			continue
		}
		if corrupt.CompareAndSwap(true, false) {
			out[0] ^= 0xFF // --inject-fault: the load generator's byte check must catch it
		}
		if _, err := c.Write(out); err != nil {
			return
		}
	}
}

func serveEcho(req *Request, stdin *bufio.Reader) {
	size := 512
	http, rpc := isHTTP(req.Workload), isRPC(req.Workload)
	if rpc {
		size = 128
	} else if req.Workload == "churn" {
		size = 64
	}
	if s, ok := req.Params["size"]; ok && !http {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 || (rpc && v < 16) {
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
			if http {
				go serveHTTP(c, &corrupt)
				continue
			}
			go func(c net.Conn) {
				defer c.Close()
				buf := make([]byte, size)
				for {
					if _, err := io.ReadFull(c, buf); err != nil {
						return
					}
					if rpc { // the work, then the reply (bytes 0-7: the result)
						binary.LittleEndian.PutUint64(buf, rpcWork(binary.LittleEndian.Uint64(buf[8:]), binary.LittleEndian.Uint64(buf)))
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
	// echo-hogs' hogs (none with the test-only COOPBENCH_TEST_LAZY_HOGS: protocol.hpp).
	hogs := 0
	var stop atomic.Bool
	var wg sync.WaitGroup
	var slices atomic.Uint64
	if req.Workload == "echo-hogs" {
		hogs = 2 * runtime.GOMAXPROCS(0)
		if v, err := strconv.Atoi(req.Params["hogs"]); err == nil && v > 0 {
			hogs = v
		}
		sliceUs := uint64(1000)
		if v, err := strconv.ParseUint(req.Params["slice_us"], 10, 64); err == nil {
			sliceUs = v
		}
		rounds := hogSliceRounds(sliceUs)
		if os.Getenv("COOPBENCH_TEST_LAZY_HOGS") == "" {
			for i := 0; i < hogs; i++ {
				wg.Add(1)
				go func(x uint64) {
					defer wg.Done()
					n := uint64(0)
					for !stop.Load() {
						x = rpcWork(x, rounds)
						n++
						runtime.Gosched()
					}
					slices.Add(n)
					hogSink.Add(x) // the work's result kept: it is not dead code
				}(0x9E3779B97F4A7C15 + uint64(i))
			}
		}
	}
	emit(map[string]any{"listening": ln.Addr().(*net.TCPAddr).Port})
	io.Copy(io.Discard, stdin) // the load generator closes stdin when it is done
	ln.Close()
	if req.Workload == "echo-hogs" {
		stop.Store(true)
		wg.Wait()
		emit(map[string]any{"hogs": hogs, "hog_slices": slices.Load()})
	}
	os.Exit(0)
}
