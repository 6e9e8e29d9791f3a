// apps.go — the application workloads (Negele et al. 2017, section 5, Table 1 and Fig. 10),
// matching workloads/apps/*.hpp: same parameters, timed interval (from before the first
// spawn to after the last join) and self-checks. The apps that pass values (city,
// eratosthenes, producer, tokenring) have the parameter `via` (workloads/apps/via.hpp):
//
//	via=monitor  the paper's program, the same as the C++ one: a BoundedBuffer is a ring
//	             guarded by a sync.Mutex with two sync.Conds (boundedBuffer below), a one-slot
//	             Mailbox two semaphores built from a sync.Mutex and a sync.Cond (mailbox).
//	via=channel  Go's idiom: a buffered channel of the same capacity for a BoundedBuffer, a
//	             channel of capacity 1 for a Mailbox.
//
// Both variants end the sieve with the terminator 0 (no close), as the C++ program does.
// A monitor elsewhere (the News board, the river) is a sync.Mutex with a sync.Cond in both;
// a join is a sync.WaitGroup or a done channel.
package main

import (
	"fmt"
	"sync"
	"time"
)

// monitorVia — whether the point runs the monitor program (via=monitor, the default) or
// Go's channels (via=channel); another value is an error.
func monitorVia(c *Ctx) (bool, error) {
	switch v := c.params["via"]; v {
	case "", "monitor":
		return true, nil
	case "channel":
		return false, nil
	default:
		return false, fmt.Errorf("parameter via: %q is not monitor or channel", v)
	}
}

// boundedBuffer — workloads/apps/channel.hpp's BoundedBuffer: a FIFO ring of fixed capacity
// guarded by one sync.Mutex, with two sync.Conds; every wait re-checks its predicate in a
// loop and every change signals the other side while holding the mutex.
type boundedBuffer[T any] struct {
	mu                sync.Mutex
	notFull, notEmpty sync.Cond
	slots             []T
	head, count       int
}

func newBoundedBuffer[T any](capacity int64) *boundedBuffer[T] {
	b := &boundedBuffer[T]{slots: make([]T, capacity)}
	b.notFull.L = &b.mu
	b.notEmpty.L = &b.mu
	return b
}

// put — append v, blocking while the buffer is full.
func (b *boundedBuffer[T]) put(v T) {
	b.mu.Lock()
	for b.count == len(b.slots) {
		b.notFull.Wait()
	}
	b.slots[(b.head+b.count)%len(b.slots)] = v
	b.count++
	b.notEmpty.Signal()
	b.mu.Unlock()
}

// take — remove and return the oldest value, blocking while the buffer is empty.
func (b *boundedBuffer[T]) take() T {
	b.mu.Lock()
	for b.count == 0 {
		b.notEmpty.Wait()
	}
	v := b.slots[b.head]
	b.head = (b.head + 1) % len(b.slots)
	b.count--
	b.notFull.Signal()
	b.mu.Unlock()
	return v
}

// semaphore — a counting semaphore from a sync.Mutex and a sync.Cond (as a C++ backend
// without one builds its Semaphore).
type semaphore struct {
	mu      sync.Mutex
	cond    sync.Cond
	permits int64
}

func (s *semaphore) init(permits int64) {
	s.permits = permits
	s.cond.L = &s.mu
}

func (s *semaphore) acquire() {
	s.mu.Lock()
	for s.permits == 0 {
		s.cond.Wait()
	}
	s.permits--
	s.mu.Unlock()
}

func (s *semaphore) release() {
	s.mu.Lock()
	s.permits++
	s.cond.Signal()
	s.mu.Unlock()
}

// mailbox — workloads/apps/channel.hpp's Mailbox: a one-slot buffer on two semaphores
// (empty = 1, full = 0).
type mailbox struct {
	empty, full semaphore
	slot        int64
}

func (m *mailbox) init() {
	m.empty.init(1)
	m.full.init(0)
}

func (m *mailbox) put(v int64) {
	m.empty.acquire()
	m.slot = v
	m.full.release()
}

func (m *mailbox) take() int64 {
	m.full.acquire()
	v := m.slot
	m.empty.release()
	return v
}

