package app

import "testing"

// A worker takes the first waiting curve whose table no other worker is using, else the
// first waiting curve; once closed and empty, take says so.
func TestCurveQueueTakesAnotherTableFirst(t *testing.T) {
	a100 := tableUse{model: 0, gpu: "a100"}
	v100 := tableUse{model: 0, gpu: "v100"}
	t4 := tableUse{model: 1, gpu: "t4"}
	q := newCurveQueue[int]()
	for i, table := range []tableUse{a100, a100, a100, v100, t4} {
		q.add(i, table)
	}
	take := func() (int, tableUse) {
		t.Helper()
		job, table, ok := q.take()
		if !ok {
			t.Fatal("take said the queue was closed while jobs waited")
		}
		return job, table
	}
	var order []int
	j, first := take() // job 0 (a100)
	order = append(order, j)
	j, _ = take() // job 3: v100, the first other table
	order = append(order, j)
	j, _ = take() // job 4: t4
	order = append(order, j)
	j, _ = take() // job 1: every waiting job's table (a100) is in use: the first
	order = append(order, j)
	q.done(first)
	q.done(first)
	j, _ = take() // job 2: a100, free again
	order = append(order, j)
	want := []int{0, 3, 4, 1, 2}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("jobs taken in the order %v, want %v", order, want)
		}
	}
	if n := len(q.busy); n != 3 {
		t.Errorf("%d tables in use, want 3 (a100 once more, v100, t4)", n)
	}

	got := make(chan bool)
	go func() {
		_, _, ok := q.take() // waits while the queue is empty, not closed
		got <- ok
	}()
	q.add(5, t4)
	if ok := <-got; !ok {
		t.Error("take on an open queue said it was closed, or missed the job added")
	}
	go func() {
		_, _, ok := q.take()
		got <- ok
	}()
	q.close()
	if ok := <-got; ok {
		t.Error("take on a closed empty queue returned a job")
	}
}
