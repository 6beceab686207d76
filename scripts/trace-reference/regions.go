package main

import (
	"cmp"
	"io"
	"slices"
	"strings"

	"golang.org/x/exp/trace"
)

// Per-goroutine, per-region and per-task execution statistics: the figures `go tool trace` shows on
// its goroutine, region and task pages, computed here from golang.org/x/exp/trace's events by the
// rules of that tool's summary (a state's time is counted from the transition into it to the one out
// of it; a goroutine first seen in a generation counts from that generation's sync; a region's figures
// are its goroutine's between the region's begin and end). stagediff's request analysis
// (server/src/ingest/trace/regions.ts) must give the same numbers.

type execStats struct {
	TotalNanos        int64            `json:"totalNanos"`
	ExecNanos         int64            `json:"execNanos"`
	SchedWaitNanos    int64            `json:"schedWaitNanos"`
	SyscallNanos      int64            `json:"syscallNanos"`
	SyscallBlockNanos int64            `json:"syscallBlockNanos"`
	BlockNanos        map[string]int64 `json:"blockNanos"`
	RangeNanos        map[string]int64 `json:"rangeNanos"`
}

func newStats() execStats {
	return execStats{BlockNanos: map[string]int64{}, RangeNanos: map[string]int64{}}
}

func (s execStats) copy() execStats {
	c := s
	c.BlockNanos = map[string]int64{}
	for k, v := range s.BlockNanos {
		c.BlockNanos[k] = v
	}
	c.RangeNanos = map[string]int64{}
	for k, v := range s.RangeNanos {
		c.RangeNanos[k] = v
	}
	return c
}

// minus is s − o, keeping only the keys of s (as go tool trace does).
func (s execStats) minus(o execStats) execStats {
	c := s.copy()
	c.TotalNanos -= o.TotalNanos
	c.ExecNanos -= o.ExecNanos
	c.SchedWaitNanos -= o.SchedWaitNanos
	c.SyscallNanos -= o.SyscallNanos
	c.SyscallBlockNanos -= o.SyscallBlockNanos
	for k := range c.BlockNanos {
		c.BlockNanos[k] -= o.BlockNanos[k]
	}
	for k := range c.RangeNanos {
		c.RangeNanos[k] -= o.RangeNanos[k]
	}
	return c
}

type regionOut struct {
	Goroutine  int64     `json:"goroutine"`
	Task       int64     `json:"task"`
	Name       string    `json:"name"`
	StartNanos *int64    `json:"startNanos"`
	EndNanos   *int64    `json:"endNanos"`
	Stats      execStats `json:"stats"`
}

type taskOut struct {
	ID         int64   `json:"id"`
	Name       string  `json:"name"`
	Parent     int64   `json:"parent"`
	StartNanos *int64  `json:"startNanos"`
	EndNanos   *int64  `json:"endNanos"`
	Goroutines []int64 `json:"goroutines"`
	Regions    int     `json:"regions"`
	Logs       int     `json:"logs"`
	// The statistics of the goroutine that began the task, from its begin to its end, when both
	// happened on that goroutine (a request handled on one goroutine); else null.
	Own *execStats `json:"own"`
}

type goroutineOut struct {
	ID    int64     `json:"id"`
	Name  string    `json:"name"`
	Stats execStats `json:"stats"`
}

type regionsJSON struct {
	Goroutines []goroutineOut `json:"goroutines"`
	Tasks      []taskOut      `json:"tasks"`
	Regions    []regionOut    `json:"regions"`
}

type openRegion struct {
	out  regionOut
	base execStats
}

type gstate struct {
	id        trace.GoID
	name      string
	created   trace.Time
	stats     execStats
	done      bool
	runSince  trace.Time
	rdySince  trace.Time
	blkSince  trace.Time
	blkReason string
	sysSince  trace.Time
	sysBlock  trace.Time
	ranges    map[string]trace.Time
	open      []*openRegion
	regions   []regionOut
}

type taskState struct {
	out       taskOut
	gs        map[trace.GoID]bool
	beganOn   trace.GoID
	beganWith *execStats
}