// spawnBehindGate — start n goroutines running body(i) behind a start gate, as
// workloads/apps/start.hpp does (no goroutine works before all exist); open() lets them all
// go, Wait() joins them. A `go` statement cannot fail, so the C++ gate's abort path has no
// counterpart.
func spawnBehindGate(n int64, body func(i int64)) (open func(), wg *sync.WaitGroup) {
	gate := make(chan struct{})
	wg = &sync.WaitGroup{}
	wg.Add(int(n))
	for i := int64(0); i < n; i++ {
		i := i
		go func() {
			defer wg.Done()
			<-gate
			body(i)
		}()
	}
	return func() { close(gate) }, wg
}

// spawnGated — spawnBehindGate with the gate opened at once (the apps' timed interval holds
// the spawns too); Wait() joins the goroutines.
func spawnGated(n int64, body func(i int64)) *sync.WaitGroup {
	open, wg := spawnBehindGate(n, body)
	open()
	return wg
}

// city — one power plant and N houses; the energy store is a buffer of capacity C (via:
// a boundedBuffer or a channel), the river a mutex-guarded counter. Self-check: produced =
// consumed = N*K, water = 2*N*K.
func city(c *Ctx) (Result, error) {
	n, k, cp := c.I64("N"), c.I64("K"), c.I64("C")
	monitor, err := monitorVia(c)
	if err != nil {
		return Result{}, err
	}
	units := n * k
	var river struct {
		mu    sync.Mutex
		drawn int64
	}
	draw := func() {
		river.mu.Lock()
		river.drawn++
		river.mu.Unlock()
	}
	var store chan uint8
	var box *boundedBuffer[uint8]
	if monitor {
		box = newBoundedBuffer[uint8](cp)
	} else {
		store = make(chan uint8, cp)
	}
	var produced int64
	consumed := make([]padded, n)
	start := time.Now()
	wg := spawnGated(n+1, func(i int64) {
		if i == 0 {
			if monitor {
				for u := int64(0); u < units; u++ {
					draw()
					box.put(1)
					produced++
				}
				return
			}
			for u := int64(0); u < units; u++ {
				draw()
				store <- 1
				produced++
			}
			return
		}
		mine := &consumed[i-1].v
		if monitor {
			for j := int64(0); j < k; j++ {
				*mine += int64(box.take())
				draw()
			}
			return
		}
		for j := int64(0); j < k; j++ {
			*mine += int64(<-store)
			draw()
		}
	})
	wg.Wait()
	secs := time.Since(start).Seconds()
	var used int64
	for i := range consumed {
		used += consumed[i].v
	}
	if c.injectFault {
		used--
	}
	check := firstFailure(expect("energy produced", produced, units), expect("energy consumed", used, units),
		expect("water drawn", river.drawn, 2*units))
	return Result{Seconds: secs, Value: secs * 1e3, Check: check, Counters: map[string]float64{"threads": float64(n + 1)}}, nil
}

// sequentialPrimes — the primes in 2..n by the sequential sieve (the reference).
func sequentialPrimes(n int64) []int64 {
	var primes []int64
	if n < 2 {
		return primes
	}
	composite := make([]bool, n+1)
	for i := int64(2); i <= n; i++ {
		if composite[i] {
			continue
		}
		primes = append(primes, i)
		for j := i * i; j <= n; j += i {
			composite[j] = true
		}
	}
	return primes
}

