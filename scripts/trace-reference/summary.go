package main

import (
	"cmp"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"golang.org/x/exp/trace"
)

// The per-trace summary, computed from golang.org/x/exp/trace's events by the rules stagediff
// documents for its TraceSummary (server/src/model/trace.ts). Field names and units are the same,
// so the two JSON documents can be compared figure by figure.

type spanTotals struct {
	Count      int   `json:"count"`
	TotalNanos int64 `json:"totalNanos"`
}

type durationsJSON struct {
	Count      int     `json:"count"`
	TotalNanos int64   `json:"totalNanos"`
	MeanNanos  float64 `json:"meanNanos"`
	P50Nanos   int64   `json:"p50Nanos"`
	P90Nanos   int64   `json:"p90Nanos"`
	P99Nanos   int64   `json:"p99Nanos"`
	MaxNanos   int64   `json:"maxNanos"`
}

type blockReason struct {
	Reason     string `json:"reason"`
	Category   string `json:"category"`
	Count      int    `json:"count"`
	TotalNanos int64  `json:"totalNanos"`
}

type stwKind struct {
	Kind       string `json:"kind"`
	Count      int    `json:"count"`
	TotalNanos int64  `json:"totalNanos"`
	MaxNanos   int64  `json:"maxNanos"`
}

type entryFunction struct {
	Name          string        `json:"name"`
	Goroutines    int           `json:"goroutines"`
	Created       int           `json:"created"`
	Lifetime      durationsJSON `json:"lifetime"`
	RunningNanos  int64         `json:"runningNanos"`
	RunnableNanos int64         `json:"runnableNanos"`
	BlockedNanos  int64         `json:"blockedNanos"`
	SyscallNanos  int64         `json:"syscallNanos"`
}

type bucketJSON struct {
	StartNanos int64    `json:"startNanos"`
	Running    float64  `json:"running"`
	Runnable   float64  `json:"runnable"`
	GCMark     float64  `json:"gcMark"`
	STWNanos   float64  `json:"stwNanos"`
	HeapBytes  *float64 `json:"heapBytes"`
}

type timeSpan struct {
	StartNanos int64  `json:"startNanos"`
	EndNanos   int64  `json:"endNanos"`
	Kind       string `json:"kind"`
}

type summaryJSON struct {
	GoVersion   string  `json:"goVersion"`
	SpanNanos   int64   `json:"spanNanos"`
	StartTime   *string `json:"startTime"`
	Generations int     `json:"generations"`
	Events      int     `json:"events"`
	Gomaxprocs  *uint64 `json:"gomaxprocs"`
	Incomplete  *string `json:"incomplete"`
	Goroutines  struct {
		AtStart  int `json:"atStart"`
		Created  int `json:"created"`
		Ended    int `json:"ended"`
		MaxAlive int `json:"maxAlive"`
	} `json:"goroutines"`
	SchedWait durationsJSON `json:"schedWait"`
	Blocked   struct {
		Channel  spanTotals    `json:"channel"`
		Select   spanTotals    `json:"select"`
		Sync     spanTotals    `json:"sync"`
		Network  spanTotals    `json:"network"`
		Sleep    spanTotals    `json:"sleep"`
		Other    spanTotals    `json:"other"`
		ByReason []blockReason `json:"byReason"`
	} `json:"blocked"`
	Syscall spanTotals `json:"syscall"`
	GC      struct {
		Cycles    int   `json:"cycles"`
		MarkNanos int64 `json:"markNanos"`
		STW       struct {
			durationsJSON
			ByKind []stwKind `json:"byKind"`
		} `json:"stw"`
		Assist spanTotals `json:"assist"`
	} `json:"gc"`
	EntryFunctions struct {
		Functions []entryFunction `json:"functions"`
		Omitted   int             `json:"omitted"`
	} `json:"entryFunctions"`
	Timeline struct {
		BucketNanos int64        `json:"bucketNanos"`
		Buckets     []bucketJSON `json:"buckets"`
		GCSpans     []timeSpan   `json:"gcSpans"`
		STWSpans    []timeSpan   `json:"stwSpans"`
		Truncated   bool         `json:"truncated"`
	} `json:"timeline"`
}