type regionSummarizer struct {
	first, last, sync trace.Time
	seen              bool
	gs                map[trace.GoID]*gstate
	tasks             map[trace.TaskID]*taskState
	sysP              map[trace.ProcID]trace.GoID
	sysG              map[trace.GoID]trace.ProcID
	rangeP            map[string]trace.GoID
}

func (s *regionSummarizer) rel(t trace.Time) *int64 {
	v := int64(t - s.first)
	return &v
}

// snapshot is g's statistics as of time t, counting the states it is in up to t.
func (s *regionSummarizer) snapshot(g *gstate, t trace.Time) execStats {
	c := g.stats.copy()
	if g.done {
		return c
	}
	if c.TotalNanos == 0 {
		c.TotalNanos = int64(t - g.created)
	}
	if g.runSince != 0 {
		c.ExecNanos += int64(t - g.runSince)
	}
	if g.rdySince != 0 {
		c.SchedWaitNanos += int64(t - g.rdySince)
	}
	if g.blkSince != 0 {
		c.BlockNanos[g.blkReason] += int64(t - g.blkSince)
	}
	if g.sysSince != 0 {
		c.SyscallNanos += int64(t - g.sysSince)
	}
	if g.sysBlock != 0 {
		// as go tool trace does: a syscall still blocked at the snapshot counts as scheduler wait
		c.SchedWaitNanos += int64(t - g.sysBlock)
	}
	for name, since := range g.ranges {
		c.RangeNanos[name] += int64(t - since)
	}
	return c
}

func isSystem(fn string) bool {
	return fn == "" || fn != "runtime.main" && strings.HasPrefix(fn, "runtime.")
}

func (s *regionSummarizer) finalize(g *gstate, t trace.Time, end *trace.Event) {
	final := s.snapshot(g, t)
	g.stats = final
	if !isSystem(g.name) {
		for _, r := range g.open {
			r.out.Stats = final.minus(r.base)
			if end != nil {
				r.out.EndNanos = s.rel(end.Time())
			}
			g.regions = append(g.regions, r.out)
		}
	}
	g.open = nil
	g.runSince, g.rdySince, g.blkSince, g.sysSince, g.sysBlock = 0, 0, 0, 0, 0
	g.blkReason = ""
	g.ranges = map[string]trace.Time{}
	g.done = true
}

func (s *regionSummarizer) task(id trace.TaskID) *taskState {
	t := s.tasks[id]
	if t == nil {
		t = &taskState{out: taskOut{ID: int64(id), Parent: -1}, gs: map[trace.GoID]bool{}}
		s.tasks[id] = t
	}
	return t
}

