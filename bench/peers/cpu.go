package main

import (
	"time"

	"github.com/herald-gateway/herald/bench/internal/benchproc"
)

// cpuMeter reads the CPU time of the server under measurement, of its
// nats-server (pid 0: none) and of this process (the load generator).
type cpuMeter struct{ server, nats int }

// cpuSample is the CPU time each had used at one moment.
type cpuSample struct{ server, nats, self time.Duration }

// sample reads the three CPU times (benchproc.ProcCPU: 0 for a process
// /proc cannot tell about).
func (m cpuMeter) sample() cpuSample {
	return cpuSample{server: benchproc.ProcCPU(m.server), nats: benchproc.ProcCPU(m.nats), self: benchproc.SelfCPU()}
}

// perOp is the CPU time each spent per operation between a and b, in
// microseconds.
func perOp(a, b cpuSample, ops int) (server, nats, self float64) {
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) / float64(max(ops, 1)) }
	return us(b.server - a.server), us(b.nats - a.nats), us(b.self - a.self)
}