// eratosthenes — the concurrent prime sieve: a generator feeds 2..N and the terminator 0
// into a buffer of capacity C (via: a boundedBuffer or a channel); each stage takes its
// prime p, spawns the next stage on a new buffer, passes on the numbers not divisible by p,
// then the terminator, and waits for the stage it spawned. Self-check: the count and sum of
// the primes equal a sequential sieve's.
func eratosthenes(c *Ctx) (Result, error) {
	n, cp := c.I64("N"), c.I64("C")
	monitor, err := monitorVia(c)
	if err != nil {
		return Result{}, err
	}
	reference := sequentialPrimes(n)
	var mu sync.Mutex
	primes := make([]int64, 0, len(reference))
	var stageMonitor func(in *boundedBuffer[int64])
	stageMonitor = func(in *boundedBuffer[int64]) {
		p := in.take()
		if p == 0 {
			return
		}
		mu.Lock()
		primes = append(primes, p)
		mu.Unlock()
		out := newBoundedBuffer[int64](cp)
		done := make(chan struct{})
		go func() {
			stageMonitor(out)
			close(done)
		}()
		for v := in.take(); v != 0; v = in.take() {
			if v%p != 0 {
				out.put(v)
			}
		}
		out.put(0)
		<-done
	}
	var stage func(in chan int64)
	stage = func(in chan int64) {
		p := <-in
		if p == 0 {
			return
		}
		mu.Lock()
		primes = append(primes, p)
		mu.Unlock()
		out := make(chan int64, cp)
		done := make(chan struct{})
		go func() {
			stage(out)
			close(done)
		}()
		for v := <-in; v != 0; v = <-in {
			if v%p != 0 {
				out <- v
			}
		}
		out <- 0
		<-done
	}
	var first chan int64
	var firstBox *boundedBuffer[int64]
	if monitor {
		firstBox = newBoundedBuffer[int64](cp)
	} else {
		first = make(chan int64, cp)
	}
	start := time.Now()
	wg := spawnGated(2, func(i int64) {
		switch {
		case i == 0 && monitor:
			for v := int64(2); v <= n; v++ {
				firstBox.put(v)
			}
			firstBox.put(0)
		case i == 0:
			for v := int64(2); v <= n; v++ {
				first <- v
			}
			first <- 0
		case monitor:
			stageMonitor(firstBox)
		default:
			stage(first)
		}
	})
	wg.Wait()
	secs := time.Since(start).Seconds()
	var sum, wantSum int64
	for _, p := range primes {
		sum += p
	}
	for _, p := range reference {
		wantSum += p
	}
	count := int64(len(primes))
	if c.injectFault {
		count++
	}
	check := firstFailure(expect("primes found", count, int64(len(reference))), expect("sum of primes", sum, wantSum))
	return Result{Seconds: secs, Value: secs * 1e3, Check: check,
		Counters: map[string]float64{"primes": float64(count), "threads": float64(count + 2)}}, nil
}

// mandelbrotRows — the iterations of the points in rows [from, to) of the c x c grid (the
// same floating-point operations as workloads/apps/mandelbrot.hpp).
func mandelbrotRows(c, k, from, to int64) int64 {
	var total int64
	step := 3.0 / float64(c)
	for row := from; row < to; row++ {
		ci := -1.5 + step*float64(row)
		for col := int64(0); col < c; col++ {
			cr := -2.0 + step*float64(col)
			zr, zi := 0.0, 0.0
			it := int64(0)
			for it < k && zr*zr+zi*zi <= 4.0 {
				t := zr*zr - zi*zi + cr
				zi = 2.0*zr*zi + ci
				zr = t
				it++
			}
			total += it
		}
	}
	return total
}

// mandelbrot — a C x C grid split into N row blocks computed by N goroutines, at most K
// iterations per point. Self-check: the total iterations equal a sequential computation's.
func mandelbrot(c *Ctx) (Result, error) {
	n, cs, k := c.I64("N"), c.I64("C"), c.I64("K")
	iterations := make([]padded, n)
	start := time.Now()
	wg := spawnGated(n, func(t int64) {
		iterations[t].v = mandelbrotRows(cs, k, t*cs/n, (t+1)*cs/n)
	})
	wg.Wait()
	secs := time.Since(start).Seconds()
	var total int64
	for i := range iterations {
		total += iterations[i].v
	}
	if c.injectFault {
		total++
	}
	return Result{Seconds: secs, Value: secs * 1e3, Check: expect("iterations", total, mandelbrotRows(cs, k, 0, cs)),
		Counters: map[string]float64{"iterations": float64(total)}}, nil
}

func matrixA(i, k int64) int64   { return (i*31+k*17+3)%19 - 9 }
func matrixB(k, j int64) int64   { return (k*13+j*29+7)%19 - 9 }
func matrixWeight(j int64) int64 { return j%7 + 1 }