func (s *regionSummarizer) event(ev *trace.Event) {
	if !s.seen {
		s.seen = true
		s.first = ev.Time()
		s.sync = ev.Time()
	}
	s.last = ev.Time()
	switch ev.Kind() {
	case trace.EventSync:
		s.sync = ev.Time()
	case trace.EventStateTransition:
		st := ev.StateTransition()
		switch st.Resource.Kind {
		case trace.ResourceGoroutine:
			s.goTransition(ev, st)
		case trace.ResourceProc:
			from, to := st.Proc()
			if from != to && to == trace.ProcIdle {
				if id, ok := s.sysP[st.Resource.Proc()]; ok {
					s.gs[id].sysBlock = ev.Time()
					delete(s.sysP, st.Resource.Proc())
				}
			}
		}
	case trace.EventRangeBegin, trace.EventRangeActive:
		r := ev.Range()
		var g *gstate
		switch r.Scope.Kind {
		case trace.ResourceGoroutine:
			g = s.gs[r.Scope.Goroutine()]
		case trace.ResourceProc:
			g = s.gs[ev.Goroutine()]
			if g != nil {
				s.rangeP[procRangeKey(r.Scope.Proc(), r.Name)] = ev.Goroutine()
			}
		}
		if g == nil {
			return
		}
		if ev.Kind() == trace.EventRangeActive {
			if since := g.ranges[r.Name]; since != 0 {
				g.stats.RangeNanos[r.Name] += int64(s.sync - since)
			}
			g.ranges[r.Name] = s.sync
		} else {
			g.ranges[r.Name] = ev.Time()
		}
	case trace.EventRangeEnd:
		r := ev.Range()
		var g *gstate
		switch r.Scope.Kind {
		case trace.ResourceGoroutine:
			g = s.gs[r.Scope.Goroutine()]
		case trace.ResourceProc:
			k := procRangeKey(r.Scope.Proc(), r.Name)
			if id, ok := s.rangeP[k]; ok {
				if id == ev.Goroutine() {
					g = s.gs[id]
				}
				delete(s.rangeP, k)
			}
		}
		if g == nil {
			return
		}
		if since := g.ranges[r.Name]; since != 0 {
			g.stats.RangeNanos[r.Name] += int64(ev.Time() - since)
			delete(g.ranges, r.Name)
		}
	case trace.EventRegionBegin:
		g := s.gs[ev.Goroutine()]
		r := ev.Region()
		or := &openRegion{
			out:  regionOut{Goroutine: int64(g.id), Task: int64(r.Task), Name: r.Type, StartNanos: s.rel(ev.Time())},
			base: s.snapshot(g, ev.Time()),
		}
		g.open = append(g.open, or)
		t := s.task(r.Task)
		t.out.Regions++
		t.gs[g.id] = true
	case trace.EventRegionEnd:
		g := s.gs[ev.Goroutine()]
		r := ev.Region()
		var or *openRegion
		if n := len(g.open); n > 0 {
			or = g.open[n-1]
			g.open = g.open[:n-1]
		} else {
			or = &openRegion{out: regionOut{Goroutine: int64(g.id), Task: int64(r.Task), Name: r.Type}, base: newStats()}
			t := s.task(r.Task)
			t.out.Regions++
			t.gs[g.id] = true
		}
		or.out.Stats = s.snapshot(g, ev.Time()).minus(or.base)
		or.out.EndNanos = s.rel(ev.Time())
		g.regions = append(g.regions, or.out)
	case trace.EventTaskBegin, trace.EventTaskEnd:
		tk := ev.Task()
		t := s.task(tk.ID)
		t.out.Name = tk.Type
		t.gs[ev.Goroutine()] = true
		g := s.gs[ev.Goroutine()]
		if ev.Kind() == trace.EventTaskBegin {
			t.out.StartNanos = s.rel(ev.Time())
			if g != nil {
				snap := s.snapshot(g, ev.Time())
				t.beganOn = g.id
				t.beganWith = &snap
			}
		} else {
			t.out.EndNanos = s.rel(ev.Time())
			if g != nil && t.beganWith != nil && t.beganOn == g.id {
				own := s.snapshot(g, ev.Time()).minus(*t.beganWith)
				t.out.Own = &own
			}
		}
		if tk.Parent != trace.NoTask && t.out.Parent < 0 {
			t.out.Parent = int64(tk.Parent)
			s.task(tk.Parent)
		}
	case trace.EventLog:
		t := s.task(ev.Log().Task)
		t.gs[ev.Goroutine()] = true
		t.out.Logs++
	}
}

func procRangeKey(p trace.ProcID, name string) string {
	return string(rune(0)) + name + "@" + string(rune(p+1))
}