// goroutine is what the summary keeps of a live goroutine.
type goroutine struct {
	state     trace.GoState
	since     trace.Time
	observed  bool // the transition into the current state was seen
	reason    string
	name      string
	createdAt trace.Time
	created   bool
	byState   [4]int64 // running, runnable, blocked, syscall
}

type function struct {
	goroutines, created int
	lifetimes           []int64
	byState             [4]int64
}

type interval struct{ from, to trace.Time }

func stateIndex(s trace.GoState) int {
	switch s {
	case trace.GoRunning:
		return 0
	case trace.GoRunnable:
		return 1
	case trace.GoWaiting:
		return 2
	case trace.GoSyscall:
		return 3
	}
	return -1
}

func category(reason string) string {
	switch {
	case strings.Contains(reason, "chan"):
		return "channel"
	case strings.Contains(reason, "select"):
		return "select"
	case strings.Contains(reason, "sync"):
		return "sync"
	case reason == "network":
		return "network"
	case reason == "sleep":
		return "sleep"
	}
	return "other"
}

// nearestRank is the ⌈p/100·n⌉-th smallest of sorted values (0 for none).
func nearestRank(sorted []int64, p float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	r := int(math.Ceil(p * float64(len(sorted)) / 100))
	r = max(1, min(r, len(sorted)))
	return sorted[r-1]
}

func distribution(values []int64) durationsJSON {
	s := slices.Clone(values)
	slices.Sort(s)
	var total int64
	for _, v := range s {
		total += v
	}
	d := durationsJSON{Count: len(s), TotalNanos: total}
	if len(s) > 0 {
		d.MeanNanos = float64(total) / float64(len(s))
		d.P50Nanos = nearestRank(s, 50)
		d.P90Nanos = nearestRank(s, 90)
		d.P99Nanos = nearestRank(s, 99)
		d.MaxNanos = s[len(s)-1]
	}
	return d
}

type summarizer struct {
	gs        map[trace.GoID]*goroutine
	fns       map[string]*function
	out       summaryJSON
	schedWait []int64
	blocked   map[string]*spanTotals
	stw       []int64
	stwKinds  map[string]*stwKind
	stwOpen   map[trace.GoID]struct {
		at   trace.Time
		kind string
	}
	assistOpen map[trace.GoID]trace.Time
	markOpen   *trace.Time
	marks      []interval
	stws       []interval
	stwNames   []string
	// running/runnable counts over time: (time, running, runnable) at each change
	changes []struct {
		at                trace.Time
		running, runnable int
	}
	running, runnable int
	heap              []struct {
		at    trace.Time
		bytes uint64
	}
	first, last trace.Time
	clock       *trace.ClockSnapshot
}

func summarize(r io.Reader, goVersion string) (*summaryJSON, error) {
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, err
	}
	s := &summarizer{
		gs:       map[trace.GoID]*goroutine{},
		fns:      map[string]*function{},
		blocked:  map[string]*spanTotals{},
		stwKinds: map[string]*stwKind{},
		stwOpen: map[trace.GoID]struct {
			at   trace.Time
			kind string
		}{},
		assistOpen: map[trace.GoID]trace.Time{},
	}
	n := 0
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		if n == 0 {
			s.first = ev.Time()
		}
		n++
		s.last = ev.Time()
		s.event(&ev)
	}
	s.out.Events = n
	s.out.GoVersion = goVersion
	s.finish()
	return &s.out, nil
}

func (s *summarizer) event(ev *trace.Event) {
	switch ev.Kind() {
	case trace.EventSync:
		if s.clock == nil && ev.Sync().ClockSnapshot != nil {
			s.clock = ev.Sync().ClockSnapshot
		}
		s.out.Generations++ // one Sync per generation, and a last one that closes the trace (see finish)
	case trace.EventStateTransition:
		st := ev.StateTransition()
		if st.Resource.Kind == trace.ResourceGoroutine {
			s.transition(ev, st)
		}
	case trace.EventMetric:
		m := ev.Metric()
		switch m.Name {
		case "/memory/classes/heap/objects:bytes":
			s.heap = append(s.heap, struct {
				at    trace.Time
				bytes uint64
			}{ev.Time(), m.Value.Uint64()})
		case "/sched/gomaxprocs:threads":
			v := m.Value.Uint64()
			s.out.Gomaxprocs = &v
		}
	case trace.EventRangeBegin, trace.EventRangeActive, trace.EventRangeEnd:
		s.rangeEvent(ev)
	}
}

