package predictor

// issueSim runs compose's issue simulation over a plan's batches without testing, at
// every batch and every launch, whether the GPU waits for the host: once the GPU is
// busy past the host's last issue time of the phase (before or after the script's
// sync), no later kernel of that phase starts at its issue time, and its end is the
// GPU's end plus its time. Those batches, a suffix of the plan's mostly (a larger
// batch's kernels take longer), are only added to; the figures are compose's own to
// the bit, as the same additions in the same order.
type issueSim struct {
	p      *stepPlan
	lo, hi int
	// free is the first batch index from which on every batch's GPU end is at or past
	// the phase's last issue time (hostMax, plus the batch's wait at the sync in the
	// second phase): those batches never wait for the host again in the phase.
	free    int
	hostMax float64
	// nonNegative is, per timing, 1 where its time is at least 0 at every batch (the
	// GPU's end only grows), -1 where not, 0 not yet known.
	nonNegative []int8
}

// newIssueSim prepares the issue simulation of p's batches lo:hi, whose host issues
// its kernels at hostAt (the host's time after each launch of p.seq).
func newIssueSim(p *stepPlan, lo, hi int) *issueSim {
	s := &issueSim{p: p, lo: lo, hi: hi, free: hi - lo, nonNegative: make([]int8, len(p.ms))}
	s.hostMax = s.lastIssue(0)
	return s
}

// lastIssue is the latest host time of the launches from seq index from to the sync
// (or the end), the host's time summed as compose sums it.
func (s *issueSim) lastIssue(from int) float64 {
	hostMS, last := 0.0, 0.0
	for j, k := range s.p.seq {
		hostMS += k.issueUS / 1000
		if j < from {
			continue
		}
		if j >= s.p.syncAt && from < s.p.syncAt && s.p.syncAt >= 0 {
			break
		}
		last = max(last, hostMS)
	}
	return last
}

// nonNeg reports whether timing ti is at least 0 at every batch of the simulation.
func (s *issueSim) nonNeg(ti int) bool {
	if s.nonNegative[ti] == 0 {
		s.nonNegative[ti] = 1
		for _, t := range s.p.ms[ti][s.lo:s.hi] {
			if !(t >= 0) {
				s.nonNegative[ti] = -1
				break
			}
		}
	}
	return s.nonNegative[ti] > 0
}

// sync starts the second phase, after the script's sync at seq index at: the host
// waited[i] for the GPU there.
func (s *issueSim) sync(at int, gpuEnd, waited []float64) {
	s.hostMax = s.lastIssue(at)
	s.free = len(gpuEnd)
	s.settle(gpuEnd, waited)
}

// kernel issues timing ti at host time hostMS (plus waited[i] at batch i after the
// sync; nil before it): the GPU starts it at batch i when both it is issued and the
// kernel before has ended.
func (s *issueSim) kernel(ti int, gpuEnd, waited []float64, hostMS float64) {
	ms := s.p.ms[ti][s.lo:s.hi]
	gpuEnd = gpuEnd[:len(ms)]
	free := min(s.free, len(ms))
	if waited == nil {
		for i, t := range ms[:free] {
			end := gpuEnd[i]
			if end < hostMS {
				end = hostMS // the GPU waits for the host to issue this kernel
			}
			gpuEnd[i] = end + t
		}
	} else {
		w := waited[:free]
		for i, t := range ms[:free] {
			end := gpuEnd[i]
			if h := hostMS + w[i]; end < h {
				end = h
			}
			gpuEnd[i] = end + t
		}
	}
	addEach(gpuEnd[free:], ms[free:])
	if !s.nonNeg(ti) {
		s.free = len(gpuEnd) // a negative time: the GPU's end may fall back
	}
	s.settle(gpuEnd, waited)
}

// settle moves free down over the batches whose GPU end is now at or past the
// phase's last issue time.
func (s *issueSim) settle(gpuEnd, waited []float64) {
	for s.free > 0 {
		i := s.free - 1
		h := s.hostMax
		if waited != nil {
			h += waited[i]
		}
		if !(gpuEnd[i] >= h) {
			return
		}
		s.free = i
	}
}

// addEach adds ms[i] to end[i], four at a time.
func addEach(end, ms []float64) {
	end = end[:len(ms)]
	i := 0
	for ; i+4 <= len(ms); i += 4 {
		e, m := end[i:i+4:i+4], ms[i:i+4:i+4]
		e[0], e[1], e[2], e[3] = e[0]+m[0], e[1]+m[1], e[2]+m[2], e[3]+m[3]
	}
	for ; i < len(ms); i++ {
		end[i] += ms[i]
	}
}
