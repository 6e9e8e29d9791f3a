// Command coopbench-go — the `go` backend of coopbench: the Negele et al. 2017 workloads
// written in idiomatic Go (goroutines, channels, sync.Mutex/sync.Cond, runtime.Gosched),
// run by the harness as an external backend (docs/adding-a-backend.md, "A backend in
// another language").
//
// Protocol (version 1):
//
//	coopbench-go --list        prints {"protocol":1,"iterations":true,"workloads":[...],"context":{...}}
//	coopbench-go < request     reads one JSON request line on stdin:
//	    {"protocol":1,"backend":"go","workload":"create","params":{"N":"1000"},
//	     "processors":2,"pin":false,"stack_size":0,"options":{},"inject_fault":false,
//	     "warmup":1,"iterations":5}
//	  runs the workload warmup + iterations times in this process (fresh goroutines each
//	  time, same parameters: iteration 0 is the cold one) and prints one JSON line on stdout:
//	    {"runs":[{"status":"ok","seconds":0.01,"value":12.3,"check":"passed","counters":{...}}, ...]}
//	  one reply per run, stopping after the first that failed; a reply is
//	  {"status":"ok",...,"check":"self-check failed: ..."} when its answer is wrong, or
//	  {"status":"failed","reason":"..."} when it could not run the point, or
//	  {"status":"refused","reason":"..."} when a limit of the system (memory) says before the
//	  run that the point cannot fit (capacity, micro.go). A request without
//	  "iterations" (an older harness) gets one run and the bare reply.
//
// Standard library only: the build must work offline.
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"syscall"
)

// Request — one point, as the harness sends it.
type Request struct {
	Protocol    int               `json:"protocol"`
	Backend     string            `json:"backend"`
	Workload    string            `json:"workload"`
	Params      map[string]string `json:"params"`
	Processors  int               `json:"processors"`
	Pin         bool              `json:"pin"`
	StackSize   int64             `json:"stack_size"`
	Options     map[string]string `json:"options"`
	InjectFault bool              `json:"inject_fault"`
	Warmup      int               `json:"warmup"`
	Iterations  *int              `json:"iterations"` // nil: an older harness, one bare reply
}

// Reply — the point's outcome, as the harness reads it.
type Reply struct {
	Status   string             `json:"status"`
	Reason   string             `json:"reason,omitempty"`
	Seconds  float64            `json:"seconds"`
	Value    float64            `json:"value"`
	Check    string             `json:"check,omitempty"`
	Counters map[string]float64 `json:"counters"`
	// CPUSeconds — the process's CPU time during the run (user + system, every thread:
	// getrusage(RUSAGE_SELF) around it); benchmark.json's cpu_time (harness/gbench_reporter.hpp).
	CPUSeconds *float64 `json:"cpu_seconds,omitempty"`
}

// Ctx — what a workload gets: its parameters and whether to perturb its answer.
type Ctx struct {
	params      map[string]string
	injectFault bool
}

// I64 — an integer parameter; the harness has validated it, so a bad one is a bug.
func (c *Ctx) I64(name string) int64 {
	v, err := strconv.ParseInt(c.params[name], 10, 64)
	if err != nil {
		panic(fmt.Sprintf("parameter %s: %q is not an integer", name, c.params[name]))
	}
	return v
}

// Result — what a workload returns: the timed interval, the value in the workload's unit,
// the self-check's verdict ("" = passed) and counters.
type Result struct {
	Seconds  float64
	Value    float64
	Check    string
	Counters map[string]float64
}

type workloadFn func(*Ctx) (Result, error)

// workloads — every workload this program implements, by the harness's names.
var workloads = map[string]workloadFn{
	"create":       create,
	"skynet":       skynet,
	"switch":       switchWorkload,
	"channel":      channelPingPong,
	"lock-local":   func(c *Ctx) (Result, error) { return lock(c, false) },
	"lock-global":  func(c *Ctx) (Result, error) { return lock(c, true) },
	"city":         city,
	"eratosthenes": eratosthenes,
	"mandelbrot":   mandelbrot,
	"matrix":       matrix,
	"news":         news,
	"producer":     producer,
	"tokenring":    tokenring,
}

// gcPercent — the GC target in effect (GOGC; -1 = off), read without changing it.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// buildProfile — how this program was built, for context.json's backend.go.build: the Go
// version and the build settings the go command stamped into the binary (debug.ReadBuildInfo:
// -compiler, -trimpath, -gcflags/-ldflags when given, CGO_ENABLED, GOARCH, GOAMD64; Go's
// defaults otherwise: gc with optimizations and inlining on, no PGO in Go 1.19).
func buildProfile() string {
	out := runtime.Version()
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return out + "; build settings not recorded"
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "-compiler", "-trimpath", "-gcflags", "-ldflags", "-tags", "-race", "CGO_ENABLED", "GOARCH", "GOOS", "GOAMD64":
			out += " " + s.Key + "=" + s.Value
		}
	}
	return out
}

