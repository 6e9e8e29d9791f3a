// crosscheck/go — create, switch and one hand-off written as Go's documentation writes them
// (A Tour of Go, "Goroutines", "Channels"; sync.WaitGroup; runtime.Gosched), independent of
// runtimes/go, for scripts/crosscheck_peers.py. Usage: crosscheck-go P; prints
// "create NS", "switch NS", "handoff NS" (medians of 7 runs; the units of coopbench's create
// N=10000, switch T=2 K=20000 and channel T=1 K=20000 C=0). The work is the workload's: each
// created goroutine sets its own byte (create's self-check), and both ends of the hand-off are
// goroutines that main waits for (channel's pair), so that a difference is the backend's.
package main

import (
	"fmt"
	"os"
	"runtime"
	"sort"
	"strconv"
	"sync"
	"time"
)

func median(f func() float64) float64 {
	xs := make([]float64, 7)
	f() // warm-up
	for i := range xs {
		xs[i] = f()
	}
	sort.Float64s(xs)
	return xs[len(xs)/2]
}

func create(n int) float64 {
	var wg sync.WaitGroup
	ran := make([]uint8, n) // each goroutine sets its own byte, as the workload's self-check does
	start := time.Now()
	wg.Add(n)
	for i := 0; i < n; i++ {
		go func(i int) {
			ran[i] = 1
			wg.Done()
		}(i)
	}
	wg.Wait()
	return float64(time.Since(start).Nanoseconds()) / float64(n)
}

func yields(t, k int) float64 {
	var wg sync.WaitGroup
	gate := make(chan struct{})
	wg.Add(t)
	for i := 0; i < t; i++ {
		go func() {
			<-gate
			for j := 0; j < k; j++ {
				runtime.Gosched()
			}
			wg.Done()
		}()
	}
	start := time.Now()
	close(gate)
	wg.Wait()
	return float64(time.Since(start).Nanoseconds()) / float64(t*k)
}

func handoff(k int) float64 {
	ping, pong := make(chan int), make(chan int)
	var wg sync.WaitGroup
	wg.Add(2)
	start := time.Now()
	// Both ends are goroutines and main waits for them, as in the workload's pair.
	go func() {
		for j := 0; j < k; j++ {
			ping <- j
			<-pong
		}
		wg.Done()
	}()
	go func() {
		for j := 0; j < k; j++ {
			v := <-ping
			pong <- v + 1
		}
		wg.Done()
	}()
	wg.Wait()
	return float64(time.Since(start).Nanoseconds()) / float64(2*k)
}

func main() {
	p, err := strconv.Atoi(os.Args[len(os.Args)-1])
	if err != nil || p < 1 {
		fmt.Fprintln(os.Stderr, "usage: crosscheck-go P")
		os.Exit(2)
	}
	runtime.GOMAXPROCS(p)
	fmt.Printf("create %.2f\n", median(func() float64 { return create(10000) }))
	fmt.Printf("switch %.2f\n", median(func() float64 { return yields(2, 20000) }))
	fmt.Printf("handoff %.2f\n", median(func() float64 { return handoff(20000) }))
}
