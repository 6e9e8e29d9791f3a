// micro.go — the microbenchmarks (Negele et al. 2017, section 6, Figs. 7-9), matching
// workloads/micro/{create,switch,lock}.hpp: same parameters, timed interval, self-checks.
package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"time"
)

// goroutineBytes — what one live goroutine costs at least: its initial 2 KiB stack plus
// the runtime's g structure (~400 bytes), rounded up.
const goroutineBytes = 3 << 10

// refusal — a limit of the system known before the run: runOnce replies it as status
// "refused" (not "failed"), which the harness records as a result, not a failure.
type refusal struct{ why string }

func (r refusal) Error() string { return r.why }

// capacity — why n live goroutines may not fit in memory (nil = they fit): more than half of
// MemAvailable refuses the point cleanly (a refusal) instead of taking the (shared) machine
// down, as the C++ backends' capacity() does. For workloads whose goroutines are all alive
// at once.
func capacity(n int64) error {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		var kib int64
		if strings.HasPrefix(s.Text(), "MemAvailable:") {
			fmt.Sscanf(strings.TrimPrefix(s.Text(), "MemAvailable:"), "%d", &kib)
			need := n * goroutineBytes
			if need > kib*1024/2 {
				return refusal{fmt.Sprintf("%d goroutines need about %.1f GiB, more than half of MemAvailable (%.1f GiB)",
					n, float64(need)/(1<<30), float64(kib)/(1<<20))}
			}
			return nil
		}
	}
	return nil
}