func context() map[string]string {
	gogc := os.Getenv("GOGC")
	if gogc == "" {
		gogc = "(unset: 100)"
	}
	memlimit := os.Getenv("GOMEMLIMIT")
	if memlimit == "" {
		memlimit = "(unset)"
	}
	return map[string]string{
		"go_version": runtime.Version(),
		"compiler":   runtime.Compiler,
		"goarch":     runtime.GOARCH,
		"GOGC":       gogc,
		"GOMEMLIMIT": memlimit,
		"gomaxprocs": "the point's processors",
		"build":      buildProfile(),
		"io_server":  "echo, echo-open: net.Listen, a goroutine per connection, io.ReadFull + Write; http-hello: the same on raw TCP, every complete request head answered by one Write; rpc: echo with the work in the handler; echo-hogs: echo beside goroutines that compute and runtime.Gosched (io.go)",
	}
}

func emit(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		fmt.Fprintln(os.Stderr, "coopbench-go: cannot encode the reply:", err)
		os.Exit(1)
	}
	os.Stdout.Write(append(b, '\n'))
}

func main() {
	if len(os.Args) == 2 && os.Args[1] == "--list" {
		names := make([]string, 0, len(workloads)+7)
		for n := range workloads {
			names = append(names, n)
		}
		names = append(names, "echo", "echo-open", "http-hello", "http-hello-open", "rpc", "rpc-open", "churn", "echo-idle", "echo-hogs") // io.go
		sort.Strings(names)
		emit(map[string]any{"protocol": 1, "iterations": true, "workloads": names, "context": context()})
		return
	}
	if len(os.Args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: coopbench-go --list | coopbench-go < request.json (see main.go)")
		os.Exit(2)
	}
	in := bufio.NewReader(os.Stdin)
	line, err := in.ReadBytes('\n')
	if err != nil && len(line) == 0 {
		emit(Reply{Status: "failed", Reason: "no request on stdin: " + err.Error()})
		return
	}
	var req Request
	if err := json.Unmarshal(line, &req); err != nil {
		emit(Reply{Status: "failed", Reason: "unreadable request: " + err.Error()})
		return
	}
	if isIO(req.Workload) {
		procs := req.Processors
		if procs < 1 {
			procs = 1
		}
		runtime.GOMAXPROCS(procs)
		serveEcho(&req, in)
		return
	}
	fn, ok := workloads[req.Workload]
	if !ok {
		emit(Reply{Status: "unsupported", Reason: "coopbench-go does not implement workload " + req.Workload})
		return
	}
	procs := req.Processors
	if procs < 1 {
		procs = 1
	}
	runtime.GOMAXPROCS(procs)
	if req.Iterations == nil {
		emit(runOnce(fn, &req))
		return
	}
	n := req.Warmup + *req.Iterations
	if n < 1 || req.Warmup < 0 {
		emit(Reply{Status: "failed", Reason: fmt.Sprintf("bad request: warmup %d, iterations %d", req.Warmup, *req.Iterations)})
		return
	}
	runs := make([]Reply, 0, n)
	for i := 0; i < n; i++ {
		r := runOnce(fn, &req)
		if r.Counters != nil {
			r.Counters["process_run"] = float64(i) // which run of this process (0 = cold)
		}
		runs = append(runs, r)
		if r.Status != "ok" || r.Check != "passed" {
			break // the harness records the runs before it and this failure
		}
	}
	emit(map[string]any{"runs": runs})
}

// runOnce — one complete run of the workload (fresh goroutines), as one reply.
func runOnce(fn workloadFn, req *Request) Reply {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	cpu0, cpuOK := processCPUSeconds()
	res, err := fn(&Ctx{params: req.Params, injectFault: req.InjectFault})
	cpu1, cpuOK1 := processCPUSeconds()
	var refused refusal
	if errors.As(err, &refused) {
		return Reply{Status: "refused", Reason: refused.why}
	}
	if err != nil {
		return Reply{Status: "failed", Reason: err.Error()}
	}
	runtime.ReadMemStats(&after)
	if res.Counters == nil {
		res.Counters = map[string]float64{}
	}
	res.Counters["gomaxprocs"] = float64(runtime.GOMAXPROCS(0))
	res.Counters["gogc"] = float64(gcPercent())
	res.Counters["gc_cycles"] = float64(after.NumGC - before.NumGC)
	check := "passed"
	if res.Check != "" {
		check = res.Check
	}
	reply := Reply{Status: "ok", Seconds: res.Seconds, Value: res.Value, Check: check, Counters: res.Counters}
	if cpuOK && cpuOK1 && cpu1 >= cpu0 {
		c := cpu1 - cpu0
		reply.CPUSeconds = &c
	}
	return reply
}

// processCPUSeconds — user + system CPU time of this process so far (all its threads), as
// the C++ backends' harness/run_point.hpp measures it; false when getrusage fails.
func processCPUSeconds() (float64, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, false
	}
	tv := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)*1e-6 }
	return tv(ru.Utime) + tv(ru.Stime), true
}

// expect — a self-check: "" when got == want, else the reason (the C++ workloads' wording).
func expect[T comparable](what string, got, want T) string {
	if got == want {
		return ""
	}
	return fmt.Sprintf("self-check failed: %s = %v, expected %v", what, got, want)
}

// firstFailure — the first non-empty verdict.
func firstFailure(checks ...string) string {
	for _, c := range checks {
		if c != "" {
			return c
		}
	}
	return ""
}

// padded — one counter on its own cache line (per-goroutine counters without false sharing).
type padded struct {
	v int64
	_ [56]byte
}
