package app

import "sync"

// curveQueue hands StreamCurves' workers the curves to predict. The curves are used in
// order, but a worker may predict a later one first: the first curve of a model on a
// GPU fills the step table that every machine of that GPU reads (Engine.Reserve), and
// the next machine of the same GPU, taken at once by another worker, only waited for
// that table (half of a zoo-by-catalog CSV ran on one core). A worker therefore takes
// the first waiting curve whose table no other worker is using, else the first waiting
// curve; which worker predicts a curve, and when, changes nothing in it.
type curveQueue[J any] struct {
	mu      sync.Mutex
	ready   sync.Cond
	waiting []queued[J]
	busy    map[tableUse]int // the tables of the curves being predicted, and how many
	closed  bool
}

// queued is a job waiting for a worker, with the table its curve reads.
type queued[J any] struct {
	job   J
	table tableUse
}

func newCurveQueue[J any]() *curveQueue[J] {
	q := &curveQueue[J]{busy: map[tableUse]int{}}
	q.ready.L = &q.mu
	return q
}

// add queues job, whose curve reads table.
func (q *curveQueue[J]) add(job J, table tableUse) {
	q.mu.Lock()
	q.waiting = append(q.waiting, queued[J]{job, table})
	q.mu.Unlock()
	q.ready.Signal()
}

// close says no job is added any more: take returns false once the queue is empty.
func (q *curveQueue[J]) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.ready.Broadcast()
}

// take waits for a job and returns it, marking its table in use until done; false
// once the queue is closed and empty.
func (q *curveQueue[J]) take() (J, tableUse, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.waiting) == 0 && !q.closed {
		q.ready.Wait()
	}
	if len(q.waiting) == 0 {
		var none J
		return none, tableUse{}, false
	}
	at := 0
	for i := range q.waiting {
		if q.busy[q.waiting[i].table] == 0 {
			at = i
			break
		}
	}
	w := q.waiting[at]
	q.waiting = append(q.waiting[:at], q.waiting[at+1:]...)
	q.busy[w.table]++
	return w.job, w.table, true
}

// done says a worker has predicted the curve of a job that read table.
func (q *curveQueue[J]) done(table tableUse) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.busy[table]--; q.busy[table] <= 0 {
		delete(q.busy, table)
	}
}

// tableOf is the step table that model × target i's curve reads, as far as the query
// tells before its request is made (curveQueue keeps the curves of one table apart).
func (p *queryPlan) tableOf(i int) tableUse {
	t := p.q.Targets[i%len(p.q.Targets)]
	return tableUse{i / len(p.q.Targets), p.e.predictorFor(t), t.GPU.ID, t.DeviceKey}
}

// curvesAhead is how many curves StreamCurves predicts ahead of the one it waits to
// use, per worker: enough for a worker to find a curve of another table while a large
// table is filled, few enough that their output text stays a few megabytes.
const curvesAhead = 8