func (s *summarizer) countChange(at trace.Time, from, to trace.GoState) {
	before := [2]int{s.running, s.runnable}
	switch from {
	case trace.GoRunning:
		s.running--
	case trace.GoRunnable:
		s.runnable--
	}
	switch to {
	case trace.GoRunning:
		s.running++
	case trace.GoRunnable:
		s.runnable++
	}
	if before != [2]int{s.running, s.runnable} {
		s.changes = append(s.changes, struct {
			at                trace.Time
			running, runnable int
		}{at, s.running, s.runnable})
	}
}

func (s *summarizer) transition(ev *trace.Event, st trace.StateTransition) {
	from, to := st.Goroutine()
	if from == to {
		return
	}
	id := st.Resource.Goroutine()
	t := ev.Time()
	g := s.gs[id]
	if from == trace.GoUndetermined || from == trace.GoNotExist || g == nil {
		if g != nil {
			s.retire(g)
		}
		g = &goroutine{state: from}
		s.gs[id] = g
		if from == trace.GoNotExist {
			s.out.Goroutines.Created++
			g.created = true
			g.createdAt = t
		} else {
			s.out.Goroutines.AtStart++
		}
		s.out.Goroutines.MaxAlive = max(s.out.Goroutines.MaxAlive, len(s.gs))
	} else {
		d := int64(t - g.since)
		if i := stateIndex(g.state); i >= 0 {
			g.byState[i] += d
		}
		if g.observed {
			switch {
			case g.state == trace.GoRunnable && to == trace.GoRunning:
				s.schedWait = append(s.schedWait, d)
			case g.state == trace.GoWaiting:
				s.addBlocked(g.reason, d)
			case g.state == trace.GoSyscall:
				s.out.Syscall.Count++
				s.out.Syscall.TotalNanos += d
			}
		}
	}
	s.countChange(t, from, to)
	if g.name == "" {
		var root string
		seen := false
		for f := range st.Stack.Frames() {
			root = f.Func
			seen = true
		}
		if seen {
			g.name = root
		}
	}
	g.state = to
	g.since = t
	g.observed = from != trace.GoUndetermined
	g.reason = ""
	if to == trace.GoWaiting {
		g.reason = st.Reason
	}
	if to == trace.GoNotExist {
		s.out.Goroutines.Ended++
		fn := s.retire(g)
		if g.created {
			fn.lifetimes = append(fn.lifetimes, int64(t-g.createdAt))
		}
		delete(s.gs, id)
	}
}

func (s *summarizer) addBlocked(reason string, d int64) {
	b := s.blocked[reason]
	if b == nil {
		b = &spanTotals{}
		s.blocked[reason] = b
	}
	b.Count++
	b.TotalNanos += d
}

func (s *summarizer) retire(g *goroutine) *function {
	fn := s.fns[g.name]
	if fn == nil {
		fn = &function{}
		s.fns[g.name] = fn
	}
	fn.goroutines++
	if g.created {
		fn.created++
	}
	for i := range fn.byState {
		fn.byState[i] += g.byState[i]
	}
	return fn
}

