package benchproc

import (
	"os"
	"testing"
)

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		in   []float64
		want float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		in := append([]float64(nil), c.in...)
		if got := Median(in); got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.in, got, c.want)
		}
		for i := range in {
			if in[i] != c.in[i] {
				t.Fatalf("Median reordered its input: %v", in)
			}
		}
	}
}

func TestProcFigures(t *testing.T) {
	pid := os.Getpid()
	if n, err := RSS(pid); err != nil || n <= 0 {
		t.Fatalf("RSS(self) = %d, %v", n, err)
	}
	if _, err := RSS(0); err == nil {
		t.Fatal("RSS of pid 0 gave no error")
	}
	if ProcCPU(0) != 0 {
		t.Fatal("ProcCPU(0) is not 0")
	}
	if SelfCPU() <= 0 {
		t.Fatal("SelfCPU is not positive")
	}
}