// matrix — naive N x N C = A * B, rows split over M goroutines. Self-check: every row's
// weighted checksum equals the exact integer reference (see workloads/apps/matrix.hpp).
func matrix(c *Ctx) (Result, error) {
	n, m := c.I64("N"), c.I64("M")
	a, b, cm := make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
	for i := int64(0); i < n; i++ {
		for j := int64(0); j < n; j++ {
			a[i*n+j] = float64(matrixA(i, j))
			b[i*n+j] = float64(matrixB(i, j))
		}
	}
	start := time.Now()
	wg := spawnGated(m, func(t int64) {
		for i := t * n / m; i < (t+1)*n/m; i++ {
			for j := int64(0); j < n; j++ {
				sum := 0.0
				for k := int64(0); k < n; k++ {
					sum += a[i*n+k] * b[k*n+j]
				}
				cm[i*n+j] = sum
			}
		}
	})
	wg.Wait()
	secs := time.Since(start).Seconds()
	if c.injectFault && n > 0 {
		cm[(n/2)*n+n/3] += 1.0
	}
	bx := make([]int64, n)
	for k := int64(0); k < n; k++ {
		for j := int64(0); j < n; j++ {
			bx[k] += matrixB(k, j) * matrixWeight(j)
		}
	}
	var checksum int64
	for i := int64(0); i < n; i++ {
		var want, got int64
		for k := int64(0); k < n; k++ {
			want += matrixA(i, k) * bx[k]
		}
		for j := int64(0); j < n; j++ {
			got += int64(cm[i*n+j]) * matrixWeight(j)
		}
		if bad := expect(fmt.Sprintf("checksum of row %d", i), got, want); bad != "" {
			return Result{Seconds: secs, Value: secs * 1e3, Check: bad}, nil
		}
		checksum += got
	}
	return Result{Seconds: secs, Value: secs * 1e3, Counters: map[string]float64{"checksum": float64(checksum)}}, nil
}