func (s *summarizer) rangeEvent(ev *trace.Event) {
	r := ev.Range()
	t := ev.Time()
	switch {
	case r.Name == "GC concurrent mark phase":
		switch ev.Kind() {
		case trace.EventRangeBegin:
			s.out.GC.Cycles++
			s.markOpen = &t
		case trace.EventRangeActive:
			if s.markOpen == nil {
				s.markOpen = &t
			}
		case trace.EventRangeEnd:
			if s.markOpen != nil {
				s.out.GC.MarkNanos += int64(t - *s.markOpen)
				s.marks = append(s.marks, interval{*s.markOpen, t})
				s.markOpen = nil
			}
		}
	case r.Name == "GC mark assist":
		id := r.Scope.Goroutine()
		if ev.Kind() == trace.EventRangeEnd {
			if from, ok := s.assistOpen[id]; ok {
				s.out.GC.Assist.Count++
				s.out.GC.Assist.TotalNanos += int64(t - from)
				delete(s.assistOpen, id)
			}
		} else if _, ok := s.assistOpen[id]; !ok {
			s.assistOpen[id] = t
		}
	case strings.HasPrefix(r.Name, "stop-the-world ("):
		id := ev.Goroutine()
		switch ev.Kind() {
		case trace.EventRangeBegin:
			s.stwOpen[id] = struct {
				at   trace.Time
				kind string
			}{t, strings.TrimSuffix(strings.TrimPrefix(r.Name, "stop-the-world ("), ")")}
		case trace.EventRangeEnd:
			if open, ok := s.stwOpen[id]; ok {
				s.addSTW(open.kind, open.at, t)
				delete(s.stwOpen, id)
			}
		}
	}
}

func (s *summarizer) addSTW(kind string, from, to trace.Time) {
	d := int64(to - from)
	s.stw = append(s.stw, d)
	k := s.stwKinds[kind]
	if k == nil {
		k = &stwKind{Kind: kind}
		s.stwKinds[kind] = k
	}
	k.Count++
	k.TotalNanos += d
	k.MaxNanos = max(k.MaxNanos, d)
	s.stws = append(s.stws, interval{from, to})
	s.stwNames = append(s.stwNames, kind)
}

func (s *summarizer) finish() {
	end := s.last
	s.out.Generations-- // the reader's last Sync closes the trace
	s.out.SpanNanos = int64(end - s.first)
	if s.clock != nil {
		wall := s.clock.Wall.Add(-time.Duration(s.clock.Trace - s.first))
		v := time.UnixMilli(int64(math.Round(float64(wall.UnixNano()) / 1e6))).UTC().Format("2006-01-02T15:04:05.000Z")
		s.out.StartTime = &v
	}
	for _, g := range s.gs {
		d := int64(end - g.since)
		if i := stateIndex(g.state); i >= 0 {
			g.byState[i] += d
		}
		if g.observed {
			switch g.state {
			case trace.GoWaiting:
				s.addBlocked(g.reason, d)
			case trace.GoSyscall:
				s.out.Syscall.Count++
				s.out.Syscall.TotalNanos += d
			}
		}
		s.retire(g)
	}
	if s.markOpen != nil {
		s.out.GC.MarkNanos += int64(end - *s.markOpen)
		s.marks = append(s.marks, interval{*s.markOpen, end})
	}
	for _, from := range s.assistOpen {
		s.out.GC.Assist.Count++
		s.out.GC.Assist.TotalNanos += int64(end - from)
	}
	for _, open := range s.stwOpen {
		s.addSTW(open.kind, open.at, end)
	}
	s.out.SchedWait = distribution(s.schedWait)

	b := &s.out.Blocked
	b.ByReason = []blockReason{}
	for reason, v := range s.blocked {
		c := category(reason)
		var tot *spanTotals
		switch c {
		case "channel":
			tot = &b.Channel
		case "select":
			tot = &b.Select
		case "sync":
			tot = &b.Sync
		case "network":
			tot = &b.Network
		case "sleep":
			tot = &b.Sleep
		default:
			tot = &b.Other
		}
		tot.Count += v.Count
		tot.TotalNanos += v.TotalNanos
		b.ByReason = append(b.ByReason, blockReason{reason, c, v.Count, v.TotalNanos})
	}
	slices.SortFunc(b.ByReason, func(x, y blockReason) int {
		return cmp.Or(cmp.Compare(y.TotalNanos, x.TotalNanos), strings.Compare(x.Reason, y.Reason))
	})

	s.out.GC.STW.durationsJSON = distribution(s.stw)
	s.out.GC.STW.ByKind = []stwKind{}
	for _, k := range s.stwKinds {
		s.out.GC.STW.ByKind = append(s.out.GC.STW.ByKind, *k)
	}
	slices.SortFunc(s.out.GC.STW.ByKind, func(x, y stwKind) int {
		return cmp.Or(cmp.Compare(y.TotalNanos, x.TotalNanos), strings.Compare(x.Kind, y.Kind))
	})

	fns := []entryFunction{}
	for name, f := range s.fns {
		fns = append(fns, entryFunction{
			Name: name, Goroutines: f.goroutines, Created: f.created, Lifetime: distribution(f.lifetimes),
			RunningNanos: f.byState[0], RunnableNanos: f.byState[1], BlockedNanos: f.byState[2], SyscallNanos: f.byState[3],
		})
	}
	slices.SortFunc(fns, func(x, y entryFunction) int {
		return cmp.Or(cmp.Compare(y.Goroutines, x.Goroutines), strings.Compare(x.Name, y.Name))
	})
	const maxFunctions = 100
	s.out.EntryFunctions.Omitted = max(0, len(fns)-maxFunctions)
	s.out.EntryFunctions.Functions = fns[:min(len(fns), maxFunctions)]
	s.timeline()
}