func (s *regionSummarizer) goTransition(ev *trace.Event, st trace.StateTransition) {
	id := st.Resource.Goroutine()
	from, to := st.Goroutine()
	if from == to {
		return
	}
	g := s.gs[id]
	switch from {
	case trace.GoUndetermined:
		g = &gstate{id: id, created: s.sync, stats: newStats(), ranges: map[string]trace.Time{}}
		d := int64(ev.Time() - s.sync)
		switch to {
		case trace.GoRunning:
			g.stats.ExecNanos += d
		case trace.GoWaiting:
			g.stats.BlockNanos[st.Reason] += d
		case trace.GoRunnable:
			g.stats.SchedWaitNanos += d
		case trace.GoSyscall:
			if ev.Proc() == trace.NoProc {
				g.stats.SyscallBlockNanos += d
			} else {
				g.stats.SyscallNanos += d
			}
		}
		s.gs[id] = g
	case trace.GoNotExist:
		g = &gstate{id: id, created: ev.Time(), stats: newStats(), ranges: map[string]trace.Time{}}
		// A goroutine created inside a region carries its creator's task, as an unnamed region
		// spanning its life.
		if c := s.gs[ev.Goroutine()]; c != nil && len(c.open) > 0 {
			top := c.open[len(c.open)-1]
			g.open = []*openRegion{{
				out:  regionOut{Goroutine: int64(id), Task: top.out.Task, StartNanos: s.rel(ev.Time())},
				base: newStats(),
			}}
		}
		s.gs[id] = g
	case trace.GoRunning:
		g.stats.ExecNanos += int64(ev.Time() - g.runSince)
		g.runSince = 0
	case trace.GoWaiting:
		if g.blkSince != 0 {
			g.stats.BlockNanos[g.blkReason] += int64(ev.Time() - g.blkSince)
			g.blkSince = 0
		}
	case trace.GoRunnable:
		if g.rdySince != 0 {
			g.stats.SchedWaitNanos += int64(ev.Time() - g.rdySince)
			g.rdySince = 0
		}
	case trace.GoSyscall:
		if g.sysSince != 0 {
			if g.sysBlock != 0 {
				g.stats.SyscallBlockNanos += int64(ev.Time() - g.sysBlock)
				g.stats.SyscallNanos += int64(g.sysBlock - g.sysSince)
			} else {
				g.stats.SyscallNanos += int64(ev.Time() - g.sysSince)
			}
			g.sysSince, g.sysBlock = 0, 0
			delete(s.sysP, s.sysG[id])
			delete(s.sysG, id)
		}
	}
	if g.name == "" {
		for f := range st.Stack.Frames() {
			g.name = f.Func // the last (root) frame names the goroutine
		}
	}
	switch to {
	case trace.GoRunning:
		g.runSince = ev.Time()
	case trace.GoRunnable:
		g.rdySince = ev.Time()
	case trace.GoWaiting:
		if st.Reason != "forever" {
			g.blkSince = ev.Time()
			g.blkReason = st.Reason
			break
		}
		s.finalize(g, ev.Time(), ev)
	case trace.GoNotExist:
		s.finalize(g, ev.Time(), ev)
	case trace.GoSyscall:
		s.sysP[ev.Proc()] = id
		s.sysG[id] = ev.Proc()
		g.sysSince = ev.Time()
	}
}

func summarizeRegions(r io.Reader) (*regionsJSON, error) {
	tr, err := trace.NewReader(r)
	if err != nil {
		return nil, err
	}
	s := &regionSummarizer{
		gs:     map[trace.GoID]*gstate{},
		tasks:  map[trace.TaskID]*taskState{},
		sysP:   map[trace.ProcID]trace.GoID{},
		sysG:   map[trace.GoID]trace.ProcID{},
		rangeP: map[string]trace.GoID{},
	}
	for {
		ev, err := tr.ReadEvent()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		s.event(&ev)
	}
	out := &regionsJSON{Goroutines: []goroutineOut{}, Tasks: []taskOut{}, Regions: []regionOut{}}
	ids := make([]trace.GoID, 0, len(s.gs))
	for id := range s.gs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	for _, id := range ids {
		g := s.gs[id]
		if !g.done {
			s.finalize(g, s.last, nil)
		}
		slices.SortStableFunc(g.regions, func(a, b regionOut) int {
			if a.StartNanos == nil || b.StartNanos == nil {
				return cmp.Compare(boolInt(a.StartNanos != nil), boolInt(b.StartNanos != nil))
			}
			return cmp.Compare(*a.StartNanos, *b.StartNanos)
		})
		out.Goroutines = append(out.Goroutines, goroutineOut{ID: int64(id), Name: g.name, Stats: g.stats})
		out.Regions = append(out.Regions, g.regions...)
	}
	tids := make([]trace.TaskID, 0, len(s.tasks))
	for id := range s.tasks {
		tids = append(tids, id)
	}
	slices.Sort(tids)
	for _, id := range tids {
		t := s.tasks[id]
		for g := range t.gs {
			if g != trace.NoGoroutine {
				t.out.Goroutines = append(t.out.Goroutines, int64(g))
			}
		}
		slices.Sort(t.out.Goroutines)
		if t.out.Goroutines == nil {
			t.out.Goroutines = []int64{}
		}
		out.Tasks = append(out.Tasks, t.out)
	}
	return out, nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
