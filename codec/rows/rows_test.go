package rows

import (
	"fmt"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/herald-gateway/herald/codec/types"
)

func schema() *types.Schema {
	return &types.Schema{Name: "s", Fields: []types.Field{
		{Name: "a", Type: types.Scalar(types.U8)},
		{Name: "g", Type: types.ArrayOf(types.VecOf(types.ArrayOf(types.Scalar(types.F32), 2)), 2)},
		{Name: "o", Type: types.Scalar(types.String), Optional: true},
	}}
}

// appendRow writes row v; with failAt >= 0 it stops inside g's nested
// value after failAt floats and abandons the row.
func appendRow(b *Builder, v uint8, failAt int) {
	b.BeginRow()
	b.Col(0).U8.Append(v)
	g := b.Col(1)
	g.FSL.Append(true)
	written := 0
	for i := 0; i < 2; i++ {
		g.Elem.List.Append(true)
		for j := 0; j < 2; j++ {
			g.Elem.Elem.FSL.Append(true)
			for k := 0; k < 2; k++ {
				if written == failAt {
					b.Abandon()
					return
				}
				g.Elem.Elem.Elem.F32.Append(float32(v))
				written++
			}
		}
	}
	b.Col(2).Str.Append(fmt.Sprint(v))
	if err := b.Commit(); err != nil {
		panic(err)
	}
}

func render(rec arrow.RecordBatch) string {
	var rows []string
	for i := 0; i < int(rec.NumRows()); i++ {
		var cells []string
		for j := 0; j < int(rec.NumCols()); j++ {
			cells = append(cells, rec.Column(j).ValueStr(i))
		}
		rows = append(rows, strings.Join(cells, " "))
	}
	return strings.Join(rows, "\n")
}

func TestPadAndMask(t *testing.T) {
	tests := []struct {
		name  string
		fails map[uint8]int // row value → float index to fail at
		want  string
	}{
		{"none", nil, "1 [[[1,1],[1,1]],[[1,1],[1,1]]] 1\n2 [[[2,2],[2,2]],[[2,2],[2,2]]] 2\n3 [[[3,3],[3,3]],[[3,3],[3,3]]] 3"},
		{"middle", map[uint8]int{2: 3}, "1 [[[1,1],[1,1]],[[1,1],[1,1]]] 1\n3 [[[3,3],[3,3]],[[3,3],[3,3]]] 3"},
		{"first and last", map[uint8]int{1: 0, 3: 7}, "2 [[[2,2],[2,2]],[[2,2],[2,2]]] 2"},
		{"all", map[uint8]int{1: 1, 2: 4, 3: 5}, ""},
		{"before nested", map[uint8]int{1: 1, 3: 2}, "2 [[[2,2],[2,2]],[[2,2],[2,2]]] 2"},
	}
	for _, tt := range tests {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		b := NewBuilder(mem, schema())
		for v := uint8(1); v <= 3; v++ {
			fail, ok := tt.fails[v]
			if !ok {
				fail = -1
			}
			appendRow(b, v, fail)
		}
		if b.Len() != 3-len(tt.fails) {
			t.Errorf("%s: Len %d", tt.name, b.Len())
		}
		rec, err := b.NewRecordBatch()
		if err != nil {
			t.Fatal(err)
		}
		if got := render(rec); got != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
		for j := 0; j < int(rec.NumCols()); j++ {
			if v, ok := rec.Column(j).(interface{ ValidateFull() error }); ok {
				if err := v.ValidateFull(); err != nil {
					t.Errorf("%s: column %d: %v", tt.name, j, err)
				}
			}
		}
		rec.Release()
		// the builder is reusable after finishing
		appendRow(b, 9, -1)
		rec, _ = b.NewRecordBatch()
		if got := render(rec); got != "9 [[[9,9],[9,9]],[[9,9],[9,9]]] 9" {
			t.Errorf("%s: reuse: %s", tt.name, got)
		}
		rec.Release()
		b.Release()
		mem.AssertSize(t, 0)
	}
}

func TestCommitChecksColumns(t *testing.T) {
	b := NewBuilder(nil, schema())
	defer b.Release()
	b.BeginRow()
	b.Col(0).U8.Append(1)
	if err := b.Commit(); err == nil || err.Error() != "rows: column 1 has 0 values for row 0" {
		t.Fatal(err)
	}
	rec, _ := b.NewRecordBatch()
	defer rec.Release()
	if rec.NumRows() != 0 {
		t.Fatal(rec.NumRows())
	}
	_ = array.NewBuilder
}

// TestRollback: a payload that unfolds into several rows and fails
// part-way leaves none of them, and rows before the mark stay.
func TestRollback(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := NewBuilder(mem, schema())
	defer b.Release()
	appendRow(b, 1, -1)
	appendRow(b, 2, 3) // abandoned before the mark
	mark := b.Mark()
	appendRow(b, 3, -1)
	appendRow(b, 4, -1)
	b.BeginRow()
	b.Col(0).U8.Append(5) // open row: rolled back too
	b.Rollback(mark)
	appendRow(b, 6, -1)
	if b.Len() != 2 {
		t.Fatalf("Len = %d", b.Len())
	}
	rec, err := b.NewRecordBatch()
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Release()
	if rec.NumRows() != 2 || rec.Column(0).ValueStr(0) != "1" || rec.Column(0).ValueStr(1) != "6" {
		t.Errorf("rows:\n%s", render(rec))
	}
}