// bucketFor is the smallest of 1, 2, 5 × 10^k ms that cuts the span into at most 500 buckets.
func bucketFor(span int64) int64 {
	for unit := int64(1e6); ; unit *= 10 {
		for _, m := range []int64{1, 2, 5} {
			b := m * unit
			if (span+b-1)/b <= 500 {
				return b
			}
		}
	}
}

func (s *summarizer) timeline() {
	t0, end := s.first, s.last
	span := int64(end - t0)
	bucket := bucketFor(span)
	n := max(1, int((span+bucket-1)/bucket))
	run := make([]float64, n)
	rnb := make([]float64, n)
	mark := make([]float64, n)
	stw := make([]float64, n)
	heap := make([]*float64, n)
	// spread adds weight × the length of [from, to) to every bucket it covers.
	spread := func(acc []float64, from, to trace.Time, weight int) {
		if weight == 0 || to <= from {
			return
		}
		a, b := int64(from-t0), int64(to-t0)
		for i := min(n-1, int(a/bucket)); a < b && i < n; i++ {
			edge := b
			if i < n-1 {
				edge = min(b, int64(i+1)*bucket)
			}
			acc[i] += float64(edge-a) * float64(weight)
			a = edge
		}
	}
	prevT, prevRun, prevRnb := t0, 0, 0
	for _, c := range s.changes {
		spread(run, prevT, c.at, prevRun)
		spread(rnb, prevT, c.at, prevRnb)
		prevT, prevRun, prevRnb = c.at, c.running, c.runnable
	}
	spread(run, prevT, end, prevRun)
	spread(rnb, prevT, end, prevRnb)
	for _, m := range s.marks {
		spread(mark, m.from, m.to, 1)
	}
	for _, m := range s.stws {
		spread(stw, m.from, m.to, 1)
	}
	for _, h := range s.heap {
		i := min(n-1, int(int64(h.at-t0)/bucket))
		v := float64(h.bytes)
		if heap[i] == nil || v > *heap[i] {
			heap[i] = &v
		}
	}
	tl := &s.out.Timeline
	tl.BucketNanos = bucket
	tl.Buckets = make([]bucketJSON, n)
	for i := range n {
		width := bucket
		if i == n-1 {
			width = span - int64(i)*bucket
		}
		w := float64(max(width, 1))
		tl.Buckets[i] = bucketJSON{int64(i) * bucket, run[i] / w, rnb[i] / w, mark[i] / w, stw[i], heap[i]}
	}
	const maxSpans = 10000
	spans := func(list []interval, kinds []string) []timeSpan {
		out := []timeSpan{}
		for i, iv := range list {
			if len(out) == maxSpans {
				tl.Truncated = true
				break
			}
			out = append(out, timeSpan{int64(iv.from - t0), int64(iv.to - t0), kinds[i]})
		}
		return out
	}
	tl.GCSpans = spans(s.marks, make([]string, len(s.marks)))
	tl.STWSpans = spans(s.stws, s.stwNames)
}
