package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// clockTick is the unit of /proc/PID/stat's CPU times (USER_HZ, 100 on
// Linux).
const clockTick = 10 * time.Millisecond

// procCPU returns the user and system CPU time process pid has used.
func procCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("cpu of process %d: %w", pid, err)
	}
	return parseStatCPU(string(raw))
}

// parseStatCPU reads utime and stime (fields 14 and 15) of a
// /proc/PID/stat line; the command name (field 2) may hold spaces and
// parentheses, so the fields are counted after its last ')'.
func parseStatCPU(stat string) (time.Duration, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("stat %q: no command name", stat)
	}
	f := strings.Fields(stat[i+1:])
	// f[0] is field 3 (state): utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("stat %q: %d fields after the command name, want at least 13", stat, len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("stat %q: CPU time %q", stat, s)
		}
		ticks += n
	}
	return time.Duration(ticks) * clockTick, nil
}

// selfCPU returns the CPU time this process has used.
func selfCPU() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}

// cpuMeter reads the CPU time of the server under measurement, of its
// nats-server (pid 0: none) and of this process (the load generator).
type cpuMeter struct{ server, nats int }

// cpuSample is the CPU time each had used at one moment.
type cpuSample struct{ server, nats, self time.Duration }

// sample reads the three CPU times.
func (m cpuMeter) sample() (cpuSample, error) {
	var s cpuSample
	var err error
	if s.server, err = procCPU(m.server); err != nil {
		return s, err
	}
	if m.nats != 0 {
		if s.nats, err = procCPU(m.nats); err != nil {
			return s, err
		}
	}
	s.self, err = selfCPU()
	return s, err
}

// perOp is the CPU time each spent per operation between a and b, in
// microseconds.
func perOp(a, b cpuSample, ops int) (server, nats, self float64) {
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) / float64(max(ops, 1)) }
	return us(b.server - a.server), us(b.nats - a.nats), us(b.self - a.self)
}