// digest — the splitmix64 finaliser (news.hpp, producer.hpp).
func digest(msg int64) uint64 {
	x := uint64(msg)
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// news — M reporters publish K messages each on a board (a sync.Mutex, a sync.Cond
// broadcast after each message, an append-only slice); N customers read every message
// once. Self-check: each customer read M*K messages with the right checksum.
func news(c *Ctx) (Result, error) {
	n, m, k := c.I64("N"), c.I64("M"), c.I64("K")
	total := m * k
	var board struct {
		mu        sync.Mutex
		published *sync.Cond
		slots     []int64
		count     int64
	}
	board.published = sync.NewCond(&board.mu)
	board.slots = make([]int64, total)
	type reader struct {
		read int64
		sum  uint64
		_    [48]byte
	}
	readers := make([]reader, n)
	message := func(r, j int64) int64 { return r*k + j + 1 }
	start := time.Now()
	wg := spawnGated(n+m, func(t int64) {
		if t < m {
			for j := int64(0); j < k; j++ {
				board.mu.Lock()
				board.slots[board.count] = message(t, j)
				board.count++
				board.published.Broadcast()
				board.mu.Unlock()
			}
			return
		}
		me := &readers[t-m]
		var seen int64
		for seen < total {
			board.mu.Lock()
			for board.count == seen {
				board.published.Wait()
			}
			upto := board.count
			board.mu.Unlock()
			for ; seen < upto; seen++ {
				me.sum += digest(board.slots[seen])
				me.read++
			}
		}
	})
	wg.Wait()
	secs := time.Since(start).Seconds()
	var wantSum uint64
	for r := int64(0); r < m; r++ {
		for j := int64(0); j < k; j++ {
			wantSum += digest(message(r, j))
		}
	}
	if c.injectFault && n > 0 {
		readers[n/2].sum--
	}
	check := ""
	for i := range readers {
		who := fmt.Sprintf("customer %d", i)
		check = firstFailure(expect(who+" messages read", readers[i].read, total), expect(who+" checksum", readers[i].sum, wantSum))
		if check != "" {
			break
		}
	}
	return Result{Seconds: secs, Value: secs * 1e3, Check: check, Counters: map[string]float64{"threads": float64(n + m)}}, nil
}

// producer — N producers and N consumers exchange K messages each through one buffer of
// capacity C (via: a boundedBuffer or a channel). Self-check: count, sum and hash-sum of the
// consumed messages.
func producer(c *Ctx) (Result, error) {
	n, cp, k := c.I64("N"), c.I64("C"), c.I64("K")
	monitor, err := monitorVia(c)
	if err != nil {
		return Result{}, err
	}
	var buffer chan int64
	var box *boundedBuffer[int64]
	if monitor {
		box = newBoundedBuffer[int64](cp)
	} else {
		buffer = make(chan int64, cp)
	}
	type tally struct {
		count, sum int64
		hash       uint64
		_          [40]byte
	}
	tallies := make([]tally, n)
	start := time.Now()
	wg := spawnGated(2*n, func(t int64) {
		if t < n {
			base := t * k
			if monitor {
				for j := int64(1); j <= k; j++ {
					box.put(base + j)
				}
				return
			}
			for j := int64(1); j <= k; j++ {
				buffer <- base + j
			}
			return
		}
		me := &tallies[t-n]
		if monitor {
			for j := int64(0); j < k; j++ {
				v := box.take()
				me.count++
				me.sum += v
				me.hash += digest(v)
			}
			return
		}
		for j := int64(0); j < k; j++ {
			v := <-buffer
			me.count++
			me.sum += v
			me.hash += digest(v)
		}
	})
	wg.Wait()
	secs := time.Since(start).Seconds()
	messages := n * k
	var count, sum int64
	var hash, wantHash uint64
	for i := range tallies {
		count += tallies[i].count
		sum += tallies[i].sum
		hash += tallies[i].hash
	}
	for v := int64(1); v <= messages; v++ {
		wantHash += digest(v)
	}
	if c.injectFault {
		sum++
	}
	check := firstFailure(expect("messages consumed", count, messages), expect("sum consumed", sum, messages*(messages+1)/2),
		expect("hash of consumed", hash, wantHash))
	return Result{Seconds: secs, Value: secs * 1e3, Check: check, Counters: map[string]float64{"threads": float64(2 * n)}}, nil
}

// tokenring — N goroutines in a ring, each with a one-slot mailbox (via: a mailbox of two
// semaphores or a channel of capacity 1), pass a counter K times around. Self-check: final
// counter and hand-offs = N*K, no player saw the token out of ring order.
func tokenring(c *Ctx) (Result, error) {
	n, k := c.I64("N"), c.I64("K")
	monitor, err := monitorVia(c)
	if err != nil {
		return Result{}, err
	}
	var boxes []chan int64
	var mailboxes []mailbox
	if monitor {
		mailboxes = make([]mailbox, n)
		for i := range mailboxes {
			mailboxes[i].init()
		}
	} else {
		boxes = make([]chan int64, n)
		for i := range boxes {
			boxes[i] = make(chan int64, 1)
		}
	}
	type player struct {
		handoffs, outOfOrder int64
		_                    [48]byte
	}
	players := make([]player, n)
	start := time.Now()
	wg := spawnGated(n, func(i int64) {
		me := &players[i]
		if monitor {
			mine, next := &mailboxes[i], &mailboxes[(i+1)%n]
			for round := int64(0); round < k; round++ {
				token := mine.take()
				if token != i+round*n {
					me.outOfOrder++
				}
				next.put(token + 1)
				me.handoffs++
			}
			return
		}
		next := boxes[(i+1)%n]
		for round := int64(0); round < k; round++ {
			token := <-boxes[i]
			if token != i+round*n {
				me.outOfOrder++
			}
			next <- token + 1
			me.handoffs++
		}
	})
	var final int64
	if monitor {
		mailboxes[0].put(0)
		wg.Wait()
	} else {
		boxes[0] <- 0
		wg.Wait()
	}
	secs := time.Since(start).Seconds()
	if monitor {
		final = mailboxes[0].take()
	} else {
		final = <-boxes[0]
	}
	var handoffs, outOfOrder int64
	for i := range players {
		handoffs += players[i].handoffs
		outOfOrder += players[i].outOfOrder
	}
	if c.injectFault {
		final++
	}
	check := firstFailure(expect("final token", final, n*k), expect("hand-offs", handoffs, n*k),
		expect("hand-offs out of ring order", outOfOrder, int64(0)))
	return Result{Seconds: secs, Value: secs * 1e3, Check: check, Counters: map[string]float64{"handoffs": float64(handoffs)}}, nil
}