// create — spawn N goroutines with an empty body (each sets its own flag), then wait for
// all. Go has no join: a sync.WaitGroup stands for joining every thread. Value: ns per
// goroutine, from before the first `go` to after Wait. Self-check: every goroutine ran once.
func create(c *Ctx) (Result, error) {
	n := c.I64("N")
	// No capacity check: a goroutine that has run is gone (its g and stack are reused), and
	// the runtime runs new goroutines while main spawns (on other Ps, or when sysmon
	// preempts main after 10 ms), so the live ones stay far below N (peak RSS ~100 MB at
	// N = 10^6). The C++ threads, in contrast, all stay alive until joined.
	ran := make([]uint8, n)
	var wg sync.WaitGroup
	start := time.Now()
	wg.Add(int(n))
	for i := int64(0); i < n; i++ {
		flag := &ran[i]
		go func() {
			*flag = 1
			wg.Done()
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	if c.injectFault && n > 0 {
		ran[n/2] = 0
	}
	var count int64
	for _, r := range ran {
		if r == 1 {
			count++
		}
	}
	return Result{Seconds: secs, Value: secs * 1e9 / float64(n), Check: expect("threads that ran", count, n)}, nil
}

// switchWorkload — T goroutines each call runtime.Gosched() K times behind a start gate (a
// closed channel). Value: ns per switch = elapsed / (T*K), from opening the gate to the
// last Done. Self-check: the yields add up to T*K.
func switchWorkload(c *Ctx) (Result, error) {
	t, k := c.I64("T"), c.I64("K")
	if err := capacity(t); err != nil {
		return Result{}, err
	}
	yields := make([]padded, t)
	open, wg := spawnBehindGate(t, func(i int64) {
		mine := &yields[i].v
		for j := int64(0); j < k; j++ {
			runtime.Gosched()
			*mine++
		}
	})
	start := time.Now()
	open()
	wg.Wait()
	secs := time.Since(start).Seconds()
	var total int64
	for i := range yields {
		total += yields[i].v
	}
	if c.injectFault {
		total--
	}
	return Result{Seconds: secs, Value: secs * 1e9 / float64(t*k), Check: expect("yields", total, t*k)}, nil
}

// lock — T goroutines each lock and unlock a sync.Mutex K times, incrementing a counter
// inside: their own (lock-local) or one shared mutex and unsynchronised counter
// (lock-global). Value: ns per lock+unlock pair. Self-check: the counters add up to T*K.
func lock(c *Ctx, global bool) (Result, error) {
	t, k := c.I64("T"), c.I64("K")
	type slot struct {
		mu      sync.Mutex
		counter int64
		_       [48]byte
	}
	nslots := t
	if global {
		nslots = 1
	}
	slots := make([]slot, nslots)
	open, wg := spawnBehindGate(t, func(i int64) {
		s := &slots[0]
		if !global {
			s = &slots[i]
		}
		for j := int64(0); j < k; j++ {
			s.mu.Lock()
			s.counter++
			s.mu.Unlock()
		}
	})
	start := time.Now()
	open()
	wg.Wait()
	secs := time.Since(start).Seconds()
	var total int64
	for i := range slots {
		total += slots[i].counter
	}
	if c.injectFault {
		total++
	}
	return Result{Seconds: secs, Value: secs * 1e9 / float64(t*k), Check: expect("critical sections", total, t*k)}, nil
}

// skynet — a tree of goroutines, matching workloads/micro/skynet.hpp: the root (this
// goroutine) has B children, each of them B children, down to L levels; a leaf returns its
// index among the B^L leaves, an inner goroutine spawns its B children, waits for them all
// (a sync.WaitGroup stands for joining them) and returns the sum of their results. Value: ms
// for the whole tree. Self-check: the root's sum is n(n-1)/2 with n = B^L.
func skynet(c *Ctx) (Result, error) {
	levels, fanout := c.I64("L"), c.I64("B")
	leaves, total, width := int64(1), int64(0), int64(1)
	for l := int64(0); l < levels; l++ {
		leaves *= fanout
		width *= fanout
		total += width
	}
	if leaves > 1<<31 {
		return Result{}, fmt.Errorf("skynet: B^L = %d leaves is more than 2^31", leaves)
	}
	// Every goroutine may be alive at once (a breadth-first order), as the C++ check assumes.
	if err := capacity(total); err != nil {
		return Result{}, err
	}
	var node func(level int64, index int64, out *int64)
	node = func(level int64, index int64, out *int64) {
		if level == levels {
			*out = index
			return
		}
		sums := make([]int64, fanout)
		var wg sync.WaitGroup
		wg.Add(int(fanout))
		for i := int64(0); i < fanout; i++ {
			slot := &sums[i]
			child := index*fanout + i
			go func() {
				node(level+1, child, slot)
				wg.Done()
			}()
		}
		wg.Wait()
		var sum int64
		for _, v := range sums {
			sum += v
		}
		*out = sum
	}
	var sum int64
	start := time.Now()
	node(0, 0, &sum)
	secs := time.Since(start).Seconds()
	if c.injectFault {
		sum--
	}
	return Result{Seconds: secs, Value: secs * 1e3, Check: expect("root's sum", sum, leaves*(leaves-1)/2),
		Counters: map[string]float64{"threads": float64(total), "leaves": float64(leaves)}}, nil
}

// channelPingPong — workload `channel` (workloads/micro/channel.hpp): T pairs of goroutines
// ping-pong K values over two channels of capacity C (0: unbuffered); pong sends each value
// + 1 back. Value: ns per hand-off = elapsed / (2*T*K), from opening the gate to the last
// Done. Self-check: every ping got K replies adding up to K(K+1)/2.
func channelPingPong(c *Ctx) (Result, error) {
	t, k, size := c.I64("T"), c.I64("K"), c.I64("C")
	if err := capacity(2 * t); err != nil {
		return Result{}, err
	}
	sums := make([]padded, t)
	replies := make([]padded, t)
	theres, backs := make([]chan int64, t), make([]chan int64, t)
	for i := range theres {
		theres[i], backs[i] = make(chan int64, size), make(chan int64, size)
	}
	// Goroutine 2i pings pair i, 2i+1 pongs it.
	open, wg := spawnBehindGate(2*t, func(g int64) {
		i := g / 2
		there, back := theres[i], backs[i]
		if g%2 == 0 { // ping
			sum, got := &sums[i].v, &replies[i].v
			for j := int64(0); j < k; j++ {
				there <- j
				*sum += <-back
				*got++
			}
			return
		}
		for j := int64(0); j < k; j++ { // pong
			back <- (<-there) + 1
		}
	})
	start := time.Now()
	open()
	wg.Wait()
	secs := time.Since(start).Seconds()
	var total, sum int64
	for i := range replies {
		total += replies[i].v
		sum += sums[i].v
	}
	if c.injectFault {
		total--
	}
	check := expect("replies", total, t*k)
	if check == "" {
		check = expect("sum of replies", sum, t*(k*(k+1)/2))
	}
	return Result{Seconds: secs, Value: secs * 1e9 / float64(2*t*k), Check: check}, nil
}
